#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root: builds and runs bench/gpu/cudnn_host_cost.cpp (host cost of a
# convolution call through cuDNN's legacy API against its graph API with a prebuilt plan) against the cuDNN that
# the Python environment ships (nvidia.cudnn), the one the CUDA backend is built with there.
set -euo pipefail
out=${OUT:-/tmp/kiln-cudnn-host-cost}
mkdir -p "$out"
cudnn_root=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__) if nvidia.cudnn.__file__ else nvidia.cudnn.__path__[0])')
export LD_LIBRARY_PATH="$cudnn_root/lib:${LD_LIBRARY_PATH:-}"
nvcc -O2 -std=c++17 -Wno-deprecated-declarations -I"$cudnn_root/include" bench/gpu/cudnn_host_cost.cpp \
  -L"$cudnn_root/lib" -l:libcudnn.so.9 -o /tmp/cudnn_host_cost
/tmp/cudnn_host_cost | tee "$out/cudnn_host_cost.txt"
