#!/usr/bin/env bash
# Installs the already built tree (build/, no rebuild of Kiln) into a temporary prefix, builds examples/cpp against
# that prefix only (not the build tree), compiles the bundled tiny_mlp fixture with the installed kiln and runs the
# example on it, checking its outputs against the fixture's reference. The example links Kiln::runtime, the torch-free
# runtime: no libtorch may be among the libraries it loads. Prints how long each part took.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
t0=$(date +%s%N)
cmake --install "$build" --prefix "$work/prefix" >/dev/null
t1=$(date +%s%N)
cmake -S examples/cpp -B "$work/example" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
ninja -C "$work/example" >/dev/null
t2=$(date +%s%N)
# The example must not reach into the build tree: nothing it links or includes names it.
if grep -q "$(realpath "$build")" "$work/example/build.ninja"; then
  echo "check_install: the example's build refers to the build tree" >&2
  exit 1
fi
"$work/prefix/bin/kiln" -q compile tests/data/tiny_mlp/model.pt2 -o "$work/tiny_mlp.kiln" --no-cache
if ldd "$work/example/run_module" | grep -E "libtorch|libc10"; then
  echo "check_install: the example on Kiln::runtime loads libtorch" >&2
  exit 1
fi
"$work/example/run_module" "$work/tiny_mlp.kiln" tests/data/tiny_mlp/io_0.npz
t3=$(date +%s%N)
ms() { echo $((($2 - $1) / 1000000)); }
echo "check_install: passed (install $(ms "$t0" "$t1") ms, example configure+build $(ms "$t1" "$t2") ms," \
  "compile+run $(ms "$t2" "$t3") ms)"
