// What cuDNN's graph API offers for quantized convolutions on this GPU, and how fast: resnet50's convolution
// shapes (NHWC, batch from the command line) as fp16 (what the CUDA backend's "cudnn_graph" tactic builds),
// INT8 (x, w int8, int32 accumulation, a per-channel fp32 scale, bias, ReLU; the output fp16 or int8) and FP8
// E4M3 (fp32 accumulation, the same epilogue). For each graph: how many engine configurations finalize, the
// best device time of the first few, and for the quantized ones the largest error of 64 sampled outputs
// against a host reference computed from the same integers. The last lines weigh each shape by how often
// resnet50 has it: the estimated convolution time of one resnet50 forward in each precision.
//
//   scripts/device/cudnn_int8_probe.sh [BATCH]   (builds this against the Python wheel's cuDNN and runs it)

#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cudnn_graph_util.h"

namespace {

using namespace cudnn_bench;

struct Shape {
  int c, h, w, k, r, stride, pad, count;  // count: how many resnet50 has
  int p() const { return (h + 2 * pad - r) / stride + 1; }
  int q() const { return (w + 2 * pad - r) / stride + 1; }
};

/// What a graph computes: y = relu(conv(x, w) * scale[k] + bias[k] [+ z]) (no scale for fp16), in `in` / `out`;
/// `z`: the residual's type, or CUDNN_DATA_DOUBLE for none.
struct Variant {
  const char* name;
  cudnnDataType_t in, comp, conv_out, out;
  bool scale;
  cudnnDataType_t z = CUDNN_DATA_DOUBLE;
  float alpha2 = 1.0f;     // the residual add's alpha2
  bool post_mul = false;   // ... -> relu -> * scale[k] -> y (the scale tensor read a second time)
};

struct Plans {
  std::vector<Desc> plans;
  int64_t found = 0;
  std::string why;  // when no plan
};

/// Uids: x 1, w 2, y 3, bias 4, scale 5.
Plans build(cudnnHandle_t handle, int n, const Shape& s, const Variant& v, int max_plans) {
  Plans out;
  const cudnnDataType_t fl = CUDNN_DATA_FLOAT;
  Desc x = tensor(1, n, s.c, s.h, s.w, v.in, false);
  Desc w = tensor(2, s.k, s.c, s.r, s.r, v.in, false);
  Desc y = tensor(3, n, s.k, s.p(), s.q(), v.out, false);
  Desc bias = tensor(4, 1, s.k, 1, 1, fl, false);
  Desc scale = tensor(5, 1, s.k, 1, 1, fl, false);
  Desc conv_out = tensor(10, n, s.k, s.p(), s.q(), v.conv_out, true);
  Desc scaled = tensor(11, n, s.k, s.p(), s.q(), fl, true);
  Desc biased = tensor(12, n, s.k, s.p(), s.q(), fl, true);
  if (!x || !w || !y || !conv_out) {
    out.why = "tensor refused";
    return out;
  }
  Desc op = conv_forward_op(x, w, conv_out, v.comp, s.stride, s.pad);
  if (!op) {
    out.why = "convolution refused";
    return out;
  }
  std::vector<Desc> ops = {op};
  Desc last = conv_out;
  if (v.scale) {
    ops.push_back(pointwise_op(CUDNN_POINTWISE_MUL, last, scale, scaled));
    last = scaled;
  }
  ops.push_back(pointwise_op(CUDNN_POINTWISE_ADD, last, bias, biased));
  last = biased;
  if (v.z != CUDNN_DATA_DOUBLE) {
    Desc z = tensor(6, n, s.k, s.p(), s.q(), v.z, false);
    Desc summed = tensor(13, n, s.k, s.p(), s.q(), fl, true);
    if (!z) {
      out.why = "residual tensor refused";
      return out;
    }
    ops.push_back(pointwise_op(CUDNN_POINTWISE_ADD, last, z, summed, v.alpha2));
    last = summed;
  }
  if (v.post_mul) {
    Desc relu = tensor(14, n, s.k, s.p(), s.q(), fl, true);
    ops.push_back(pointwise_op(CUDNN_POINTWISE_RELU_FWD, last, nullptr, relu));
    ops.push_back(pointwise_op(CUDNN_POINTWISE_MUL, relu, scale, y));
  } else {
    ops.push_back(pointwise_op(CUDNN_POINTWISE_RELU_FWD, last, nullptr, y));
  }
  for (Desc d : ops) {
    if (!d) {
      out.why = "pointwise operation refused";
      return out;
    }
  }
  Desc graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, int64_t(ops.size()), ops.data());
  set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  if (cudnnBackendFinalize(graph) != CUDNN_STATUS_SUCCESS) {
    out.why = "operation graph refused";
    return out;
  }
  Desc heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  cudnnBackendHeurMode_t hm = CUDNN_HEUR_MODE_A;
  set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
  set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &hm);
  if (cudnnBackendFinalize(heur) != CUDNN_STATUS_SUCCESS) {
    out.why = "heuristic refused";
    return out;
  }
  std::vector<Desc> cfgs(16);
  for (auto& c : cfgs) c = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  if (cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                               int64_t(cfgs.size()), &out.found, cfgs.data()) != CUDNN_STATUS_SUCCESS) {
    out.why = "heuristic results refused";
    return out;
  }
  for (int64_t i = 0; i < std::min<int64_t>(out.found, 16) && int(out.plans.size()) < max_plans; ++i) {
    Desc plan = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[i]);
    if (cudnnBackendFinalize(plan) != CUDNN_STATUS_SUCCESS) continue;
    int64_t ws = 0, cnt = 0;
    cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &cnt, &ws);
    if (ws > (int64_t{256} << 20)) continue;
    out.plans.push_back(plan);
  }
  if (out.plans.empty()) out.why = "no configuration finalized (" + std::to_string(out.found) + " offered)";
  return out;
}

// Deterministic data: element i of tensor `seed` is hash(i, seed) mapped to small integers.
__host__ __device__ inline int small_int(size_t i, unsigned seed, int range) {
  unsigned h = static_cast<unsigned>(i) * 2654435761u ^ (seed * 40503u + 0x9e3779b9u);
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  return static_cast<int>(h % static_cast<unsigned>(2 * range + 1)) - range;
}

// Values: x in [-8, 8], w in [-4, 4] (exact in int8, fp8 e4m3 and fp16).
__global__ void fill(void* p, size_t n, unsigned seed, int range, int kind) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  int v = small_int(i, seed, range);
  if (kind == 0) static_cast<__half*>(p)[i] = __int2half_rn(v);
  if (kind == 1) static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v);
  if (kind == 2) static_cast<__nv_fp8_e4m3*>(p)[i] = __nv_fp8_e4m3(static_cast<float>(v));
}

int kind_of(cudnnDataType_t t) { return t == CUDNN_DATA_HALF ? 0 : t == CUDNN_DATA_INT8 ? 1 : 2; }
size_t size_of(cudnnDataType_t t) { return t == CUDNN_DATA_HALF ? 2 : t == CUDNN_DATA_FLOAT ? 4 : 1; }
float read_out(const std::vector<unsigned char>& y, size_t i, cudnnDataType_t t);

float read_out(const std::vector<unsigned char>& y, size_t i, cudnnDataType_t t) {
  if (t == CUDNN_DATA_FLOAT) return reinterpret_cast<const float*>(y.data())[i];
  if (t == CUDNN_DATA_HALF) return __half2float(reinterpret_cast<const __half*>(y.data())[i]);
  if (t == CUDNN_DATA_INT8) return static_cast<float>(reinterpret_cast<const int8_t*>(y.data())[i]);
  return float(reinterpret_cast<const __nv_fp8_e4m3*>(y.data())[i]);
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 256;
  const int max_plans = argc > 2 ? std::atoi(argv[2]) : 4;
  cudnnHandle_t handle;
  CK(cudnnCreate(&handle));
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CK(cudnnSetStream(handle, stream));
  std::printf("cuDNN %zu, batch %d\n", cudnnGetVersion(), n);
  // resnet50's convolutions after the stem (torchvision: stride on the 3x3), with how many of each.
  const Shape shapes[] = {
      {64, 56, 56, 64, 1, 1, 0, 1},     {64, 56, 56, 64, 3, 1, 1, 3},    {64, 56, 56, 256, 1, 1, 0, 4},
      {256, 56, 56, 64, 1, 1, 0, 2},    {256, 56, 56, 128, 1, 1, 0, 1},  {128, 56, 56, 128, 3, 2, 1, 1},
      {128, 28, 28, 512, 1, 1, 0, 4},   {256, 56, 56, 512, 1, 2, 0, 1},  {512, 28, 28, 128, 1, 1, 0, 3},
      {128, 28, 28, 128, 3, 1, 1, 3},   {512, 28, 28, 256, 1, 1, 0, 1},  {256, 28, 28, 256, 3, 2, 1, 1},
      {256, 14, 14, 1024, 1, 1, 0, 6},  {512, 28, 28, 1024, 1, 2, 0, 1}, {1024, 14, 14, 256, 1, 1, 0, 5},
      {256, 14, 14, 256, 3, 1, 1, 5},   {1024, 14, 14, 512, 1, 1, 0, 1}, {512, 14, 14, 512, 3, 2, 1, 1},
      {512, 7, 7, 2048, 1, 1, 0, 3},    {1024, 14, 14, 2048, 1, 2, 0, 1}, {2048, 7, 7, 512, 1, 1, 0, 2},
      {512, 7, 7, 512, 3, 1, 1, 2},
  };
  const Variant variants[] = {
      {"fp16", CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, false},
      {"int8->fp16", CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, true},
      {"int8->int8", CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, true},
      {"int8(i32)->int8", CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DATA_INT32, CUDNN_DATA_INT8, true},
      {"fp8->fp16", CUDNN_DATA_FP8_E4M3, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, true},
      {"fp8->fp8", CUDNN_DATA_FP8_E4M3, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DATA_FP8_E4M3, true},
      {"int8+z8->int8", CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, true, CUDNN_DATA_INT8},
      {"int8+z8->fp16", CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, true, CUDNN_DATA_INT8},
      {"int8+z16->int8", CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, true, CUDNN_DATA_HALF},
      {"int8+z16->fp16", CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, true, CUDNN_DATA_HALF},
      {"int8+z32->fp32", CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, true, CUDNN_DATA_FLOAT},
      {"int8->fp32", CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, true},
      {"int8+z8->fp32", CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, true, CUDNN_DATA_INT8},
      {"a2 z8->fp16", CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, true, CUDNN_DATA_INT8, 0.37f},
      {"a2 z8->int8", CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, true, CUDNN_DATA_INT8, 0.37f},
      {"a2 z16->int8", CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, true, CUDNN_DATA_HALF, 0.37f},
      {"a2 z32->fp32", CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, true, CUDNN_DATA_FLOAT, 0.37f},
      {"pm z8->fp16", CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DATA_FLOAT, CUDNN_DATA_HALF, true, CUDNN_DATA_INT8, 1.0f, true},
      {"pm z8->int8", CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, true, CUDNN_DATA_INT8, 1.0f, true},
      {"pm z16->int8", CUDNN_DATA_INT8, CUDNN_DATA_INT32, CUDNN_DATA_FLOAT, CUDNN_DATA_INT8, true, CUDNN_DATA_HALF, 1.0f, true},
  };
  constexpr int kVariants = sizeof(variants) / sizeof(variants[0]);
  std::vector<double> total(kVariants, 0.0);
  std::vector<bool> complete(kVariants, true);
  void* ws = nullptr;
  CK(cudaMalloc(&ws, size_t{256} << 20));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const int only = std::getenv("PROBE_SHAPES") ? std::atoi(std::getenv("PROBE_SHAPES")) : 1000;
  int shape_index = 0;
  // PROBE_SMALL: the engine tests' small shapes (32 channels, 10x12) instead.
  const Shape small[] = {{32, 10, 12, 32, 3, 1, 1, 1}, {32, 10, 12, 32, 1, 1, 0, 1}};
  std::vector<Shape> list(std::begin(shapes), std::end(shapes));
  if (std::getenv("PROBE_SMALL")) list.assign(std::begin(small), std::end(small));
  for (const Shape& s : list) {
    if (shape_index++ >= only) break;
    std::printf("C=%d %dx%d K=%d %dx%d stride %d (x%d)\n", s.c, s.h, s.w, s.k, s.r, s.r, s.stride, s.count);
    const size_t nx = size_t(n) * s.c * s.h * s.w, nw = size_t(s.k) * s.c * s.r * s.r,
                 ny = size_t(n) * s.k * s.p() * s.q();
    for (int vi = 0; vi < kVariants; ++vi) {
      const Variant& v = variants[vi];
      Plans p = build(handle, n, s, v, max_plans);
      if (p.plans.empty()) {
        std::printf("  %-16s none: %s\n", v.name, p.why.c_str());
        complete[vi] = false;
        continue;
      }
      void *x, *w, *y, *bias, *scale, *z = nullptr;
      CK(cudaMalloc(&x, nx * size_of(v.in)));
      CK(cudaMalloc(&w, nw * size_of(v.in)));
      CK(cudaMalloc(&y, ny * size_of(v.out)));
      CK(cudaMalloc(&bias, s.k * 4));
      CK(cudaMalloc(&scale, s.k * 4));
      if (v.z != CUDNN_DATA_DOUBLE) {
        CK(cudaMalloc(&z, ny * size_of(v.z)));
        CK(cudaMemset(z, 0, ny * size_of(v.z)));
      }
      fill<<<(nx + 255) / 256, 256, 0, stream>>>(x, nx, 1, 8, kind_of(v.in));
      fill<<<(nw + 255) / 256, 256, 0, stream>>>(w, nw, 2, 4, kind_of(v.in));
      // scale[k] = 1/64 * (1 + k%3), bias[k] = k%5 - 2.
      std::vector<float> hs(s.k), hb(s.k);
      for (int k = 0; k < s.k; ++k) {
        hs[k] = (1.0f + k % 3) / 64.0f;
        hb[k] = float(k % 5 - 2);
      }
      CK(cudaMemcpy(scale, hs.data(), s.k * 4, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(bias, hb.data(), s.k * 4, cudaMemcpyHostToDevice));
      int64_t uids[6] = {1, 2, 3, 4, 5, 6};
      void* ptrs[6] = {x, w, y, bias, scale, z};
      if (!v.scale) uids[4] = 6, ptrs[4] = z;
      Desc vp = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
      const int64_t nptr = (v.scale ? 5 : 4) + (z ? 1 : 0);
      set(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, nptr, uids);
      set(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, nptr, ptrs);
      set(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
      CK(cudnnBackendFinalize(vp));
      float best = 1e30f;
      int best_i = -1;
      for (size_t i = 0; i < p.plans.size(); ++i) {
        if (cudnnBackendExecute(handle, p.plans[i], vp) != CUDNN_STATUS_SUCCESS) continue;
        for (int r = 0; r < 3; ++r) cudnnBackendExecute(handle, p.plans[i], vp);
        const int reps = 20;
        CK(cudaEventRecord(e0, stream));
        for (int r = 0; r < reps; ++r) cudnnBackendExecute(handle, p.plans[i], vp);
        CK(cudaEventRecord(e1, stream));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (ms / reps < best) {
          best = ms / reps;
          best_i = int(i);
        }
      }
      if (best_i < 0) {
        std::printf("  %-16s %zu plans, none executed\n", v.name, p.plans.size());
        complete[vi] = false;
      } else {
        // Check 64 sampled outputs of the best plan against the host's sum of the same integers.
        CK(cudnnBackendExecute(handle, p.plans[best_i], vp));
        CK(cudaStreamSynchronize(stream));
        std::vector<unsigned char> hy(ny * size_of(v.out));
        CK(cudaMemcpy(hy.data(), y, hy.size(), cudaMemcpyDeviceToHost));
        double worst = 0;
        for (int t = 0; t < 64; ++t) {
          size_t idx = (size_t(t) * 2654435761u) % ny;
          const int k = int(idx % s.k);
          const size_t pix = idx / s.k;
          const int q = int(pix % s.q()), pp = int(pix / s.q() % s.p()), b = int(pix / s.q() / s.p());
          double acc = 0;
          for (int r = 0; r < s.r; ++r)
            for (int u = 0; u < s.r; ++u) {
              const int ih = pp * s.stride - s.pad + r, iw = q * s.stride - s.pad + u;
              if (ih < 0 || iw < 0 || ih >= s.h || iw >= s.w) continue;
              for (int c = 0; c < s.c; ++c) {
                const size_t xi = ((size_t(b) * s.h + ih) * s.w + iw) * s.c + c;
                const size_t wi = ((size_t(k) * s.r + r) * s.r + u) * s.c + c;
                acc += double(small_int(xi, 1, 8)) * small_int(wi, 2, 4);
              }
            }
          double ref = std::max(0.0, acc * (v.scale ? hs[k] : 1.0) + hb[k]);
          if (v.out == CUDNN_DATA_INT8) ref = std::min(127.0, std::round(ref));
          const double got = read_out(hy, idx, v.out);
          worst = std::max(worst, std::fabs(got - ref) / std::max(1.0, std::fabs(ref)));
        }
        std::printf("  %-16s %lld offered, %zu plans, best #%d %.4f ms, worst sampled rel err %.3g\n", v.name,
                    (long long)p.found, p.plans.size(), best_i, best, worst);
        total[vi] += best * s.count;
      }
      cudnnBackendDestroyDescriptor(vp);
      for (Desc d : p.plans) cudnnBackendDestroyDescriptor(d);
      cudaFree(x);
      cudaFree(w);
      cudaFree(y);
      cudaFree(bias);
      cudaFree(scale);
      if (z) cudaFree(z);
    }
  }
  std::printf("\nresnet50 convolutions after the stem, batch %d, best configuration each:\n", n);
  for (int vi = 0; vi < kVariants; ++vi) {
    std::printf("  %-16s %8.3f ms%s  (%.2fx fp16)\n", variants[vi].name, total[vi],
                complete[vi] ? "" : " (some shapes missing)", total[0] / std::max(1e-9, total[vi]));
  }
  return 0;
}
