// The cuBLASLt calls of a matmul and the matmul plan data (matmul_call.h).

#include "engine/backends/cuda/linalg/matmul_call.h"

#include <cstring>

namespace kiln::engine::cuda {
namespace {

int64_t product(const Dims& d, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= d[i];
  return n;
}

/// Per output matrix, the element offset of the operand matrix with batch dims d[0 .. rank-2) (broadcast
/// against the output's batch dims `batch`; `mat` elements per matrix).
std::vector<int64_t> batch_offsets(const Dims& d, const Dims& batch, int64_t batches, int64_t mat) {
  std::vector<int64_t> off(static_cast<size_t>(batches), 0);
  size_t rank = d.size() - 2, lead = batch.size() - rank;
  std::vector<int64_t> stride(rank, 1);
  for (size_t q = rank; q-- > 1;) stride[q - 1] = stride[q] * d[q];
  for (int64_t i = 0; i < batches; ++i) {
    int64_t rem = i, o = 0;
    for (size_t q = batch.size(); q-- > 0;) {
      int64_t idx = rem % batch[q];
      rem /= batch[q];
      if (q >= lead && d[q - lead] != 1) o += idx * stride[q - lead];
    }
    off[static_cast<size_t>(i)] = o * mat;
  }
  return off;
}

bool constant_step(const std::vector<int64_t>& off) {
  for (size_t i = 1; i < off.size(); ++i) {
    if (off[i] - off[i - 1] != off[1] - off[0]) return false;
  }
  return true;
}

constexpr char kMagic[4] = {'K', 'L', 'M', 'M'};
constexpr size_t kFields = 7 + 5 + 8;  // call key, configuration, algorithm
constexpr size_t kBlobBytes = 4 + 4 + 8 * kFields;

}  // namespace

MatmulCalls matmul_calls(const MatrixMultiplyParams& p, const Dims& a, const Dims& b, const Dims& y) {
  MatmulCalls c;
  size_t ra = a.size(), rb = b.size(), ry = y.size();
  c.m = p.transpose_a ? a[ra - 1] : a[ra - 2];
  c.k = p.transpose_a ? a[ra - 2] : a[ra - 1];
  c.n = p.transpose_b ? b[rb - 2] : b[rb - 1];
  Dims batch(y.begin(), y.end() - 2);
  c.batches = product(y, 0, ry - 2);
  c.offset_a = batch_offsets(a, batch, c.batches, c.m * c.k);
  c.offset_b = batch_offsets(b, batch, c.batches, c.k * c.n);
  bool strided = constant_step(c.offset_a) && constant_step(c.offset_b);
  int64_t sa = c.batches > 1 ? c.offset_a[1] - c.offset_a[0] : 0;
  int64_t sb = c.batches > 1 ? c.offset_b[1] - c.offset_b[0] : 0;
  c.call = MatmulCallKey{c.m, c.n, c.k, 1, 0, 0, 0};
  if (!strided) {
    c.per_matrix = true;
  } else if (c.batches > 1 && sb == 0 && !p.transpose_a && sa == c.m * c.k) {
    c.call.m = c.batches * c.m;  // a batch of rows against one b: one matrix of nb * m rows
  } else if (c.batches > 1) {
    c.call.count = c.batches;
    c.call.stride_a = sa;
    c.call.stride_b = sb;
  }
  return c;
}

int pointer_alignment(uintptr_t p) {
  int a = 256;
  while (a > 1 && p % static_cast<uintptr_t>(a)) a /= 2;
  return a;
}

std::vector<uint8_t> encode_matmul_plan_data(const MatmulPlanData& d) {
  std::vector<uint8_t> b(kMagic, kMagic + 4);
  b.reserve(kBlobBytes);
  auto put = [&b](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  put(kMatmulPlanDataVersion, 4);
  const MatmulCallKey& k = d.call;
  for (int64_t v : {k.m, k.n, k.k, k.count, k.stride_a, k.stride_b, k.align, d.dtype, d.compute, d.transpose_a,
                    d.transpose_b, d.epilogue}) {
    put(static_cast<uint64_t>(v), 8);
  }
  for (uint64_t v : d.algo) put(v, 8);
  return b;
}

bool decode_matmul_plan_data(const std::vector<uint8_t>& b, MatmulPlanData* d, std::string* why) {
  auto fail = [why](std::string what) {
    if (why) *why = std::move(what);
    return false;
  };
  if (b.size() < 8 || std::memcmp(b.data(), kMagic, 4) != 0) return fail("not cuBLASLt matmul data");
  auto get = [&b](size_t pos, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(b[pos + i]) << (8 * i);
    return v;
  };
  uint64_t version = get(4, 4);
  if (version != kMatmulPlanDataVersion) {
    return fail("version " + std::to_string(version) + " (this build reads " +
                std::to_string(kMatmulPlanDataVersion) + ")");
  }
  if (b.size() != kBlobBytes) {
    return fail(std::to_string(b.size()) + " bytes (version " + std::to_string(version) + " has " +
                std::to_string(kBlobBytes) + ")");
  }
  int64_t f[12];
  for (size_t i = 0; i < 12; ++i) f[i] = static_cast<int64_t>(get(8 + 8 * i, 8));
  MatmulPlanData out;
  out.call = MatmulCallKey{f[0], f[1], f[2], f[3], f[4], f[5], f[6]};
  out.dtype = f[7];
  out.compute = f[8];
  out.transpose_a = f[9];
  out.transpose_b = f[10];
  out.epilogue = f[11];
  for (size_t i = 0; i < 8; ++i) out.algo[i] = get(8 + 8 * (12 + i), 8);
  const MatmulCallKey& k = out.call;
  bool align_ok = k.align >= 1 && k.align <= 256 && (k.align & (k.align - 1)) == 0;
  if (k.m <= 0 || k.n <= 0 || k.k <= 0 || k.count <= 0 || k.stride_a < 0 || k.stride_b < 0 || !align_ok ||
      (k.count == 1 && (k.stride_a || k.stride_b))) {
    return fail("a malformed call key");
  }
  if (out.dtype < 0 || out.dtype > 255 || out.compute < 0 || out.compute > 3 ||
      (out.transpose_a | out.transpose_b) & ~int64_t{1} || out.epilogue < 0 || out.epilogue > 0xffffffff) {
    return fail("a malformed configuration");
  }
  *d = out;
  return true;
}

}  // namespace kiln::engine::cuda
