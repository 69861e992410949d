"""Run ON THE GPU MACHINE: exports a model and prints, for the first scaled_dot_product_attention node, its
arguments (is_causal, enable_gqa, scale) and the chain of nodes that produces its attention mask (op, shape, dtype,
strides of the value), so that one can see whether the mask is a broadcast of a per-key row, a causal pattern or
a full tensor.
Usage: python3 scripts/device/sdpa_mask_producers.py [MODEL] [BATCH]   (default bert_base 32)
MODEL: a bench/gpu/bench_gpu.py model (bert_base, or a torchvision name), or zoo:NAME for a bench/zoo/models.py
model (e.g. zoo:llama, zoo:mistral, zoo:gpt_neox; its own inputs, BATCH ignored)."""
import os
import sys

import torch

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(root, "bench", "gpu"))
sys.path.insert(0, os.path.join(root, "bench", "zoo"))
import bench_gpu  # noqa: E402

name = sys.argv[1] if len(sys.argv) > 1 else "bert_base"
batch = int(sys.argv[2]) if len(sys.argv) > 2 else 32
gen = torch.Generator().manual_seed(1234)
if name.startswith("zoo:"):
    import models as zoo  # noqa: E402

    model = zoo.build(name[4:])
    inputs = zoo.ZOO[name[4:]].inputs(gen)
else:
    model = bench_gpu.build_model(name).eval()
    inputs = bench_gpu.make_inputs(name, batch, gen)
ep = torch.export.export(model, inputs)
sdpa = [n for n in ep.graph.nodes if "scaled_dot_product" in str(n.target)]
if not sdpa:
    sys.exit(f"{name}: no scaled_dot_product_attention node in the export")
print(f"{len(sdpa)} attention nodes; first: {sdpa[0].format_node()}")
mask = sdpa[0].args[3] if len(sdpa[0].args) > 3 else sdpa[0].kwargs.get("attn_mask")
seen, todo = set(), [(mask, 0)]
while todo:
    node, depth = todo.pop()
    if not isinstance(node, torch.fx.Node) or node in seen or depth > 12:
        continue
    seen.add(node)
    val = node.meta.get("val")
    desc = f"{tuple(val.shape)} {val.dtype} strides {val.stride()}" if isinstance(val, torch.Tensor) else ""
    print("  " * depth + f"{node.name}: {node.target} {desc}")
    todo += [(a, depth + 1) for a in node.all_input_nodes]
