#!/usr/bin/env python3
"""A bandwidth-limited testbed: every host of a cluster in its own network namespace.

Each distinct member address of a topology becomes an emulated host: a Linux
network namespace whose one interface (eth0, a veth pair) plugs into a bridge
in a hub namespace, as a host's NIC plugs into a non-blocking switch. A link
preset limits each host's NIC in both directions with a token bucket (tc
tbf): what the host sends on its eth0, and what the hub sends to it. Then
`actorrec node --member NAME` runs inside the namespace of NAME's address.

Traffic stays inside the namespaces this script creates: the hub has no
uplink and no route leaves it. Addresses must lie in 198.18.0.0/15, the
range RFC 2544 sets aside for benchmarking interconnects, so that a topology
written for the testbed cannot name a real network. Everything is removed on
exit, on an error and on SIGINT/SIGTERM (the members first, then the
namespaces, which takes the veths and the bridge with them); namespaces
that a killed testbed left behind are removed by the next one.

Needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN) and the iproute2 tools.
`testbed.py check` exits 77 (the test suite's "skipped") where they are
missing. Link delay would need sch_netem, which the kernels of these
machines lack: the presets limit rate only, and --delay says so if netem is
absent.

  tools/testbed/testbed.py run --config cluster.toml --link 10gbit --logs DIR
  tools/testbed/testbed.py run --config cluster.toml --kill t --kill-at 12   # a recovery drill
  tools/testbed/testbed.py measure --link 10gbit    # the rate one TCP stream gets
  tools/testbed/testbed.py check
"""

import argparse
import ipaddress
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib

# Link presets, in bit/s. 10 Gbit/s is the NIC of the Bagpipe paper's
# p3.2xlarge trainers; 25 Gbit/s a current cloud NIC; 1 Gbit/s a slow one.
PRESETS = {"1gbit": 1e9, "10gbit": 10e9, "25gbit": 25e9}
TESTBED_NET = ipaddress.ip_network("198.18.0.0/15")
NS_PREFIX = "artb"  # artb<pid>-hub, artb<pid>-h<i>
EXIT_SKIP = 77


class TestbedError(Exception):
    pass


def parse_rate(text):
    """'10gbit', '2.5gbit', '800mbit', a preset name -> bit/s; 'none' -> None (no limit)."""
    if text == "none":
        return None
    if text in PRESETS:
        return PRESETS[text]
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)\s*(k|m|g)bit", text.strip().lower())
    if not m:
        raise TestbedError(f"--link {text!r}: use a preset ({', '.join(PRESETS)}) or a rate like 5gbit or 800mbit")
    return float(m.group(1)) * {"k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]


def sh(*argv, check=True):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and r.returncode != 0:
        raise TestbedError(f"{' '.join(argv)}: {r.stderr.strip() or 'exit code ' + str(r.returncode)}")
    return r


def netns_supported():
    """(True, '') if this process can create a namespace with a rate-limited veth; else (False, why)."""
    if os.geteuid() != 0:
        return False, "the testbed needs root (network namespaces, veth, tc)"
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            return False, f"'{tool}' is not installed (Debian package iproute2)"
    probe = f"{NS_PREFIX}{os.getpid()}-probe"
    try:
        r = sh("ip", "netns", "add", probe, check=False)
        if r.returncode != 0:
            return False, "cannot create a network namespace: " + r.stderr.strip()
        r = sh("ip", "link", "add", "a0", "netns", probe, "type", "veth", "peer", "name", "b0", "netns", probe,
               check=False)
        if r.returncode != 0:
            return False, "cannot create a veth pair: " + r.stderr.strip()
        r = sh("ip", "netns", "exec", probe, "tc", "qdisc", "add", "dev", "a0", "root", *tbf_args(1e9), check=False)
        if r.returncode != 0:
            return False, "cannot add a tbf qdisc: " + r.stderr.strip()
        return True, ""
    finally:
        sh("ip", "netns", "del", probe, check=False)


def tbf_args(rate_bps):
    # The bucket holds 1 ms at the link rate (at least 64 KiB, two 64 KiB
    # GSO packets fit), so a burst is no faster than the link for longer
    # than that; the queue holds 20 ms before dropping, like a switch port.
    burst = max(65536 * 2, int(rate_bps / 8 / 1000))
    return ["tbf", "rate", f"{int(rate_bps)}bit", "burst", str(burst), "latency", "20ms"]


def remove_stale_namespaces():
    """Deletes the namespaces of testbeds whose process is gone (killed with -9)."""
    r = sh("ip", "netns", "list", check=False)
    for line in r.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        m = re.fullmatch(NS_PREFIX + r"([0-9]+)-(hub|h[0-9]+|probe)", name)
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            kill_namespace_pids(name)
            sh("ip", "netns", "del", name, check=False)


def kill_namespace_pids(ns):
    r = sh("ip", "netns", "pids", ns, check=False)
    for pid in r.stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


class Testbed:
    """Hosts (one per address) on one switch, each NIC limited to rate_bps (None: unlimited)."""

    def __init__(self, addresses, rate_bps=None, delay_ms=0.0):
        self.addresses = list(dict.fromkeys(addresses))
        for a in self.addresses:
            try:
                ip = ipaddress.ip_address(a)
            except ValueError:
                raise TestbedError(f"address {a!r} is not an IPv4 literal: testbed hosts need literal addresses")
            if ip not in TESTBED_NET:
                raise TestbedError(f"address {a} is outside {TESTBED_NET}, the testbed's range "
                                   "(RFC 2544 benchmarking addresses): give every member an address such as "
                                   "198.18.0.11")
        self.rate_bps = rate_bps
        self.delay_ms = delay_ms
        self.tag = f"{NS_PREFIX}{os.getpid()}"
        self.hub = f"{self.tag}-hub"
        self.created = []
        self.procs = []

    def ns(self, address):
        return f"{self.tag}-h{self.addresses.index(address)}"

    def __enter__(self):
        remove_stale_namespaces()
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _build(self):
        if self.delay_ms > 0:
            r = sh("tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms", check=False)
            if r.returncode != 0:
                raise TestbedError("--delay needs the sch_netem qdisc, which this kernel does not have "
                                   f"({r.stderr.strip()}); run without --delay (rate limits only)")
            sh("tc", "qdisc", "del", "dev", "lo", "root", check=False)
        sh("ip", "netns", "add", self.hub)
        self.created.append(self.hub)
        hub = ["ip", "-n", self.hub]
        sh(*hub, "link", "add", "br0", "type", "bridge")
        sh(*hub, "link", "set", "br0", "up")
        for i, address in enumerate(self.addresses):
            ns = self.ns(address)
            sh("ip", "netns", "add", ns)
            self.created.append(ns)
            port = f"p{i}"
            sh("ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", port, "netns", self.hub)
            sh(*hub, "link", "set", port, "master", "br0")
            sh(*hub, "link", "set", port, "up")
            sh("ip", "-n", ns, "addr", "add", f"{address}/{TESTBED_NET.prefixlen}", "dev", "eth0")
            sh("ip", "-n", ns, "link", "set", "eth0", "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            if self.rate_bps:
                # Upload: what the host sends; download: what the switch sends it.
                sh("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "eth0", "root", "handle", "1:",
                   *tbf_args(self.rate_bps))
                sh("ip", "netns", "exec", self.hub, "tc", "qdisc", "add", "dev", port, "root",
                   *tbf_args(self.rate_bps))
            if self.delay_ms > 0:
                sh("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "eth0",
                   "parent" if self.rate_bps else "root", *(["1:1"] if self.rate_bps else []), "netem", "delay",
                   f"{self.delay_ms}ms")

    def spawn(self, address, argv, log_path=None):
        """Starts argv inside the host of `address` in a session of its own; returns the Popen."""
        out = open(log_path, "wb") if log_path else subprocess.DEVNULL
        p = subprocess.Popen(["ip", "netns", "exec", self.ns(address), *argv], stdout=out,
                             stderr=subprocess.STDOUT, start_new_session=True)
        if log_path:
            out.close()
        self.procs.append(p)
        return p

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self.procs = []
        for ns in reversed(self.created):
            kill_namespace_pids(ns)
            sh("ip", "netns", "del", ns, check=False)
        self.created = []


def stop_on_signals():
    """SIGINT and SIGTERM raise, so that every `with Testbed` cleans up."""
    def handler(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)


def member_toml(name, address, roles, extra="", port=7700):
    """One [[cluster.member]] entry of a topology; `roles` as TOML list items ('"sampler", "oracle"')."""
    return (f'\n[[cluster.member]]\nname = "{name}"\naddress = "{address}"\nport = {port}\n'
            f"roles = [{roles}]\n{extra}")


def load_members(config_path):
    try:
        with open(config_path, "rb") as f:
            cfg = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise TestbedError(f"{config_path}: {e}")
    members = cfg.get("cluster", {}).get("member", [])
    if not members:
        raise TestbedError(f"{config_path}: no [[cluster.member]]: the testbed runs a topology")
    for m in members:
        if "name" not in m or "address" not in m:
            raise TestbedError(f"{config_path}: every [[cluster.member]] needs name and address")
    coordinator = cfg["cluster"].get("coordinator")
    if coordinator is None:
        oracle = [m["name"] for m in members if "oracle" in m.get("roles", []) or "all" in m.get("roles", [])]
        coordinator = oracle[0] if oracle else members[0]["name"]
    return members, coordinator


def metrics_path(config_path):
    """Where the topology's run writes metrics.jsonl ([run] output_dir, else runs/<name>, beside the config)."""
    with open(config_path, "rb") as f:
        cfg = tomllib.load(f)
    explicit = cfg.get("training", {}).get("metrics_file")
    base = os.path.dirname(os.path.abspath(config_path))
    if explicit:
        return os.path.join(base, explicit)
    run = cfg.get("run", {})
    out = run.get("output_dir") or os.path.join("runs", run.get("name", "local"))
    return os.path.join(base, out, "metrics.jsonl")


def kill_worker_at(log_path, metrics, batch, timeout_s):
    """SIGKILLs the first worker its agent's log names once metrics.jsonl counts `batch` batches; the kill's
    wall-clock time in ms, or None when that never happened within timeout_s."""
    deadline = time.monotonic() + timeout_s
    pid = None
    while time.monotonic() < deadline:
        if pid is None and os.path.exists(log_path):
            m = re.search(r"worker pid (\d+) started \(start 1\)", open(log_path, errors="replace").read())
            pid = int(m.group(1)) if m else None
        done = 0
        try:  # absent before the first batch, and replaced while a run starts
            done = sum(1 for line in open(metrics) if line.startswith('{"event":"batch"'))
        except FileNotFoundError:
            pass
        if pid is not None and done >= batch:
            killed = time.time() * 1000
            os.kill(pid, signal.SIGKILL)
            return killed
        time.sleep(0.005)
    return None


def recovery_report(metrics, killed_ms):
    """Lines on the recovery after a kill at killed_ms, from metrics.jsonl."""
    lines = [json.loads(line) for line in open(metrics)]
    out = []
    fail = [x for x in lines if x.get("event") == "failure"]
    rec = [x for x in lines if x.get("event") == "recovery"]
    if fail:
        out.append(f"failure seen {fail[0]['unix_ms'] - killed_ms:.0f} ms after the kill (member "
                   f"{fail[0]['member']}, last batch {fail[0]['last_batch']})")
    if rec:
        after = lines[lines.index(rec[0]) + 1:]
        batches = [x for x in after if x.get("event") == "batch"]
        first = f", first batch done {rec[0]['unix_ms'] - killed_ms + batches[0]['elapsed_s'] * 1000:.0f} ms" \
            if batches else ""
        replayed = batches[:rec[0]["batches_replayed"]]
        catch_up = f" in {replayed[-1]['elapsed_s'] * 1000:.0f} ms" if replayed else ""
        out.append(f"training again {rec[0]['unix_ms'] - killed_ms:.0f} ms after the kill{first}; "
                   f"{rec[0]['batches_replayed']} batch(es) replayed from snapshot {rec[0]['snapshot_batch']}"
                   f"{catch_up}")
    summary = [x for x in lines if x.get("event") == "summary"]
    if summary:
        out.append(f"parameter digest {summary[-1].get('parameter_digest')}")
    return out


def run_cluster(config_path, binary, rate_bps, logs, timeout_s, delay_ms=0.0, extra=(), kill=None, kill_at=0):
    """Runs every member of the topology on the testbed; returns {member: exit code} (None: killed). With
    `kill`, that member's first worker (an agent's: cluster.max_restarts > 0) is SIGKILLed after batch kill_at,
    and the recovery's times are printed."""
    members, coordinator = load_members(config_path)
    os.makedirs(logs, exist_ok=True)
    binary = os.path.abspath(binary)
    config_path = os.path.abspath(config_path)
    codes = {}
    with Testbed([m["address"] for m in members], rate_bps, delay_ms) as bed:
        procs = {}
        for m in members:
            procs[m["name"]] = bed.spawn(m["address"], [binary, "node", "--config", config_path, "--member",
                                                        m["name"], *extra],
                                         os.path.join(logs, m["name"] + ".log"))
        deadline = time.monotonic() + timeout_s
        killed_ms = None
        if kill:
            killed_ms = kill_worker_at(os.path.join(logs, kill + ".log"), metrics_path(config_path), kill_at,
                                       timeout_s)
            print(f"testbed: {'killed' if killed_ms else 'could not kill'} the worker of '{kill}' after batch "
                  f"{kill_at}", file=sys.stderr)
        while time.monotonic() < deadline and any(p.poll() is None for p in procs.values()):
            time.sleep(0.1)
        # After the coordinator ends, the others follow within a heartbeat
        # or two; past the deadline the testbed ends them (reported as None).
        for name, p in procs.items():
            codes[name] = p.poll()
        if any(c is None for c in codes.values()):
            still = [n for n, c in codes.items() if c is None]
            print(f"testbed: {', '.join(still)} still running after {timeout_s:.0f} s; stopping them",
                  file=sys.stderr)
    if killed_ms:
        for line in recovery_report(metrics_path(config_path), killed_ms):
            print(f"testbed: {line}")
    return codes, coordinator


MEASURE_SERVER = r"""
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 5201)); s.listen(1); print("ready", flush=True)
c, _ = s.accept(); n = 0
while True:
    b = c.recv(1 << 20)
    if not b: break
    n += len(b)
c.sendall(str(n).encode()); c.close()
"""

MEASURE_CLIENT = r"""
import socket, sys, time
c = socket.create_connection((sys.argv[1], 5201)); buf = b"\0" * (1 << 20); total = int(sys.argv[2])
t = time.perf_counter(); sent = 0
while sent < total:
    c.sendall(buf); sent += len(buf)
c.shutdown(socket.SHUT_WR); got = int(c.recv(64)); dt = time.perf_counter() - t
print(f"{got} {dt}")
"""


def measure(rate_bps, megabytes=200):
    """One TCP stream between two testbed hosts: (bit/s achieved, configured)."""
    a, b = "198.18.0.1", "198.18.0.2"
    with Testbed([a, b], rate_bps) as bed:
        server = subprocess.Popen(["ip", "netns", "exec", bed.ns(b), sys.executable, "-c", MEASURE_SERVER, b],
                                  stdout=subprocess.PIPE, text=True, start_new_session=True)
        bed.procs.append(server)
        if server.stdout.readline().strip() != "ready":
            raise TestbedError("the measuring server did not start")
        r = sh("ip", "netns", "exec", bed.ns(a), sys.executable, "-c", MEASURE_CLIENT, b,
               str(megabytes * 1 << 20))
        got, seconds = r.stdout.split()
        return int(got) * 8 / float(seconds), rate_bps


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="run every member of a topology on its own emulated host")
    run.add_argument("--config", required=True, help="topology: every member's address in 198.18.0.0/15")
    run.add_argument("--binary", default="build/actorrec", help="the actorrec binary (default: build/actorrec)")
    run.add_argument("--link", default="10gbit", help="preset (1gbit, 10gbit, 25gbit), a rate, or 'none'")
    run.add_argument("--delay-ms", type=float, default=0.0, help="one-way delay per host (needs sch_netem)")
    run.add_argument("--logs", default="testbed-logs", help="one <member>.log per member (default: testbed-logs)")
    run.add_argument("--timeout", type=float, default=600, help="seconds before the testbed stops the members")
    run.add_argument("--kill", help="SIGKILL this member's worker during the run (needs cluster.max_restarts > 0)")
    run.add_argument("--kill-at", type=int, default=1, help="after this many batches (default 1)")
    mea = sub.add_parser("measure", help="the rate one TCP stream gets between two hosts")
    mea.add_argument("--link", default="10gbit")
    mea.add_argument("--megabytes", type=int, default=200)
    sub.add_parser("check", help="exit 0 if this machine can run the testbed, 77 if not")
    args = ap.parse_args()

    if args.cmd == "check":
        ok, why = netns_supported()
        print("testbed: usable" if ok else f"testbed: not usable here: {why}")
        return 0 if ok else EXIT_SKIP
    ok, why = netns_supported()
    if not ok:
        print(f"testbed: {why}", file=sys.stderr)
        return EXIT_SKIP
    stop_on_signals()
    try:
        if args.cmd == "measure":
            got, rate = measure(parse_rate(args.link), args.megabytes)
            link = f"a {rate / 1e9:g} Gbit/s link ({got / rate:.2f} of it)" if rate else "an unlimited link"
            print(f"one TCP stream: {got / 1e9:.2f} Gbit/s on {link}")
            return 0
        rate = parse_rate(args.link)
        codes, coordinator = run_cluster(args.config, args.binary, rate, args.logs, args.timeout, args.delay_ms,
                                         kill=args.kill, kill_at=args.kill_at)
    except TestbedError as e:
        print(f"testbed: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        print(f"testbed: stopped ({e}); members and namespaces removed", file=sys.stderr)
        return 130
    for name, code in codes.items():
        print(f"testbed: member '{name}' exited with {'(killed)' if code is None else code}"
              f"{' (coordinator)' if name == coordinator else ''}; log {os.path.join(args.logs, name + '.log')}")
    bad = [c for c in codes.values() if c != 0]
    return 0 if not bad else (codes[coordinator] or 1)


if __name__ == "__main__":
    sys.exit(main())
