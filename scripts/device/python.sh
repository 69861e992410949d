#!/usr/bin/env bash
# Run ON THE GPU MACHINE from the repository root (carry .device-pkgs, see fetch_packages.sh): builds `kiln` and
# libkiln_torch.so against the installed torch (scripts/device/build.sh, build-device), installs the Python package
# from that build with `pip install --no-build-isolation .` (no network there), then, from outside the source tree:
#   1. the pytest suite tests/python (the torch >= 2.5 and GPU tests included)     -> $OUT/pytest.log
#   2. issue 17's one-liner: resnet50 fp16 on cuda through kiln.compile           -> $OUT/oneliner.log
#   3. scripts/device/python_checks.py: torch.compile(backend="kiln") on resnet50 and BERT-base, kiln.save and
#      kiln.load / torch.save and torch.load of resnet50 in a fresh process      -> $OUT/checks.log
# A summary is printed last. KILN_SKIP_BUILD=1 reuses build-device as it is.
set -uo pipefail
repo=$(pwd)
out=${OUT:-/tmp/kiln-python}
mkdir -p "$out"
source scripts/device/cudnn_env.sh
if [ -z "${KILN_SKIP_BUILD:-}" ]; then
  KILN_TARGETS="kiln kiln_torch" scripts/device/build.sh build-device -DKILN_WITH_CUDA=ON -DKILN_BUILD_TESTS=OFF \
    "${cudnn_cmake_args[@]}" >"$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -40; tail -20 "$out/build.log"; exit 2; }
fi
export LD_LIBRARY_PATH="/tmp/kiln-deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
PIP_BREAK_SYSTEM_PACKAGES=1 KILN_BUILD_DIR=build-device python3 -m pip install --no-build-isolation --no-deps . >"$out/pip.log" 2>&1 \
  || { tail -30 "$out/pip.log"; exit 2; }
tail -1 "$out/pip.log"
cd /tmp  # the installed package, not python/ of the source tree
python3 -c "import torch, kiln; print('kiln', kiln.__version__, 'from', kiln.__file__, 'torch', torch.__version__)"
KILN_CLI="$repo/build-device/tools/kiln/kiln" KILN_TEST_DATA_DIR="$repo/tests/data" \
  timeout 900 python3 -m pytest -q -rs -p no:cacheprovider "$repo/tests/python" >"$out/pytest.log" 2>&1
pytest_rc=$?
py=$(command -v python || command -v python3)
timeout 600 "$py" -c "import torch, torchvision, kiln; m = torchvision.models.resnet50().eval().cuda(); x = torch.randn(8,3,224,224, device='cuda'); km = kiln.compile(m, inputs=[x], precision='fp16', backend='cuda'); print((km(x) - m(x)).abs().max())" \
  >"$out/oneliner.log" 2>&1
oneliner_rc=$?
KILN_CLI="$repo/build-device/tools/kiln/kiln" timeout 1200 python3 "$repo/scripts/device/python_checks.py" --work /tmp/kiln-python-work >"$out/checks.log" 2>&1
checks_rc=$?
echo "---- pytest (exit $pytest_rc):"; tail -15 "$out/pytest.log"
echo "---- one-liner (exit $oneliner_rc):"; tail -3 "$out/oneliner.log"
echo "---- checks (exit $checks_rc):"; grep -E "^(CHECK|RESULT)" "$out/checks.log" || tail -20 "$out/checks.log"
[ "$pytest_rc" -eq 0 ] && [ "$oneliner_rc" -eq 0 ] && [ "$checks_rc" -eq 0 ]
