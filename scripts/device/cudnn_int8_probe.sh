#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: builds and runs bench/gpu/cudnn_int8_probe.cu (which quantized
# convolution graphs cuDNN's graph API runs on this GPU, how fast, against fp16, on resnet50's shapes) against
# the cuDNN of the Python environment (nvidia.cudnn). Usage: scripts/device/cudnn_int8_probe.sh [BATCH [PLANS]]
set -euo pipefail
out=${OUT:-/tmp/kiln-cudnn-int8-probe}
mkdir -p "$out"
source scripts/device/cudnn_env.sh
nvcc -O2 -std=c++17 -arch=native -Wno-deprecated-declarations -I"$cudnn_root/include" \
  bench/gpu/cudnn_int8_probe.cu -L"$cudnn_root/lib" -l:libcudnn.so.9 -o /tmp/cudnn_int8_probe
/tmp/cudnn_int8_probe "$@" | tee "$out/cudnn_int8_probe.txt"
