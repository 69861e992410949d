"""PyTorch's scaled_dot_product_attention (fp16, CUDA) at the shapes and masks of flash_attention_bench.cu: the
reference times for Kiln's flash kernel. Prints one line per case: median over 30 samples of 20 back-to-back calls
(CUDA events), microseconds."""
import statistics

import torch
import torch.nn.functional as F

CASES = [("bert_base b32", 32, 12, 128, 64), ("bert_base b1", 1, 12, 128, 64), ("vit_b_16 b32", 32, 12, 197, 64),
         ("seq 512 b8", 8, 12, 512, 64)]
CAUSAL_GQA_CASES = [("llama causal b32", 32, 12, 4, 512, 64), ("llama causal b1", 1, 12, 4, 512, 64)]


def masks(batch, length, device):
    keep = torch.arange(length, device=device) < length - 16  # every key but the last 16 (a padded sequence)
    yield "no mask", None
    yield "bool [B,1,1,Lk]", keep.view(1, 1, 1, length).expand(batch, 1, 1, length)
    yield "bool [B,1,Lq,Lk]", keep.view(1, 1, 1, length).expand(batch, 1, length, length).contiguous()
    additive = torch.where(keep, 0.0, -1e4).view(1, 1, 1, length).expand(batch, 1, length, length).contiguous()
    yield "f32 [B,1,Lq,Lk]", additive
    yield "f16 [B,1,Lq,Lk]", additive.half()


def time_us(fn):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(30):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(20):
            fn()
        b.record()
        torch.cuda.synchronize()
        samples.append(a.elapsed_time(b) * 1000 / 20)
    return statistics.median(samples)


def main():
    dev = torch.device("cuda")
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    for name, batch, heads, length, e in CASES:
        q, k, v = (torch.randn(batch, heads, length, e, device=dev, dtype=torch.float16) for _ in range(3))
        for mask_name, mask in masks(batch, length, dev):
            if name.startswith("vit") and mask is not None:
                continue
            if mask is not None and mask.dtype == torch.float32:
                mask = mask.half()  # SDPA takes an additive mask of the query's dtype
                mask_name += " (as f16)"
            us = time_us(lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
            print(f"{name:14s} {mask_name:24s} {us:8.1f} us")
    for name, batch, heads, kv_heads, length, e in CAUSAL_GQA_CASES:
        q = torch.randn(batch, heads, length, e, device=dev, dtype=torch.float16)
        k, v = (torch.randn(batch, kv_heads, length, e, device=dev, dtype=torch.float16) for _ in range(2))
        us = time_us(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True))
        print(f"{name:14s} {'no mask':24s} {us:8.1f} us")


if __name__ == "__main__":
    main()
