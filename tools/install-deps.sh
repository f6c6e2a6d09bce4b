#!/usr/bin/env bash
# Installs the Debian packages actorrec builds against. Idempotent: packages
# already present are skipped, and apt is not touched when nothing is missing.
set -euo pipefail

packages=(
  meson ninja-build g++ pkg-config
  libcaf-dev            # CAF 0.17.6, core + io: the actor runtime and middleman
  capnproto libcapnp-dev  # message schemas and their compiler
  libuv1-dev
  catch2                # unit tests (Catch2 2.13)
  libtomlplusplus-dev   # configs
  libcli11-dev          # the actorrec command line
  libspdlog-dev         # logs
  libopenblas-dev       # CPU GEMMs
  libdnnl-dev           # oneDNN sgemm: the CPU backend prefers it (optional at build time)
  libgloo-dev           # CPU collectives
  libxxhash-dev         # checksums of data files and config digests
  zlib1g-dev libzstd-dev  # gzip- and zstd-compressed text input
  libssl-dev            # HMAC-SHA256 for the cluster-secret handshake
  valgrind              # tests: runs actorrec on a CPU without AVX-512 (the vector clones' equality)
  chromium              # tests: the inspector's page in a headless browser (about 45 s to install)
  tmux                  # tests: `actorrec inspect`'s live view in a terminal
  python3-torch         # tests and `actorrec bench train --vs-pytorch`: the PyTorch DLRM peer (for /usr/bin/python3)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
  else
    echo "install-deps: need root to install ${missing[*]}; run as root or install sudo" >&2
    exit 1
  fi
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
