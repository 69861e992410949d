#!/usr/bin/env python3
"""Trains two small models on synthetic tasks with a known answer and exports them as users export them, so that
quantized engines can be judged by task accuracy, not only by their distance to fp32 (needs torch >= 2.9, numpy;
a GPU makes it take seconds, a CPU minutes).

Tasks (data drawn from fixed seeds; the label is known by construction):
  glyph_cnn          1x32x32 images: one of 10 fixed random 7x7 binary glyphs stamped at a random position over
                     Gaussian noise (sigma 0.35); the label is the glyph. A 3-convolution CNN with batch norm,
                     a global average pool and a linear classifier.
  majority_encoder   32 tokens over a vocabulary of 16; the label is the most frequent token (ahead of every other
                     by at least 2). Token and position embeddings, 2 pre-norm encoder blocks (4-head attention,
                     GELU MLP), a mean pool and a linear classifier.

Each model is trained with Adam on freshly drawn batches, put in eval mode and exported with torch.export.export
(grad mode on, a dynamic batch of 1..4096). Per model, a folder under --out:
  model.pt2         the exported program
  calib.npz         input_0: 512 calibration inputs drawn like the training data (docs/quantization.md's format)
  test.npz          input_0: --test held-out inputs from another seed
  labels.npz        labels (int64) of the held-out inputs and eager_fp32 (int64): eager PyTorch's predictions
  meta.json         steps, final training loss, eager fp32 accuracy on the held-out inputs

Usage: python3 tools/train_synthetic.py --out /tmp/synthetic [--steps N] [--test 2048]
"""

import argparse
import json
import os
import sys
import time

try:
    import numpy as np
    import torch
    from torch import nn
    from torch.export import Dim
except ImportError as error:  # pragma: no cover - the script needs torch
    sys.exit(f"train_synthetic: {error}; run this where torch >= 2.9 and numpy are installed")

GLYPHS, GLYPH, IMAGE, NOISE = 10, 7, 32, 0.35
VOCAB, LENGTH, WIDTH = 16, 32, 64


def glyph_bank() -> torch.Tensor:
    g = torch.Generator().manual_seed(7)
    return (torch.rand(GLYPHS, GLYPH, GLYPH, generator=g) < 0.5).float()


def glyph_batch(n: int, g: torch.Generator, bank: torch.Tensor):
    labels = torch.randint(0, GLYPHS, (n,), generator=g)
    images = torch.randn(n, 1, IMAGE, IMAGE, generator=g) * NOISE
    rows = torch.randint(0, IMAGE - GLYPH + 1, (n, 1, 1), generator=g) + torch.arange(GLYPH).view(1, GLYPH, 1)
    cols = torch.randint(0, IMAGE - GLYPH + 1, (n, 1, 1), generator=g) + torch.arange(GLYPH).view(1, 1, GLYPH)
    images[torch.arange(n).view(n, 1, 1), 0, rows, cols] += bank[labels]
    return images, labels


def majority_batch(n: int, g: torch.Generator):
    """The label token at 6..10 random positions, other tokens elsewhere; rows where another token comes within 1
    of the label's count are drawn again."""
    labels = torch.randint(0, VOCAB, (n,), generator=g)
    occurrences = torch.randint(6, 11, (n,), generator=g)
    tokens = torch.empty(n, LENGTH, dtype=torch.int64)
    todo = torch.arange(n)
    while todo.numel():
        lab, m = labels[todo].view(-1, 1), occurrences[todo].view(-1, 1)
        other = torch.randint(0, VOCAB - 1, (todo.numel(), LENGTH), generator=g)
        other = other + (other >= lab).long()  # any token but the label
        rank = torch.rand(todo.numel(), LENGTH, generator=g).argsort(dim=1).argsort(dim=1)
        rows = torch.where(rank < m, lab, other)
        counts = nn.functional.one_hot(rows, VOCAB).sum(dim=1).scatter(1, lab, 0)
        ok = m.view(-1) >= counts.max(dim=1).values + 2
        tokens[todo[ok]] = rows[ok]
        todo = todo[~ok]
    return tokens, labels


class GlyphCNN(nn.Module):
    def __init__(self):
        super().__init__()

        def block(cin, cout, stride):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())

        self.features = nn.Sequential(block(1, 16, 1), block(16, 32, 2), block(32, 64, 2), block(64, 64, 1))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(64, GLYPHS)

    def forward(self, x):
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


class EncoderBlock(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))

    def forward(self, x):
        b, t, w = x.shape
        q, k, v = self.qkv(self.norm1(x)).reshape(b, t, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4)
        attn = torch.softmax(q @ k.transpose(-2, -1) / (w // self.heads) ** 0.5, dim=-1)
        x = x + self.proj((attn @ v).transpose(1, 2).reshape(b, t, w))
        return x + self.mlp(self.norm2(x))


class MajorityEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.position = nn.Parameter(torch.randn(1, LENGTH, WIDTH) * 0.02)
        self.blocks = nn.Sequential(EncoderBlock(WIDTH, 4), EncoderBlock(WIDTH, 4))
        self.norm = nn.LayerNorm(WIDTH)
        self.classifier = nn.Linear(WIDTH, VOCAB)

    def forward(self, tokens):
        x = self.blocks(self.embed(tokens) + self.position)
        return self.classifier(self.norm(x).mean(dim=1))


def train(model: nn.Module, draw, steps: int, device: str, lr: float) -> float:
    model.to(device).train()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    g = torch.Generator().manual_seed(1)
    loss = torch.tensor(0.0)
    for _ in range(steps):
        x, y = draw(256, g)
        loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return float(loss)


def save_npz(path: str, **arrays) -> None:
    np.savez(path, **{k: v.numpy() if isinstance(v, torch.Tensor) else v for k, v in arrays.items()})


def run(name: str, model: nn.Module, draw, args, device: str, lr: float, steps: int) -> dict:
    start = time.time()
    steps = args.steps or steps
    loss = train(model, draw, steps, device, lr)
    model = model.cpu().eval()
    test_x, test_y = draw(args.test, torch.Generator().manual_seed(1000))
    calib_x, _ = draw(512, torch.Generator().manual_seed(2000))
    with torch.inference_mode():
        predicted = model(test_x).argmax(dim=1)
    accuracy = float((predicted == test_y).float().mean())
    out = os.path.join(args.out, name)
    os.makedirs(out, exist_ok=True)
    batch = Dim("batch", min=1, max=4096)
    # A copy: a slice would save all of test_x as the program's sample input.
    ep = torch.export.export(model, (test_x[:2].clone(),), dynamic_shapes=({0: batch},))
    torch.export.save(ep, os.path.join(out, "model.pt2"))
    save_npz(os.path.join(out, "calib.npz"), input_0=calib_x)
    save_npz(os.path.join(out, "test.npz"), input_0=test_x)
    save_npz(os.path.join(out, "labels.npz"), labels=test_y, eager_fp32=predicted)
    meta = {"name": name, "torch": torch.__version__, "steps": steps, "final_loss": round(loss, 5),
            "eager_fp32_accuracy": accuracy, "held_out": args.test, "seconds": round(time.time() - start, 1)}
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=0, help="training steps (default: 1000 CNN, 3000 encoder)")
    p.add_argument("--test", type=int, default=2048)
    args = p.parse_args()
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    bank = glyph_bank()
    for meta in (run("glyph_cnn", GlyphCNN(), lambda n, g: glyph_batch(n, g, bank), args, device, 3e-3, 1000),
                 run("majority_encoder", MajorityEncoder(), majority_batch, args, device, 1e-3, 3000)):
        print(json.dumps(meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
