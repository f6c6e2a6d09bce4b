#!/usr/bin/env bash
# Installs what is missing, builds, and trains on the embedded single-process
# default (configs/local.toml). Extra arguments go to `actorrec train`,
# e.g. tools/run.sh --config configs/local.toml
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh >&2
exec "${ACTORREC_BUILD_DIR:-build}/actorrec" train "$@"
