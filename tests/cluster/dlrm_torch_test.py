#!/usr/bin/env python3
"""tools/bench/dlrm_torch.py, the PyTorch side of issue 21's comparison, as
tools/gpu/check.sh runs it, on the CPU and tiny: one machine-readable line
with train_bench's DLRM shape (26 tables, interaction width 367, the dense
parameters of bottom 13-512-256-64-16 and top 367-512-256-1), a positive
rate; a bad argument is refused naming it; without PyTorch the script exits
77 saying so. Exits 77 itself (skipped) where the script finds no PyTorch
(tools/install-deps.sh installs Debian's python3-torch).

  tests/cluster/dlrm_torch_test.py
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "tools", "bench", "dlrm_torch.py")
SKIP = 77


def run(args, env=None):
    return subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True, timeout=240, env=env)


def linear_params(inp, widths):
    total = 0
    for w in widths:
        total += inp * w + w
        inp = w
    return total


def main():
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    # Without PyTorch (a torch module that fails to import first on the
    # path): exit 77 and the reason, whatever this machine has.
    with tempfile.TemporaryDirectory() as fake:
        with open(os.path.join(fake, "torch.py"), "w") as f:
            f.write("raise ImportError('no torch in this test')\n")
        env = dict(os.environ, PYTHONPATH=fake)
        r = run(["--device", "cpu", "--batch", "8", "--iters", "1"], env)
        check(r.returncode == SKIP, f"without torch: exit {r.returncode}, expected {SKIP}")
        check("skipped: PyTorch is not importable" in r.stderr, f"without torch: stderr {r.stderr!r}")

    r = run(["--batch", "0"])
    check(r.returncode == 2 and "--batch" in r.stderr, f"--batch 0: exit {r.returncode}, stderr {r.stderr!r}")

    # The script finds PyTorch itself (Debian's /usr/bin/python3 when this
    # interpreter has none): the tiny CPU run says whether there is one.
    r = run(["--device", "cpu", "--batch", "64", "--iters", "2", "--warmup", "1", "--row-scale", "0.001",
             "--threads", "1"])
    if r.returncode == SKIP and "PyTorch is not importable" in r.stderr:
        for f in failures:
            print("FAILED:", f)
        if failures:
            return 1
        print(f"skipped: {r.stderr.strip()}")
        return SKIP
    check(r.returncode == 0, f"cpu run: exit {r.returncode}: {r.stderr[-2000:]}")
    lines = [l for l in r.stdout.splitlines() if l.startswith("dlrm_torch ")]
    check(len(lines) == 1, f"cpu run: expected one result line, got {r.stdout!r}")
    if lines:
        fields = dict(kv.split("=", 1) for kv in lines[0].split()[1:])
        print(lines[0])
        check(fields.get("device") == "cpu", f"device: {fields}")
        check(fields.get("batch") == "64" and fields.get("iters") == "2", f"batch/iters: {fields}")
        check(float(fields.get("samples_per_s", "0")) > 0, f"samples_per_s: {fields}")
        check(fields.get("tables") == "26", f"tables: {fields}")
        # train_bench's DLRM (tools/bench/train_bench.cpp): d = 16, 13 dense
        # features, bottom [512, 256, 64, 16], top [512, 256, 1] over
        # d + (T + 1)·T / 2 = 16 + 27·26 / 2 = 367 interaction outputs.
        check(fields.get("interaction") == "367", f"interaction: {fields}")
        dense = linear_params(13, [512, 256, 64, 16]) + linear_params(367, [512, 256, 1])
        check(fields.get("dense_params") == str(dense), f"dense_params: {fields}, expected {dense}")
        check(re.fullmatch(r"[0-9.]+", fields.get("loss", "x")) is not None, f"loss: {fields}")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
