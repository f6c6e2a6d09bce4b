#!/usr/bin/env python3
"""Measures a cluster's recovery on 127.0.0.1 and the snapshots' cost.

    tools/recovery_measure.py build/actorrec [--batches 400] [--every 200] [--kill t] [--at 320]

Runs a three-member topology (a: sampler + oracle + coordinator, e: two
embedding shards, t: two trainers) with cluster.max_restarts = 3 three times:
without snapshots' cost (snapshot_every larger than the run), with
snapshot_every = --every, and with --every while the worker of --kill is
SIGKILLed after batch --at. Snapshots are in memory (no --checkpoint-dir),
replicated to the next member. Prints samples/s of each run and the snapshot
cost two ways: between the first two runs (noisy on a shared machine), and
within the run with snapshots alone: the extra time of the batch after each
snapshot over the run's median batch time, against the run's time. Then the
recovery's phases, from the logs and metrics.jsonl: detection (kill to the
coordinator naming the loss), restart (kill to the killed member's new worker
started: the agent's backoff included), rollback done (kill to the
"recovery" line: restart, rejoin and load), catch-up (the replayed batches,
from the recovery line), and batches replayed. Every process is stopped at
the end.
"""
import argparse
import datetime
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def topology(out, batches, every):
    members = ""
    for name, roles, extra in (("a", '"sampler", "oracle"', ""), ("e", '"embedding"', "embedding_shards = 2\n"),
                               ("t", '"trainer"', "trainers = 2\n")):
        members += (f'\n[[cluster.member]]\nname = "{name}"\naddress = "127.0.0.1"\nport = {free_port()}\n'
                    f"roles = [{roles}]\n{extra}")
    return f"""
[run]
name = "recovery"
output_dir = "{out}"
[model]
kind = "dlrm"
bottom_mlp = [64, 16]
top_mlp = [64, 1]
[dataset]
samples = {batches * 1024}
eval_samples = 4096
row_scale = 0.01
[training]
batch_size = 1024
eval_every = 0
[cluster]
secret = "a-measurement-secret-of-enough-length"
heartbeat_ms = 100
peer_timeout_ms = 3000
max_restarts = 3
restart_backoff_ms = 200
snapshot_every = {every}
{members}"""


def run(binary, batches, every, kill=None, at=0):
    d = tempfile.mkdtemp(prefix="actorrec-recovery-")
    cfg = os.path.join(d, "t.toml")
    with open(cfg, "w") as f:
        f.write(topology(os.path.join(d, "out"), batches, every))
    logs, procs = {}, {}
    for name in ("a", "e", "t"):
        logs[name] = os.path.join(d, name + ".log")
        procs[name] = subprocess.Popen([binary, "node", "-c", cfg, "--member", name], cwd=d,
                                       stdout=open(logs[name], "w"), stderr=subprocess.STDOUT)
    metrics = os.path.join(d, "out", "metrics.jsonl")
    killed_ms = None
    try:
        if kill:
            pid = None
            while pid is None:
                m = re.search(r"worker pid (\d+) started \(start 1\)", open(logs[kill]).read())
                pid = int(m.group(1)) if m else None
                time.sleep(0.01)
            while True:
                done = 0
                try:  # absent before the first batch, and replaced while a run starts
                    done = sum(1 for line in open(metrics) if line.startswith('{"event":"batch"'))
                except FileNotFoundError:
                    pass
                if done >= at:
                    break
                time.sleep(0.002)
            killed_ms = time.time() * 1000
            os.kill(pid, signal.SIGKILL)
        for p in procs.values():
            p.wait(timeout=600)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
    lines = [json.loads(line) for line in open(metrics)]
    summary = [x for x in lines if x.get("event") == "summary"][-1]
    result = {"dir": d, "codes": {n: p.returncode for n, p in procs.items()}, "summary": summary,
              "in_run": snapshot_cost_in_run(lines)}
    if kill:
        rec = [x for x in lines if x.get("event") == "recovery"][0]
        fail = [x for x in lines if x.get("event") == "failure"]
        after = lines[lines.index(rec) + 1:]
        first_batch = next(x for x in after if x.get("event") == "batch")
        restarted = None
        for line in open(logs[kill]):
            if "started (start 2)" in line:
                stamp = datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S.%f")
                restarted = stamp.timestamp() * 1000 - killed_ms
                break
        replayed = [x for x in after if x.get("event") == "batch"][:rec["batches_replayed"]]
        result.update({
            "restarted_ms": restarted,
            "catch_up_ms": replayed[-1]["elapsed_s"] * 1000 if replayed else 0,
            "detected_ms": fail[0]["unix_ms"] - killed_ms if fail else None,
            "rolled_back_ms": rec["unix_ms"] - killed_ms,
            "first_batch_ms": rec["unix_ms"] - killed_ms + first_batch["elapsed_s"] * 1000,
            "replayed": rec["batches_replayed"], "snapshot_batch": rec["snapshot_batch"],
        })
    return result


def snapshot_cost_in_run(lines):
    """The snapshots' share of one run's time: the batch after each
    checkpoint line takes longer than the run's median batch (the pause to
    drain the pipeline, write the snapshot and fill the pipeline again)."""
    gaps, after_snapshot, last, pending = [], [], 0.0, False
    for x in lines:
        if x.get("event") == "checkpoint":
            pending = True
        elif x.get("event") == "batch":
            gaps.append(x["elapsed_s"] - last)
            after_snapshot.append(pending)
            last, pending = x["elapsed_s"], False
    if not gaps:
        return None
    plain = sorted(g for g, a in zip(gaps, after_snapshot) if not a)
    median = plain[len(plain) // 2] if plain else 0.0
    extra = sum(max(0.0, g - median) for g, a in zip(gaps, after_snapshot) if a)
    written = sum(x["seconds"] for x in lines if x.get("event") == "checkpoint")
    snapshots = sum(1 for x in lines if x.get("event") == "checkpoint")
    return {"snapshots": snapshots, "extra_s": extra, "written_s": written, "run_s": last,
            "cost": extra / max(1e-9, last - extra)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--batches", type=int, default=400)
    ap.add_argument("--every", type=int, default=200)
    ap.add_argument("--kill", default="t")
    ap.add_argument("--at", type=int, default=320)
    a = ap.parse_args()
    a.binary = os.path.abspath(a.binary)
    base = run(a.binary, a.batches, 10 ** 9)
    snap = run(a.binary, a.batches, a.every)
    rec = run(a.binary, a.batches, a.every, a.kill, a.at)
    rate = lambda r: r["summary"]["samples_per_s"] if "samples_per_s" in r["summary"] else None
    for name, r in (("no snapshots", base), (f"snapshot every {a.every}", snap), ("with a kill", rec)):
        print(f"{name}: exit codes {r['codes']}, digest {r['summary'].get('parameter_digest')}, "
              f"samples/s {rate(r)}")
    if rate(base) and rate(snap):
        print(f"snapshot cost at every {a.every}, between the two runs: {100 * (1 - rate(snap) / rate(base)):.1f} % "
              f"of throughput")
    c = snap["in_run"]
    if c and c["snapshots"]:
        print(f"snapshot cost at every {a.every}, within the run: {c['snapshots']} snapshot(s) added "
              f"{c['extra_s']:.2f} s to {c['run_s']:.2f} s ({100 * c['cost']:.1f} % of throughput; writing them "
              f"took {c['written_s']:.2f} s)")
    print(f"kill of {a.kill}'s worker after batch {a.at}: detected {rec['detected_ms']} ms, restarted "
          f"{rec['restarted_ms']:.0f} ms, training again (rolled back) {rec['rolled_back_ms']:.0f} ms, first batch "
          f"done {rec['first_batch_ms']:.0f} ms after the kill; {rec['replayed']} batch(es) replayed from snapshot "
          f"{rec['snapshot_batch']} in {rec['catch_up_ms']:.0f} ms (catch-up)")


if __name__ == "__main__":
    sys.exit(main())
