#!/usr/bin/env bash
# Kiln's main job on the bundled example model: set up, build, inspect the program, compile it to a .kiln module,
# run the module comparing with the outputs torch computed when it exported the model, then bench it against
# libtorch eager.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh kiln
model=tests/data/tiny_convnet
build/tools/kiln/kiln inspect "$model/model.pt2"
build/tools/kiln/kiln compile "$model/model.pt2" -o build/tiny_convnet.kiln
build/tools/kiln/kiln run build/tiny_convnet.kiln --inputs "$model/io_0.npz" --compare "$model/io_0.npz" --atol 1e-3 \
  --rtol 1e-3
build/tools/kiln/kiln bench build/tiny_convnet.kiln --inputs "$model/io_0.npz"
