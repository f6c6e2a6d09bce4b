#!/usr/bin/env python3
"""The testbed (tools/testbed/testbed.py) as its users run it, as root.

A cluster whose members sit on four emulated hosts behind 1 Gbit/s links
trains to the parameters of the same run in one process; a testbed stopped
by SIGTERM, or killed, leaves no member process and no namespace behind;
topologies the testbed cannot run are refused with the reason. Exits 77
(skipped) where this machine cannot create network namespaces.

  tests/cluster/testbed_test.py build/actorrec
"""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTBED = os.path.join(HERE, "..", "..", "tools", "testbed", "testbed.py")
sys.path.insert(0, os.path.dirname(TESTBED))
import testbed  # noqa: E402

SECRET = "testbed-secret-of-the-test-suite"

RUN = """
[run]
name = "testbed"
output_dir = "{out}"

[model]
kind = "dlrm"
bottom_mlp = [32, 16]
top_mlp = [32, 1]

[optimizer]
dense = "adagrad"
sparse = "rowwise_adagrad"

[dataset]
samples = 6144
eval_samples = 0
row_scale = 0.001

[training]
mode = "lrpp_delayed"
batch_size = 512
lookahead = 3
cache_rows = 8192

[cluster]
secret = "{secret}"
heartbeat_ms = 100
peer_timeout_ms = 3000
join_timeout_ms = 30000
"""


def split_topology(out):
    return (RUN.format(out=out, secret=SECRET) + testbed.member_toml("a", "198.18.0.10", '"sampler", "oracle"') +
            testbed.member_toml("e", "198.18.0.11", '"embedding"', "embedding_shards = 2\n") +
            testbed.member_toml("t0", "198.18.0.12", '"trainer"', "trainers = 2\n") +
            testbed.member_toml("t1", "198.18.0.13", '"trainer"', "trainers = 2\n"))


def digest_in(metrics_path):
    digest = ""
    with open(metrics_path) as f:
        for line in f:
            record = json.loads(line)
            if record.get("event") == "summary":
                digest = record.get("parameter_digest", "")
    return digest


def our_namespaces(pid):
    out = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(f"{testbed.NS_PREFIX}{pid}-")]


def members_running(config_path):
    """actorrec processes started with this config (their command line names it)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if config_path.encode() in argv and any(a.endswith(b"actorrec") for a in argv):
            found.append(int(pid))
    return found


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def expect(self, ok, what, detail=""):
        if ok:
            self.passed += 1
            print(f"ok - {what}")
        else:
            self.failed += 1
            print(f"FAILED - {what}\n{detail}")


def start_testbed(config, logs, binary, link="1gbit"):
    return subprocess.Popen([sys.executable, TESTBED, "run", "--config", config, "--binary", binary, "--link", link,
                             "--logs", logs, "--timeout", "180"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def wait_for_log(path, text, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if os.path.exists(path) and text in open(path, errors="replace").read():
            return True
        time.sleep(0.1)
    return False


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/actorrec")
    usable, why = testbed.netns_supported()
    if not usable:
        print(f"skipped: {why}")
        return testbed.EXIT_SKIP
    checks = Checks()
    with tempfile.TemporaryDirectory() as tmp:
        # 1. Four emulated hosts end with the one-process run's parameters.
        single_out = os.path.join(tmp, "single")
        single_cfg = os.path.join(tmp, "single.toml")
        with open(single_cfg, "w") as f:
            f.write(RUN.format(out=single_out, secret=SECRET) +
                    testbed.member_toml("one", "127.0.0.1", '"all"', "trainers = 4\nembedding_shards = 2\n", port=0))
        r = subprocess.run([binary, "train", "--config", single_cfg], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=300)
        checks.expect(r.returncode == 0, "the one-process run trains", r.stdout[-3000:])
        expected = digest_in(os.path.join(single_out, "metrics.jsonl")) if r.returncode == 0 else "?"

        split_out = os.path.join(tmp, "split")
        split_cfg = os.path.join(tmp, "split.toml")
        with open(split_cfg, "w") as f:
            f.write(split_topology(split_out))
        logs = os.path.join(tmp, "logs")
        bed = start_testbed(split_cfg, logs, binary)
        out, _ = bed.communicate(timeout=300)
        coordinator_log = open(os.path.join(logs, "a.log"), errors="replace").read() if os.path.exists(
            os.path.join(logs, "a.log")) else "(no log)"
        checks.expect(bed.returncode == 0, "every member on the testbed exits 0", out + coordinator_log[-4000:])
        got = digest_in(os.path.join(split_out, "metrics.jsonl")) if bed.returncode == 0 else ""
        checks.expect(got == expected and len(got) == 16,
                      "the run on 4 emulated hosts has the one-process run's parameter digest",
                      f"testbed {got!r}, one process {expected!r}")
        checks.expect("198.18.0.10:7700" in coordinator_log or "198.18.0.10" in coordinator_log,
                      "the coordinator listened on its testbed address", coordinator_log[-2000:])
        checks.expect(not our_namespaces(bed.pid), "no namespace is left after a run", str(our_namespaces(bed.pid)))

        # 2. SIGTERM mid-run: members stopped, namespaces gone.
        long_cfg = os.path.join(tmp, "long.toml")
        with open(long_cfg, "w") as f:
            f.write(split_topology(os.path.join(tmp, "long")).replace("samples = 6144", "samples = 6144000"))
        logs2 = os.path.join(tmp, "logs2")
        bed = start_testbed(long_cfg, logs2, binary)
        joined = wait_for_log(os.path.join(logs2, "a.log"), "cluster ready", 60)
        checks.expect(joined, "the long run's cluster gets ready on the testbed")
        namespaces_during = our_namespaces(bed.pid)
        bed.send_signal(signal.SIGTERM)
        out, _ = bed.communicate(timeout=60)
        checks.expect(len(namespaces_during) == 5, "the testbed made a hub and 4 hosts", str(namespaces_during))
        checks.expect(bed.returncode == 130 and "namespaces removed" in out,
                      "SIGTERM stops the testbed with 130 and says it cleaned up", f"exit {bed.returncode}: {out}")
        checks.expect(not our_namespaces(bed.pid), "SIGTERM leaves no namespace", str(our_namespaces(bed.pid)))
        checks.expect(not members_running(long_cfg), "SIGTERM leaves no member process",
                      str(members_running(long_cfg)))

        # 3. A testbed killed with SIGKILL leaves namespaces; the next one removes them.
        bed = start_testbed(long_cfg, os.path.join(tmp, "logs3"), binary)
        wait_for_log(os.path.join(tmp, "logs3", "a.log"), "cluster ready", 60)
        bed.kill()
        bed.wait()
        left = our_namespaces(bed.pid)
        for pid in members_running(long_cfg):
            os.kill(pid, signal.SIGKILL)  # orphans of the killed testbed (in their own sessions)
        r = subprocess.run([sys.executable, TESTBED, "measure", "--link", "1gbit", "--megabytes", "20"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        checks.expect(r.returncode == 0 and re.search(r"Gbit/s on a 1 Gbit/s link", r.stdout),
                      "measure reports the rate of a 1 Gbit/s link", r.stdout)
        checks.expect(len(left) == 5 and not our_namespaces(bed.pid),
                      "the next testbed removes the namespaces a killed one left", f"left {left}")

        # 4. Topologies the testbed cannot run.
        bad_cfg = os.path.join(tmp, "bad.toml")
        with open(bad_cfg, "w") as f:
            f.write(split_topology(split_out).replace("198.18.0.12", "10.1.2.3"))
        r = subprocess.run([sys.executable, TESTBED, "run", "--config", bad_cfg, "--binary", binary],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
        checks.expect(r.returncode == 2 and "10.1.2.3 is outside 198.18.0.0/15" in r.stdout,
                      "an address outside the testbed's range is refused, named", r.stdout)
        r = subprocess.run([sys.executable, TESTBED, "run", "--config", split_cfg, "--link", "fast"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
        checks.expect(r.returncode == 2 and "--link 'fast'" in r.stdout, "an unknown link preset is refused", r.stdout)

    print(f"{checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
