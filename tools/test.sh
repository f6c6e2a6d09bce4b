#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite. The last
# line is "N passed, N failed" (meson tests); the exit code is non-zero on any
# failure. Extra arguments go to `meson test` (e.g. a suite name).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
build="${ACTORREC_BUILD_DIR:-build}"
rc=0
meson test -C "$build" --print-errorlogs --num-processes 2 "$@" || rc=$?
python3 - "$build/meson-logs/testlog.json" "$rc" <<'PY'
import json, sys
path, rc = sys.argv[1], int(sys.argv[2])
counts = {"passed": 0, "failed": 0, "skipped": 0}
failed = []
failures = []
try:
    with open(path) as f:
        for line in f:
            t = json.loads(line)
            r = t["result"]
            if r in ("OK", "EXPECTEDFAIL"):
                counts["passed"] += 1
            elif r == "SKIP":
                counts["skipped"] += 1
            else:
                counts["failed"] += 1
                failed.append(f'{t["name"]} ({r}, {t["duration"]:.1f} s)')
                failures.append((t["name"], t.get("stdout") or ""))
except FileNotFoundError:
    print(f"no test log at {path}: meson test did not run", file=sys.stderr)
    counts["failed"] += 1
# The failed assertions once more, last: CI keeps only the end of the output.
for name, out in failures:
    lines = out.splitlines()
    shown = 0
    for i, text in enumerate(lines):
        if "FAILED:" not in text or shown == 3:
            continue
        shown += 1
        # Catch2 names the test case between two rules of dashes above.
        rules = [j for j in range(i) if lines[j].startswith("-----")][-2:]
        case = " ".join(l.strip() for l in lines[rules[0] + 1:rules[1]]) if len(rules) == 2 else ""
        detail = " | ".join(l.strip() for l in lines[i:i + 6] if l.strip())
        print(f"--- {name}: {case}: {detail}"[:1500])
for name in failed:
    print(f"FAILED: {name}")
if rc != 0 and counts["failed"] == 0:
    counts["failed"] = 1  # meson itself failed; never report a clean run
line = f'{counts["passed"]} passed, {counts["failed"]} failed'
if counts["skipped"]:
    line += f', {counts["skipped"]} skipped'
print(line)
sys.exit(1 if counts["failed"] else 0)
PY
