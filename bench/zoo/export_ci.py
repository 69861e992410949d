#!/usr/bin/env python3
"""Exports the CPU-sized zoo subset that CI compiles (tests/data/zoo): a few transformers families in tiny configs
(hidden 32, vocab 128, 2 layers; bench/zoo/models.py use_tiny_configs), exported as the zoo exports them (grad mode
on, dynamic shapes where the family has them), each a fixture folder like tests/data's (model.pt2, io_0.npz,
meta.json) written by tools/export_fixtures.py. Run where torch 2.11 and transformers are installed:
  python3 bench/zoo/export_ci.py --out tests/data/zoo
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))

import models  # noqa: E402
from export_fixtures import Fixture, export_fixture  # noqa: E402

# Families: an encoder, a decoder with rotary embeddings under torch.no_grad (wrap_with_set_grad_enabled), an
# encoder-decoder, a vision transformer, a convolutional vision model and an audio encoder.
CI_MODELS = ["bert", "llama", "t5", "hf_vit", "hf_convnext", "whisper_encoder"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("names", nargs="*", default=CI_MODELS)
    p.add_argument("--out", default="tests/data/zoo")
    args = p.parse_args()
    models.use_tiny_configs()
    failed = []
    for name in args.names:
        entry = models.ZOO[name]
        # Dynamic shapes where the family has them; static where torch.export refuses them (Llama's sequence in
        # this tiny config), as the zoo does.
        for dynamic in ([entry.dynamic, None] if entry.dynamic else [None]):
            fixture = Fixture(lambda name=name: models.build(name), [entry.inputs], dynamic, needs=entry.needs)
            try:
                export_fixture(name, fixture, args.out, core_aten=False)
                break
            except Exception as error:  # report and go on with the others
                print(f"{name}: FAILED{' (dynamic)' if dynamic else ''}: {type(error).__name__}: {error}",
                      file=sys.stderr)
        else:
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
