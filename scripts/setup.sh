#!/usr/bin/env bash
# Installs the Debian 12 packages Kiln builds and tests with. Idempotent: installs only what is missing, and runs
# apt-get update only when something is missing. Run as root (or with sudo).
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache
  libtorch-dev libopenblas-dev libdnnl-dev
  nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev libfmt-dev zlib1g-dev libssl-dev
  python3-numpy
  python3-torch python3-pytest
  clang-14 libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages are installed"
  exit 0
fi

echo "setup: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    exec sudo "$0" "$@"
  fi
  echo "setup: error: these packages are missing and installing them needs root (run as root or install sudo):" >&2
  echo "  apt-get install ${missing[*]}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y "${missing[@]}"
echo "setup: done"
