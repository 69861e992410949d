// The convolution plan data blob (see conv_plan_data.h).

#include "engine/backends/cuda/linalg/conv_plan_data.h"

#include <atomic>
#include <cstring>

namespace kiln::engine::cuda {
namespace {

constexpr uint8_t kMagic[4] = {'K', 'C', 'N', 'V'};
constexpr size_t kMaxRank = 5;
constexpr size_t kFields = 6 + kMaxRank;  // dtype, layout, tf32, algo, math, rank, dims
constexpr size_t kBlobBytes = 8 + 8 * kFields;

std::atomic<int64_t> g_events[7];

}  // namespace

std::vector<uint8_t> encode_conv_plan_data(const ConvPlanData& d) {
  std::vector<uint8_t> b(kMagic, kMagic + 4);
  b.reserve(kBlobBytes);
  auto put = [&b](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  put(kConvPlanDataVersion, 4);
  for (int64_t v : {d.dtype, d.layout, d.tf32, d.algo, d.math, static_cast<int64_t>(d.input.size())}) {
    put(static_cast<uint64_t>(v), 8);
  }
  for (size_t k = 0; k < kMaxRank; ++k) put(static_cast<uint64_t>(k < d.input.size() ? d.input[k] : 0), 8);
  return b;
}

bool decode_conv_plan_data(const std::vector<uint8_t>& b, int64_t max_algo, int64_t max_math, ConvPlanData* d,
                           std::string* why) {
  auto fail = [why](std::string what) {
    if (why) *why = std::move(what);
    return false;
  };
  if (b.size() < 8 || std::memcmp(b.data(), kMagic, 4) != 0) return fail("not cuDNN convolution data");
  auto get = [&b](size_t pos, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(b[pos + i]) << (8 * i);
    return v;
  };
  uint64_t version = get(4, 4);
  if (version != kConvPlanDataVersion) {
    return fail("version " + std::to_string(version) + " (this build reads " +
                std::to_string(kConvPlanDataVersion) + ")");
  }
  if (b.size() != kBlobBytes) {
    return fail(std::to_string(b.size()) + " bytes (version " + std::to_string(version) + " has " +
                std::to_string(kBlobBytes) + ")");
  }
  int64_t f[kFields];
  for (size_t i = 0; i < kFields; ++i) f[i] = static_cast<int64_t>(get(8 + 8 * i, 8));
  ConvPlanData out;
  out.dtype = f[0];
  out.layout = f[1];
  out.tf32 = f[2];
  out.algo = f[3];
  out.math = f[4];
  if (out.layout < 0 || out.layout > 2) return fail("layout " + std::to_string(out.layout));
  if (out.tf32 != 0 && out.tf32 != 1) return fail("tf32 flag " + std::to_string(out.tf32));
  if (out.algo < 0 || out.algo >= max_algo) return fail("algorithm " + std::to_string(out.algo));
  if (out.math < 0 || out.math >= max_math) return fail("math type " + std::to_string(out.math));
  int64_t rank = f[5];
  if (rank < 3 || rank > static_cast<int64_t>(kMaxRank)) return fail("rank " + std::to_string(rank));
  for (int64_t k = 0; k < static_cast<int64_t>(kMaxRank); ++k) {
    int64_t v = f[6 + k];
    if (k < rank && v < 0) return fail("dim " + std::to_string(v));
    if (k >= rank && v != 0) return fail("data after the dims");
    if (k < rank) out.input.push_back(v);
  }
  *d = std::move(out);
  return true;
}

ConvStats conv_stats() {
  ConvStats s;
  s.tuned = g_events[0].load();
  s.stored = g_events[1].load();
  s.rejected = g_events[2].load();
  s.fused_plans = g_events[3].load();
  s.unfused_plans = g_events[4].load();
  s.fused_refused = g_events[5].load();
  s.graph_plans = g_events[6].load();
  return s;
}

void count_conv_event(ConvEvent event) { ++g_events[static_cast<int>(event)]; }

}  // namespace kiln::engine::cuda
