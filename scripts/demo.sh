#!/usr/bin/env bash
# Kiln's main job on the bundled example model: set up, build, inspect the program and run it node by node
# through libtorch, comparing with the outputs torch computed when it exported the model.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh kiln
model=tests/data/tiny_convnet
build/tools/kiln/kiln inspect "$model/model.pt2"
build/tools/kiln/kiln run "$model/model.pt2" --reference --inputs "$model/io_0.npz" --compare "$model/io_0.npz"
