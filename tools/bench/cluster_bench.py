#!/usr/bin/env python3
"""Cluster benchmark: every mode on the bandwidth-limited testbed, side by side.

Runs `actorrec node` on emulated hosts (tools/testbed/testbed.py, root
needed): host a holds the batch sampler and the oracle, host e the two
embedding shards, and each trainer rank a host of its own, every host's NIC
limited to the link rate. Per model, trainer count, link and mode it trains
the same generated Criteo-Kaggle-shaped batches and reads the coordinator's
metrics.jsonl: the steady-state time per iteration (after --warmup
iterations), its breakdown (waiting for rows, forward, backward, dense +
critical sync, the part of it behind delayed sync, optimizer: each phase the
largest among the trainers, so a fast trainer's wait in the sync for a slow
one shows up beside the slow one's compute and the phases can add up to more
than the iteration), and the embedding rows and bytes per iteration on the critical
path (critical sync) and in the background (delayed sync, prefetch,
write-back). It prints a table, writes cluster_bench.csv and draws the
breakdown in cluster_bench.svg under --out.

Then, with --bagpipe-rows, the oracle alone plans the first batches of
Bagpipe's own setting (8 trainers, batch 16384, the full Criteo Kaggle
cardinalities) for replicated, lrpp and lrpp_delayed (`actorrec plan`),
for the rows-per-iteration comparison with the paper.

  sudo tools/bench/cluster_bench.py --out runs/cluster_bench
  tools/bench/cluster_bench.py --quick        # a small run that checks the pipeline end to end
  tools/bench/cluster_bench.py --from-csv runs/cluster_bench/cluster_bench.csv   # table and plot again
  sudo tools/bench/cluster_bench.py --collectives tls,gloo ...   # the trainers' sums over TLS and over Gloo, alternated

The testbed limits each host's link, not its processor: on a small machine
every member shares the same cores, and the times show that too.
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "testbed"))
import testbed  # noqa: E402

MODES = ["ideal", "no_cache", "static_hot", "replicated", "lrpp", "lrpp_delayed"]
PHASES = [("fetch_s", "wait rows"), ("forward_s", "forward"), ("backward_s", "backward"),
          ("dense_sync_s", "dense+critical sync"), ("optimizer_s", "optimizer")]
MODELS = {
    # The Criteo Kaggle reference shape of the DLRM paper.
    "dlrm": 'kind = "dlrm"\nembedding_dim = 16\nbottom_mlp = [512, 256, 64, 16]\ntop_mlp = [512, 256, 1]\n',
    # DeepFM's paper: three hidden layers of 400.
    "deepfm": 'kind = "deepfm"\nembedding_dim = 16\ndeep_mlp = [400, 400, 400, 1]\n',
}
SECRET = "cluster-bench-secret-on-the-testbed-only"


def ms_key(seconds_key):
    """'forward_s' -> 'forward_ms'."""
    return seconds_key[:-2] + "_ms"


def topology(out_dir, model, mode, trainers, batch, batches, row_scale, cache_rows, collective="tls"):
    text = f"""# Written by tools/bench/cluster_bench.py for one run on the testbed.
[run]
name = "bench"
output_dir = "{out_dir}"

[model]
{MODELS[model]}
[optimizer]
dense = "adam"
sparse = "adagrad"

[dataset]
source = "generated"
preset = "criteo-kaggle"
samples = {batch * batches}
eval_samples = 0
row_scale = {row_scale}

[training]
mode = "{mode}"
batch_size = {batch}
cache_rows = {cache_rows}

[cluster]
secret = "{SECRET}"
heartbeat_ms = 200
peer_timeout_ms = 10000
join_timeout_ms = 60000
collective = "{collective}"
"""

    text += testbed.member_toml("a", "198.18.0.10", '"sampler", "oracle"')
    text += testbed.member_toml("e", "198.18.0.11", '"embedding"', "embedding_shards = 2\n")
    for w in range(trainers):
        text += testbed.member_toml(f"t{w}", f"198.18.0.{20 + w}", '"trainer"', "trainers = 1\n")
    return text


def read_metrics(path):
    batches, oracle, summary = [], None, None
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r["event"] == "batch":
                batches.append(r)
            elif r["event"] == "oracle":
                oracle = r["stats"]
            elif r["event"] == "summary":
                summary = r
    return batches, oracle, summary


# Modes whose fetch of batch b waits for b-1's write-backs: their row traffic
# is on the critical path. The others prefetch behind compute.
ON_DEMAND = {"no_cache", "static_hot"}


def steady(batches, warmup, row_bytes, dim, mode):
    """Means over the batches after `warmup`: ms per iteration, phases, rows and bytes."""
    if len(batches) < warmup + 2:
        raise RuntimeError(f"only {len(batches)} batches: need more than warmup + 1 = {warmup + 1}")
    tail = batches[warmup:]
    n = len(tail)
    iteration_s = (batches[-1]["elapsed_s"] - batches[warmup - 1]["elapsed_s"]) / n if warmup > 0 else (
        batches[-1]["elapsed_s"] / len(batches))
    m = {"iteration_ms": 1e3 * iteration_s}
    for key, _ in PHASES + [("exposed_delayed_s", "")]:
        m[ms_key(key)] = 1e3 * sum(b[key] for b in tail) / n
    for key in ("unique_rows", "fetched_rows", "written_rows", "critical_rows", "delayed_rows", "private_rows"):
        m[key] = sum(b[key] for b in tail) / n
    grad = dim * 4  # a synced row is its gradient: embedding_dim floats
    moved = (m["fetched_rows"] + m["written_rows"]) * row_bytes
    m["critical_path_bytes"] = m["critical_rows"] * grad + (moved if mode in ON_DEMAND else 0)
    m["background_bytes"] = m["delayed_rows"] * grad + (0 if mode in ON_DEMAND else moved)
    return m


def run_one(args, model, mode, trainers, link, work, collective="tls"):
    name = f"{model}-W{trainers}-{link}-{mode}-{collective}"
    out_dir = os.path.join(work, name)
    os.makedirs(out_dir, exist_ok=True)
    cfg = os.path.join(out_dir, "cluster.toml")
    with open(cfg, "w") as f:
        f.write(topology(out_dir, model, mode, trainers, args.batch, args.batches, args.row_scale, args.cache_rows,
                         collective))
    started = time.monotonic()
    codes, coordinator = testbed.run_cluster(cfg, args.binary, testbed.parse_rate(link), os.path.join(out_dir, "logs"),
                                             args.timeout)
    if any(c != 0 for c in codes.values()):
        raise RuntimeError(f"{name}: members exited with {codes}; logs in {os.path.join(out_dir, 'logs')}")
    batches, oracle, summary = read_metrics(os.path.join(out_dir, "metrics.jsonl"))
    row_bytes = oracle["bytes_per_row"] if oracle else 128
    m = steady(batches, args.warmup, row_bytes, 16, mode)
    m.update(model=model, mode=mode, trainers=trainers, link=link, collective=collective, batches=len(batches),
             wall_s=time.monotonic() - started, digest=summary.get("parameter_digest", "") if summary else "")
    return m


def print_table(rows):
    head = (f"{'model':7} {'W':>2} {'link':7} {'mode':13} {'coll':4} {'ms/iter':>8} {'vs ideal':>8} {'wait':>6} {'fwd':>6} "
            f"{'bwd':>6} {'sync':>6} {'(dly)':>6} {'opt':>5} | {'crit rows':>9} {'dly rows':>9} {'priv':>7} "
            f"{'fetched':>8} {'crit MB':>7} {'bg MB':>7}")
    print(head)
    print("-" * len(head))
    ideal = {(r["model"], r["trainers"], r["link"], r.get("collective", "tls")): r["iteration_ms"]
             for r in rows if r["mode"] == "ideal"}
    for r in rows:
        base = ideal.get((r["model"], r["trainers"], r["link"], r.get("collective", "tls")))
        vs = f"{r['iteration_ms'] / base:8.2f}" if base else f"{'-':>8}"
        print(f"{r['model']:7} {r['trainers']:>2} {r['link']:7} {r['mode']:13} {r.get('collective', 'tls'):4} "
              f"{r['iteration_ms']:8.1f} {vs} "
              f"{r['fetch_ms']:6.1f} {r['forward_ms']:6.1f} {r['backward_ms']:6.1f} {r['dense_sync_ms']:6.1f} "
              f"{r['exposed_delayed_ms']:6.1f} {r['optimizer_ms']:5.1f} | {r['critical_rows']:9.0f} "
              f"{r['delayed_rows']:9.0f} {r['private_rows']:7.0f} {r['fetched_rows']:8.0f} "
              f"{r['critical_path_bytes'] / 1e6:7.2f} {r['background_bytes'] / 1e6:7.2f}")


def write_svg(rows, path):
    """Horizontal stacked bars: one per run, the phases of the slowest trainer plus what the pipeline hid."""
    colors = ["#4c78a8", "#f58518", "#e45756", "#72b7b2", "#54a24b", "#bab0ac"]
    bar_h, gap, left, width = 16, 6, 300, 640
    top = 40
    height = top + len(rows) * (bar_h + gap) + 70
    scale = width / max(max(r["iteration_ms"], sum(r[ms_key(k)] for k, _ in PHASES)) for r in rows)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 40}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<text x="10" y="20" font-size="14">actorrec on the testbed: time per iteration (ms) and its breakdown '
           f'(each phase: the largest among trainers)</text>']
    y = top
    for r in rows:
        label = f"{r['model']} W={r['trainers']} {r['link']} {r['mode']} {r.get('collective', 'tls')}"
        out.append(f'<text x="{left - 6}" y="{y + bar_h - 4}" text-anchor="end">{label}</text>')
        x = left
        for (key, _), color in zip(PHASES, colors):
            w = r[ms_key(key)] * scale
            out.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{color}"/>')
            x += w
        it = r["iteration_ms"] * scale
        out.append(f'<line x1="{left + it:.1f}" y1="{y - 2}" x2="{left + it:.1f}" y2="{y + bar_h + 2}" '
                   f'stroke="black" stroke-width="2"/>')
        out.append(f'<text x="{left + max(it, x - left) + 6:.1f}" y="{y + bar_h - 4}">{r["iteration_ms"]:.0f}</text>')
        y += bar_h + gap
    x = left
    for (_, name), color in zip(PHASES, colors):
        out.append(f'<rect x="{x}" y="{y + 14}" width="12" height="12" fill="{color}"/>')
        out.append(f'<text x="{x + 16}" y="{y + 24}">{name}</text>')
        x += 130
    out.append(f'<line x1="{left}" y1="{y + 44}" x2="{left}" y2="{y + 56}" stroke="black" stroke-width="2"/>')
    out.append(f'<text x="{left + 6}" y="{y + 54}">iteration time (phases of different trainers overlap, and '
               f'rows arrive and delayed sync run behind compute)</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def bagpipe_rows(args, work):
    """The oracle alone at the paper's setting: rows per iteration for each planned mode."""
    rows = []
    for mode in ("replicated", "lrpp", "lrpp_delayed"):
        out_dir = os.path.join(work, f"bagpipe-{mode}")
        os.makedirs(out_dir, exist_ok=True)
        cfg = os.path.join(out_dir, "plan.toml")
        text = topology(out_dir, "dlrm", mode, 1, 16384, args.bagpipe_batches, 1.0, args.bagpipe_cache_rows)
        # One process with 8 trainer ranks: plans depend on W, not on hosts.
        text = text[:text.index("\n[[cluster.member]]")] + testbed.member_toml(
            "one", "127.0.0.1", '"all"', "trainers = 8\nembedding_shards = 2\n", port=0)
        with open(cfg, "w") as f:
            f.write(text)
        r = subprocess.run([args.binary, "plan", "--config", cfg, "--batches", str(args.bagpipe_batches), "--out",
                            os.devnull], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"actorrec plan ({mode}): {r.stderr.strip()}")
        rows.append((mode, r.stderr.strip().splitlines()[-1]))
    return rows


FIELDS = ["model", "trainers", "link", "mode", "collective", "iteration_ms", "fetch_ms", "forward_ms", "backward_ms",
          "dense_sync_ms", "exposed_delayed_ms", "optimizer_ms", "unique_rows", "fetched_rows", "written_rows",
          "critical_rows", "delayed_rows", "private_rows", "critical_path_bytes", "background_bytes", "batches",
          "digest"]
TEXT_FIELDS = {"model", "link", "mode", "collective", "digest"}


def replot(path):
    try:
        with open(path, newline="") as f:
            rows = [{k: (v if k in TEXT_FIELDS else float(v)) for k, v in r.items()} for r in csv.DictReader(f)]
    except (OSError, ValueError, KeyError) as e:
        print(f"cluster_bench: {path}: {e}", file=sys.stderr)
        return 1
    for r in rows:
        r["trainers"] = int(r["trainers"])
    print_table(rows)
    svg = os.path.join(os.path.dirname(os.path.abspath(path)), "cluster_bench.svg")
    write_svg(rows, svg)
    print(f"\nwrote {svg}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="build/actorrec")
    ap.add_argument("--out", default="runs/cluster_bench", help="CSV, SVG and every run's logs go here")
    ap.add_argument("--models", default="dlrm,deepfm")
    ap.add_argument("--trainers", default="2,4", help="trainer ranks, one host each")
    ap.add_argument("--links", default="1gbit,10gbit")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--batch", type=int, default=16384, help="global batch (samples)")
    ap.add_argument("--batches", type=int, default=24, help="iterations per run")
    ap.add_argument("--warmup", type=int, default=4, help="iterations left out of the means")
    ap.add_argument("--row-scale", type=float, default=0.1, help="dataset.row_scale of the Criteo Kaggle tables")
    ap.add_argument("--cache-rows", type=int, default=1 << 20, help="training.cache_rows per trainer")
    ap.add_argument("--collectives", default="tls", help="cluster.collective of the trainers' sums: tls, gloo or "
                    "both (tls,gloo: each mode runs once with each, one after the other)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds one run may take")
    ap.add_argument("--bagpipe-rows", action="store_true", help="also plan Bagpipe's setting with the oracle alone")
    ap.add_argument("--bagpipe-batches", type=int, default=20)
    ap.add_argument("--bagpipe-cache-rows", type=int, default=4 << 20)
    ap.add_argument("--quick", action="store_true", help="dlrm, W=2, 1gbit, batch 2048, 8 iterations")
    ap.add_argument("--from-csv", metavar="CSV", help="print the table and draw the plot of an earlier run's CSV "
                    "(next to it) without running anything")
    args = ap.parse_args()
    if args.from_csv:
        return replot(args.from_csv)
    if args.quick:
        args.models, args.trainers, args.links = "dlrm", "2", "1gbit"
        args.batch, args.batches, args.warmup, args.row_scale = 2048, 8, 2, 0.01
    args.binary = os.path.abspath(args.binary)
    ok, why = testbed.netns_supported()
    if not ok:
        print(f"cluster_bench: {why}", file=sys.stderr)
        return testbed.EXIT_SKIP
    testbed.stop_on_signals()
    work = os.path.abspath(args.out)
    os.makedirs(work, exist_ok=True)
    modes = args.modes.split(",")
    for m in modes:
        if m not in MODES:
            print(f"cluster_bench: --modes: unknown mode {m!r} (one of {', '.join(MODES)})", file=sys.stderr)
            return 2
    collectives = args.collectives.split(",")
    for c in collectives:
        if c not in ("tls", "gloo"):
            print(f"cluster_bench: --collectives: unknown collective {c!r} (tls or gloo)", file=sys.stderr)
            return 2
    rows = []
    try:
        for model in args.models.split(","):
            for trainers in (int(t) for t in args.trainers.split(",")):
                for link in args.links.split(","):
                    for mode in modes:
                        for collective in collectives:
                            r = run_one(args, model, mode, trainers, link, work, collective)
                            print(f"  {model} W={trainers} {link} {mode} {collective}: {r['iteration_ms']:.1f} "
                                  f"ms/iteration ({r['wall_s']:.0f} s)", file=sys.stderr, flush=True)
                            rows.append(r)
        bagpipe = bagpipe_rows(args, work) if args.bagpipe_rows else []
    except (RuntimeError, testbed.TestbedError) as e:
        print(f"cluster_bench: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("cluster_bench: stopped; the testbed removed its namespaces", file=sys.stderr)
        return 130
    print(f"\nbatch {args.batch}, {args.batches} iterations ({args.warmup} warm-up left out), Criteo Kaggle tables "
          f"x {args.row_scale}; ms per iteration; phases of the slowest trainer (ms); rows per iteration")
    print_table(rows)
    with open(os.path.join(work, "cluster_bench.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    write_svg(rows, os.path.join(work, "cluster_bench.svg"))
    for mode, line in bagpipe:
        print(f"oracle at Bagpipe's setting (W=8, batch 16384, full Criteo Kaggle), {mode}: {line}")
    print(f"\nwrote {os.path.join(work, 'cluster_bench.csv')} and {os.path.join(work, 'cluster_bench.svg')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
