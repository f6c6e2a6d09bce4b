#!/usr/bin/env bash
# The one prepared device check of the CUDA backend (docs/gpu.md).
#
#   tools/gpu/check.sh pack   here (Debian, nvcc): builds the GPU test program,
#                             actorrec and train_bench, and packs them with every shared
#                             library they load but the CUDA driver, cuBLAS
#                             and NCCL
#                             into gpu-pack/pack.tar.xz (ignored by git; must
#                             stay under 64 MiB to travel with the tree)
#   tools/gpu/check.sh run    on the GPU machine, from the repository root:
#                             unpacks, prints the device, runs the GPU tests and
#                             a short `actorrec train` with training.backend =
#                             "cuda" (and the same run on the CPU beside it),
#                             then train_bench on CUDA beside the same DLRM in
#                             PyTorch (tools/bench/dlrm_torch.py) at batch 2048
#                             and 16384, writes $OUT/gpu_check.txt (else
#                             gpu-results/) and $OUT/vs_pytorch.txt.
#                             The whole run keeps under 5 minutes: each step's
#                             timeout is cut to what is left of that budget.
#                             Without a usable device it says "no device" and
#                             exits 0 (nothing to check, nothing failed).
#
# The GPU machine has the CUDA 13 toolkit and driver, Python, meson and ninja
# but none of our Debian libraries, and no network: the pack carries glibc's
# loader and libraries too, and the binaries run through that loader, so the
# image's own glibc version does not matter. cuBLAS (600 MB with cuBLASLt),
# NCCL (208 MiB) and the driver come from the machine, and its cudart (of the same toolkit
# as its cuBLAS) goes before the packed one.
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${ACTORREC_BUILD_DIR:-build}"
pack_dir=gpu-pack
pack="$pack_dir/pack.tar.xz"
limit_mib=60

# Libraries that must come from the GPU machine, never from the pack.
# NCCL too: its library is 208 MiB, over the pack's limit, and the machine
# has it (the toolkit's or a pip nvidia-nccl wheel).
from_machine='^(linux-vdso|libcuda\.so|libcublas|libcublasLt|libnvidia|libnccl)'

do_pack() {
  command -v nvcc >/dev/null || { echo "gpu check pack: nvcc is not on the PATH: no CUDA build to pack" >&2; exit 2; }
  if [ ! -f "$build/build.ninja" ]; then meson setup "$build" >/dev/null; fi
  if ! grep -q "gpu_device_tests" "$build/build.ninja"; then
    echo "gpu check pack: $build has no CUDA backend (meson option cuda): reconfigure with nvcc on the PATH" >&2
    exit 2
  fi
  nice ninja -C "$build" -j"${JOBS:-1}" actorrec tests/gpu_device_tests tools/bench/train_bench tools/bench/gpu_slot_bench
  local stage
  stage="$(mktemp -d)"
  trap 'rm -rf "$stage"' RETURN
  mkdir -p "$stage/pack/bin" "$stage/pack/lib" "$stage/pack/cudart"
  cp "$build/actorrec" "$build/tests/gpu_device_tests" "$build/tools/bench/train_bench" \
     "$build/tools/bench/gpu_slot_bench" "$stage/pack/bin/"
  strip --strip-unneeded "$stage/pack/bin/"* 2>/dev/null || true
  local lib name
  for bin in "$build/actorrec" "$build/tests/gpu_device_tests" "$build/tools/bench/train_bench" \
             "$build/tools/bench/gpu_slot_bench"; do
    ldd "$bin" | awk '/=>/ { print $1, $3 } !/=>/ && /^\s*\// { print $1, $1 }'
  done | sort -u | while read -r name lib; do
    base="$(basename "$name")"
    if [[ "$base" =~ $from_machine ]]; then continue; fi
    [ -f "$lib" ] || { echo "gpu check pack: $name: not found ($lib)" >&2; exit 2; }
    # cudart apart: the machine's own (beside its cuBLAS, of the same
    # toolkit) goes first, this build's is the fallback.
    if [[ "$base" == libcudart.so* ]]; then
      cp -L "$lib" "$stage/pack/cudart/$base"
    else
      cp -L "$lib" "$stage/pack/lib/$base"
    fi
  done
  # The loader under a fixed name, whatever ldd printed it as.
  cp -L /lib64/ld-linux-x86-64.so.2 "$stage/pack/lib/ld-linux-x86-64.so.2"
  git describe --always --dirty --abbrev=12 > "$stage/pack/VERSION"
  mkdir -p "$pack_dir"
  tar -C "$stage" -cf - pack | xz -T2 -6 > "$pack.tmp"
  mv "$pack.tmp" "$pack"
  local bytes
  bytes=$(stat -c %s "$pack")
  echo "gpu check pack: $pack: $((bytes / 1024 / 1024)) MiB ($(ls "$stage/pack/lib" | wc -l) libraries, unpacked" \
       "$(du -sm "$stage/pack" | cut -f1) MiB), build $(cat "$stage/pack/VERSION")"
  if [ "$bytes" -gt $((limit_mib * 1024 * 1024)) ]; then
    echo "gpu check pack: over $limit_mib MiB: it would not travel with the tree (64 MiB)" >&2
    exit 1
  fi
}

# The directory holding library $1 (e.g. libcublas.so.13) on this machine:
# the toolkit's, the linker cache's, or a pip wheel's (nvidia/cu*/lib, or
# nvidia/$2/lib: nvidia-cublas, nvidia-nccl).
find_machine_lib() {
  local d
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -e "$d/$1" ] && { echo "$d"; return; }
  done
  d="$(ldconfig -p 2>/dev/null | awk -v lib="$1" '$1 == lib { print $NF; exit }')"
  [ -n "$d" ] && { dirname "$d"; return; }
  python3 - "$1" "$2" <<'PY' 2>/dev/null || true
import glob, os, site, sys
lib, wheel = sys.argv[1], sys.argv[2]
for root in site.getsitepackages() + [site.getusersitepackages()]:
    for hit in glob.glob(os.path.join(root, "nvidia", "cu*", "lib", lib)) + \
               glob.glob(os.path.join(root, "nvidia", wheel, "lib", lib)):
        print(os.path.dirname(hit)); sys.exit(0)
PY
}

do_run() {
  local out="${OUT:-gpu-results}"
  mkdir -p "$out"
  local report="$out/gpu_check.txt"
  : > "$report"
  say() { echo "$*" | tee -a "$report"; }
  [ -f "$pack" ] || { say "gpu check: $pack is missing: run tools/gpu/check.sh pack first (on the build machine)"; exit 2; }
  work="$(mktemp -d)"  # global: the EXIT trap runs after this function returns
  trap 'rm -rf "$work"' EXIT
  if command -v xz >/dev/null; then
    xz -dc "$pack" | tar -C "$work" -xf -
  else
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1], "r:xz").extractall(sys.argv[2])' "$pack" "$work"
  fi
  local p="$work/pack"
  say "gpu check of build $(cat "$p/VERSION") on $(hostname) at $(date -u +%FT%TZ)"
  if command -v nvidia-smi >/dev/null; then
    say "device: $(nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader 2>&1 | head -1)"
  else
    say "device: no nvidia-smi on this machine"
  fi
  local cublas nccl libpath
  cublas="$(find_machine_lib libcublas.so.13 cublas)"
  nccl="$(find_machine_lib libnccl.so.2 nccl)"
  # The driver's libcuda.so.1, which cudart opens at run time: where the
  # machine's linker cache says (the packed loader reads that cache too).
  local driver
  driver="$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 / { print $NF; exit }')"
  libpath="$p/lib${cublas:+:$cublas}${nccl:+:$nccl}:$p/cudart${driver:+:$(dirname "$driver")}"
  say "cuBLAS from: ${cublas:-not found (the CUDA backend cannot load: install the CUDA 13 toolkit or nvidia-cublas)}"
  say "NCCL from: ${nccl:-not found (the binaries cannot load: install NCCL or nvidia-nccl-cu13)}"
  # Every packed binary runs through the packed loader.
  # The device run's budget: every step's timeout is at most what is left
  # of it (the issue: under 5 minutes in all, unpacking included).
  local start=$SECONDS budget=280
  cap() {  # cap WANT: WANT seconds, or what is left of the budget if less (at least 1: timeout 0 never ends)
    local left=$((budget - (SECONDS - start)))
    if [ "$left" -lt 1 ]; then left=1; fi
    if [ "$left" -lt "$1" ]; then echo "$left"; else echo "$1"; fi
  }
  run_packed() {  # run_packed SECONDS BINARY ARGS...: a packed binary through the packed loader
    local t="$1" bin="$2"
    shift 2
    timeout "$t" "$p/lib/ld-linux-x86-64.so.2" --library-path "$libpath" "$p/bin/$bin" "$@"
  }
  local rc=0
  # 1. Every GPU test (the equivalence matrix, resume, the kernels against
  # the CPU), one JUnit record per test case, read back into verdicts.
  run_packed "$(cap 110)" gpu_device_tests -r junit -o "$out/gpu_device_tests.xml" \
    > "$out/gpu_device_tests.txt" 2>&1 || rc=$?
  if [ "$rc" -eq 77 ]; then
    say "no device: $(head -1 "$out/gpu_device_tests.txt")"
    say "result: no device, nothing checked"
    return 0
  fi
  local failed=0 tests_rc=$rc
  [ "$rc" -eq 0 ] || failed=1
  say "gpu_device_tests: exit $rc"
  local cases="$out/test_cases.txt"
  python3 - "$out/gpu_device_tests.xml" > "$cases" 2>&1 <<'PY' || echo "  (no readable JUnit record: see gpu_device_tests.txt)" > "$cases"
import sys, xml.etree.ElementTree as ET
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    bad = case.find("failure") is not None or case.find("error") is not None
    print("  %-6s %7.2f s: %s" % ("FAILED" if bad else "passed", float(case.get("time", "0")), case.get("name")))
PY
  tee -a "$report" < "$cases"

  # 2. The GPU data plane's figures (tools/bench/gpu_slot_bench.cpp): slot
  # gather/scatter against a device-to-device cudaMemcpy, staging against a
  # pinned cudaMemcpy, DLRM lrpp_delayed against ideal at batch 16384.
  rc=0
  ( cd "$work" && run_packed "$(cap 75)" gpu_slot_bench --csv "$out/gpu_slot_bench.csv" ) \
    > "$out/gpu_slot_bench.txt" 2>&1 || rc=$?
  say "gpu_slot_bench: exit $rc"
  sed 's/^/  /' "$out/gpu_slot_bench.txt" | tee -a "$report"
  [ "$rc" -eq 0 ] || failed=1

  # 3. A short run of the default config (DLRM, Criteo-Kaggle shape at 1 %,
  # 2 trainers, lrpp_delayed) on the GPU (its waits by CUDA events), then
  # the same on the CPU beside it (last: the least needed).
  train_run() {  # train_run BACKEND SECONDS
    local backend="$1"
    sed -e "s/^backend = \"auto\"/backend = \"$backend\"/" -e 's/^max_batches = 0 /max_batches = 64 /' \
        -e "0,/^name = \"local\"/s//name = \"gpu-check-$backend\"\noutput_dir = \"${work//\//\\/}\/run-$backend\"/" \
        configs/local.toml > "$work/$backend.toml"
    rc=0
    ( cd "$work" && run_packed "$(cap "$2")" actorrec train --config "$work/$backend.toml" ) \
      > "$out/train_$backend.txt" 2>&1 || rc=$?
    say "actorrec train (backend $backend, 64 batches of 2048): exit $rc"
    grep -E '^backend: |^summary: |compute stream waited|^eval final' "$out/train_$backend.txt" | sed 's/^/  /' | tee -a "$report" || true
    if [ -f "$work/run-$backend/metrics.jsonl" ]; then
      cp "$work/run-$backend/metrics.jsonl" "$out/metrics_$backend.jsonl"
      say "  $(grep -o '"parameter_digest":"[0-9a-f]*"' "$work/run-$backend/metrics.jsonl" | tail -1)"
    fi
    [ "$rc" -eq 0 ] || failed=1
  }
  train_run cuda 40

  # 4. issue 21's comparison: train_bench (ideal mode, one trainer: one model
  # replica on the GPU) against the same DLRM in PyTorch on the same GPU
  # (tools/bench/dlrm_torch.py; the machine's PyTorch), both at row_scale
  # 0.05 of the Criteo Kaggle tables, one line per batch size in
  # vs_pytorch.txt. A timed-out or skipped side leaves its rate empty; the
  # comparison does not decide the result.
  local vs="$out/vs_pytorch.txt" batch ours theirs
  echo "batch actorrec_samples_per_s pytorch_samples_per_s actorrec_over_pytorch (train_bench ideal, 1 trainer, backend cuda; dlrm_torch.py --device cuda; row_scale 0.05)" > "$vs"
  for batch in 2048 16384; do
    rc=0
    run_packed "$(cap 45)" train_bench 12 0.05 1 "ideal (actors)" --batch "$batch" --backend cuda \
      --csv "$out/train_bench_$batch.csv" > "$out/train_bench_$batch.txt" 2>&1 || rc=$?
    ours="$(awk -F, '$1 == "ideal" { print $3 }' "$out/train_bench_$batch.csv" 2>/dev/null || true)"
    say "train_bench (backend cuda, batch $batch, ideal, 1 trainer): exit $rc: ${ours:-no rate} samples/s"
    rc=0
    timeout "$(cap 30)" python3 tools/bench/dlrm_torch.py --device cuda --batch "$batch" --row-scale 0.05 \
      > "$out/dlrm_torch_$batch.txt" 2>&1 || rc=$?
    theirs="$(sed -n 's/.*samples_per_s=\([0-9.]*\).*/\1/p' "$out/dlrm_torch_$batch.txt" | tail -1)"
    say "dlrm_torch.py (cuda, batch $batch): exit $rc: ${theirs:-no rate} samples/s"
    local ratio=""
    if [ -n "$ours" ] && [ -n "$theirs" ]; then ratio="$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.3f", a / b }')"; fi
    echo "$batch ${ours:--} ${theirs:--} ${ratio:--}" >> "$vs"
    say "  actorrec / PyTorch at batch $batch: ${ratio:-n/a}"
  done
  train_run cpu 30

  # The verdicts, each from what the steps above wrote.
  verdict_of() {  # verdict_of PATTERN: passed/FAILED/not run for the test cases named like PATTERN
    local lines
    lines="$(grep -E "s: .*$1" "$cases" || true)"
    if [ -z "$lines" ]; then echo "not run"; elif grep -q FAILED <<< "$lines"; then echo "FAILED"; else echo "passed"; fi
  }
  csv_verdict() {  # csv_verdict WHAT: "ratio R (goal G): VERDICT" from gpu_slot_bench.csv
    awk -F, -v w="$1" 'index($1, w) == 1 { printf "ratio %s (goal %s): %s", $6, $7, $8; found = 1 } END { if (!found) printf "not measured" }' \
      "$out/gpu_slot_bench.csv" 2>/dev/null || echo "not measured"
  }
  say "verdicts:"
  say "  GPU tests: $(grep -c '^  passed' "$cases" || true) passed, $(grep -c '^  FAILED' "$cases" || true) failed (exit $tests_rc)"
  say "  equivalence matrix on the device (6 modes x L 1, 3, 20 x W 1, 2 = no_cache): $(verdict_of 'every mode, L = 1, 3, 20')"
  say "  resumed GPU run = uninterrupted run: $(verdict_of 'resumed from a checkpoint')"
  say "  slot gather vs device-to-device cudaMemcpy: $(csv_verdict 'slot gather')"
  say "  slot scatter vs device-to-device cudaMemcpy: $(csv_verdict 'slot scatter')"
  say "  H2D through the staging ring vs pinned cudaMemcpy: $(csv_verdict 'H2D through')"
  say "  DLRM batch 16384 lrpp_delayed / ideal per iteration: $(csv_verdict 'DLRM lrpp_delayed')"
  say "  run time: $((SECONDS - start)) s of the $budget s budget"
  if [ "$failed" -eq 0 ]; then say "result: passed"; else say "result: FAILED (see $out)"; fi
  return "$failed"
}

case "${1:-}" in
  pack) do_pack ;;
  run) do_run ;;
  *) echo "usage: tools/gpu/check.sh pack|run" >&2; exit 2 ;;
esac
