"""Issue 17's checks on the GPU machine (torch 2.11, scripts/device/python.sh runs this): torch.compile(backend="kiln")
on resnet50 and BERT-base, and kiln.save / kiln.load and torch.save / torch.load of a compiled resnet50 in a fresh
process. Prints one CHECK line per check and a RESULT line; exits 1 when any failed."""

import argparse
import os
import subprocess
import sys
import time

import torch

import kiln
from kiln import _dynamo

results = []


def check(name, ok, detail):
    results.append(ok)
    print("CHECK %-40s %s  %s" % (name, "ok" if ok else "FAILED", detail), flush=True)


def max_diff(a, b):
    return (a.float() - b.float()).abs().max().item()


def torch_compile_resnet50():
    import torchvision
    torch._dynamo.reset()
    m = torchvision.models.resnet50().eval().cuda()
    x = torch.randn(8, 3, 224, 224, device="cuda")
    before = dict(_dynamo.stats)
    start = time.time()
    with torch.no_grad():
        opt = torch.compile(m, backend="kiln", dynamic=False)
        got = opt(x)
        ref = m(x)
    compiled = _dynamo.stats["compiled"] - before["compiled"]
    fallback = _dynamo.stats["fallback"] - before["fallback"]
    diff = max_diff(got, ref)
    # fp32 cuda engines (TF32 off) against eager: 1e-2 over 50 layers of random-weight activations of size ~1e0.
    check("torch.compile resnet50 (cuda fp32)", compiled >= 1 and fallback == 0 and diff < 1e-2,
          "graphs compiled %d, left to PyTorch %d, max abs diff %.3g, %.1f s" % (compiled, fallback, diff,
                                                                                time.time() - start))


def torch_compile_bert():
    import transformers
    torch._dynamo.reset()
    torch.manual_seed(0)
    m = transformers.BertModel(transformers.BertConfig()).eval().cuda()
    ids = torch.randint(1, 30000, (2, 128), device="cuda")
    mask = torch.ones(2, 128, dtype=torch.int64, device="cuda")
    before = dict(_dynamo.stats)
    start = time.time()
    with torch.no_grad():
        opt = torch.compile(m, backend="kiln", dynamic=False)
        got = opt(input_ids=ids, attention_mask=mask).last_hidden_state
        ref = m(input_ids=ids, attention_mask=mask).last_hidden_state
    compiled = _dynamo.stats["compiled"] - before["compiled"]
    fallback = _dynamo.stats["fallback"] - before["fallback"]
    diff = max_diff(got, ref)
    check("torch.compile BERT-base (cuda fp32)", compiled >= 1 and diff < 1e-2,
          "graphs compiled %d, left to PyTorch %d, max abs diff %.3g, %.1f s" % (compiled, fallback, diff,
                                                                                time.time() - start))


FRESH = r"""
import sys, torch, kiln
work = sys.argv[1]
x, ref = torch.load(work + "/io.pt")
km = kiln.load(work + "/resnet50.kiln")
a = km(x)
model = torch.load(work + "/model.pt", weights_only=False)
b = model(x)
print("fresh-process diffs %.3g %.3g" % ((a - ref).abs().max().item(), (b - ref).abs().max().item()))
# The same plans (tactics saved in the .kiln) on the same inputs; 1e-3 leaves room for kernels that accumulate in
# another order from one run to the next.
sys.exit(0 if torch.allclose(a, ref, rtol=1e-3, atol=1e-3) and torch.allclose(b, ref, rtol=1e-3, atol=1e-3) else 1)
"""


def save_load_fresh_process(work):
    import torchvision
    os.makedirs(work, exist_ok=True)
    m = torchvision.models.resnet50().eval().cuda()
    x = torch.randn(8, 3, 224, 224, device="cuda")
    km = kiln.compile(m, inputs=[x], precision="fp16", backend="cuda")
    with torch.no_grad():
        ref = km(x)
        diff = max_diff(ref, m(x))
    kiln.save(km, work + "/resnet50.kiln")
    torch.save(torch.nn.Sequential(km), work + "/model.pt")
    torch.save((x, ref), work + "/io.pt")
    run = subprocess.run([sys.executable, "-c", FRESH, work], capture_output=True, text=True)
    check("kiln.save/load + torch.save/load, fresh", run.returncode == 0,
          "%s (fp16 vs eager max abs diff %.3g) %s" % (run.stdout.strip(), diff, run.stderr.strip()[-300:]))
    cli = os.environ.get("KILN_CLI")
    if cli:
        info = subprocess.run([cli, "bench", work + "/resnet50.kiln", "--iters", "3", "--warmup", "1"],
                              capture_output=True, text=True)
        check("kiln CLI runs the saved module", info.returncode == 0, (info.stdout + info.stderr).strip()[-200:])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", default="/tmp/kiln-python-work")
    args = parser.parse_args()
    print("torch", torch.__version__, "kiln", kiln.__file__, torch.cuda.get_device_name(), flush=True)
    for fn in (torch_compile_resnet50, torch_compile_bert, lambda: save_load_fresh_process(args.work)):
        try:
            fn()
        except Exception as e:  # reported as a failed check; the others still run
            import traceback
            traceback.print_exc()
            check(getattr(fn, "__name__", "save/load"), False, "%s: %s" % (type(e).__name__, e))
    print("RESULT %d/%d checks passed" % (sum(results), len(results)))
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
