#!/usr/bin/env bash
# Configures and builds Kiln into build/ (Release with debug info, Ninja). Extra arguments go to ninja.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${KILN_JOBS:-$(nproc)}"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_BUILD_BENCH=OFF
ninja -C build -j"$jobs" "$@"
