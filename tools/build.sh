#!/usr/bin/env bash
# Installs what is missing and builds actorrec into build/ (or $ACTORREC_BUILD_DIR).
# CUDA is used when nvcc is found (meson option cuda=auto); pass meson options
# after `--`, e.g. tools/build.sh -- -Dcuda=disabled
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
build="${ACTORREC_BUILD_DIR:-build}"
shift_args=()
if [ "${1:-}" = "--" ]; then shift; shift_args=("$@"); fi
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "${shift_args[@]}"
elif [ ${#shift_args[@]} -gt 0 ]; then
  meson configure "$build" "${shift_args[@]}"
fi
ninja -C "$build"
