#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root (it has CUDA, cmake, ninja and Python torch 2.11, but no apt):
# unpacks the carried .deb files into a private prefix (never into /), then configures and builds Kiln against
# the installed torch's libtorch. Usage: scripts/device/build.sh [BUILD_DIR] [extra cmake args...]
# KILN_DEVICE_PKGS: the folder of carried .deb files (default .device-pkgs).
set -euo pipefail
build_dir=${1:-build-device}
shift || true
prefix=/tmp/kiln-deps
if [ ! -d "$prefix/usr" ]; then
  mkdir -p "$prefix"
  for deb in "${KILN_DEVICE_PKGS:-.device-pkgs}"/*.deb; do dpkg -x "$deb" "$prefix"; done
fi
export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
# The carried zlib1g-dev has the headers and a static libz.a (its libz.so points at a runtime not carried); the
# machine's own shared libz links into libkiln_torch.so, which a non-PIC libz.a cannot.
zlib=()
system_libz=$(ls /usr/lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libz.so.1 2>/dev/null | head -1)
[ -n "$system_libz" ] && zlib=(-DZLIB_LIBRARY="$system_libz" -DZLIB_LIBRARY_RELEASE="$system_libz" -DZLIB_INCLUDE_DIR="$prefix/usr/include")
# The compiler: the system's g++ (KILN_CXX overrides). Left to itself CMake picked /opt/gcc/bin/g++ there, a
# toolchain whose libstdc++ links part of itself statically (locale internals, ostream inserters) into what it
# builds; inside a Python process, where the system libstdc++ is loaded, libkiln_torch.so then mixed its own
# uninitialized copy of std::locale with the system's and crashed at the first `ostream << unsigned long`.
cxx=${KILN_CXX:-/usr/bin/g++}
cc=${KILN_CC:-/usr/bin/gcc}
compilers=()
[ -x "$cxx" ] && compilers+=(-DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CUDA_HOST_COMPILER="$cxx")
[ -x "$cc" ] && compilers+=(-DCMAKE_C_COMPILER="$cc")
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${compilers[@]}" \
  -DCMAKE_PREFIX_PATH="$torch_prefix;$prefix/usr;$prefix/usr/lib/x86_64-linux-gnu/cmake" \
  -DCMAKE_INCLUDE_PATH="$prefix/usr/include" -DCMAKE_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu" \
  -DKILN_BUILD_BENCH=OFF "${zlib[@]}" "$@"
# KILN_TARGETS (space-separated) limits what is built; default: everything.
ninja -C "$build_dir" -j"$(nproc)" ${KILN_TARGETS:-}
