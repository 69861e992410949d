#!/usr/bin/env bash
# Sets up, builds everything and runs every test (GPU-labeled tests are skipped where no GPU is present).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
ctest --test-dir build --output-on-failure -j"${KILN_JOBS:-$(nproc)}" -LE gpu
