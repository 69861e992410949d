// Cumulative and TopK against naive references on the test backend ($KILN_TEST_BACKEND): every op, exclusive
// and reverse, several shapes and axes (rows short enough for one thread each and long ones split across a
// block), topk over short rows, rows longer than one shared-memory sort (chunked) and long rows with a large
// k (ranking), many ties, NaN, a k given by a shape tensor, float data at fp32/fp16/bf16 and integer data.
// Inputs are multiples of a power of two small enough to be exact in fp16 and bf16, so topk orders and
// indices must match the reference exactly at every precision and scans only round their outputs; tolerances
// are check_layer's (fp32 1e-4; fp16/bf16 1e-2 relative + 1e-2 absolute); integer results are exact.

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine_test_util.h"

namespace kiln::engine {
namespace {
using namespace testing;

struct Split {
  int64_t outer = 1, n = 1, inner = 1;
};
Split split(const Dims& d, int64_t axis) {
  Split s;
  for (int64_t k = 0; k < axis; ++k) s.outer *= d[k];
  s.n = d[axis];
  for (size_t k = static_cast<size_t>(axis) + 1; k < d.size(); ++k) s.inner *= d[k];
  return s;
}

std::vector<double> ref_cumulative(const HostTensor& x, const CumulativeParams& p) {
  Split s = split(x.sizes(), p.axis);
  std::vector<double> y(static_cast<size_t>(x.numel()));
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      double acc = p.op == CumulativeParams::Sum    ? 0
                   : p.op == CumulativeParams::Prod ? 1
                   : p.op == CumulativeParams::Max  ? -INFINITY
                                                    : INFINITY;
      for (int64_t t = 0; t < s.n; ++t) {
        int64_t j = p.reverse ? s.n - 1 - t : t, at = (o * s.n + j) * s.inner + i;
        double v = x.get_as_double(at);
        double next = p.op == CumulativeParams::Sum    ? acc + v
                      : p.op == CumulativeParams::Prod ? acc * v
                      // torch.cummax / cummin: a NaN propagates from where it appears.
                      : p.op == CumulativeParams::Max  ? (std::isnan(v) || v > acc ? v : acc)
                                                       : (std::isnan(v) || v < acc ? v : acc);
        y[at] = p.exclusive ? acc : next;
        acc = next;
      }
    }
  return y;
}

const char* op_name(CumulativeParams::Op op) {
  return op == CumulativeParams::Sum    ? "sum"
         : op == CumulativeParams::Prod ? "prod"
         : op == CumulativeParams::Max  ? "max"
                                        : "min";
}

void check_cumulative(const HostTensor& x, CumulativeParams p, std::vector<TestPrecision> precisions) {
  std::string what = std::string("cum") + op_name(p.op) + " axis " + std::to_string(p.axis) + " of " +
                     std::to_string(x.sizes().size()) + "-d n=" + std::to_string(x.sizes()[p.axis]) +
                     (p.exclusive ? " exclusive" : "") + (p.reverse ? " reverse" : "") + " " +
                     dtype_name(x.dtype());
  check_layer(
      what, {x}, [&](Network& n, const std::vector<Tensor*>& in) { return n.add_cumulative("", in[0], p); },
      [&](const std::vector<HostTensor>& in) { return ref_cumulative(in[0], p); }, precisions);
}

const CumulativeParams::Op kOps[] = {CumulativeParams::Sum, CumulativeParams::Prod, CumulativeParams::Max,
                                     CumulativeParams::Min};

TEST(EngineLayers, CumulativeOpsShapesAxes) {
  std::mt19937 rng(311);
  // Short rows (one thread per row) along every axis.
  for (int64_t axis = 0; axis < 3; ++axis) {
    for (auto op : kOps) {
      HostTensor x = op == CumulativeParams::Prod
                         ? random_grid_tensor(DType::Float32, {4, 5, 6}, rng, 0.5, 1.5, 32)
                         : random_grid_tensor(DType::Float32, {4, 5, 6}, rng, -2, 2, 32);
      for (bool excl : {false, true})
        for (bool rev : {false, true})
          check_cumulative(x, CumulativeParams{op, axis, excl, rev}, kAllPrecisions);
    }
  }
  // Long rows (a block per row): contiguous and strided (inner > 1).
  for (const auto& [dims, axis] : std::vector<std::pair<Dims, int64_t>>{{{3, 1000}, 1}, {{2, 700, 3}, 1}}) {
    for (auto op : kOps) {
      HostTensor x = op == CumulativeParams::Prod
                         ? random_grid_tensor(DType::Float32, dims, rng, 0.95, 1.05, 64)
                         : random_grid_tensor(DType::Float32, dims, rng, -2, 2, 32);
      for (bool flag : {false, true})
        check_cumulative(x, CumulativeParams{op, axis, flag, flag}, kAllPrecisions);
    }
  }
}

// NaN inside rows (short rows: one thread each; long rows: chunked across a block) propagates through max and
// min from where it appears, as torch.cummax does; the engine used to skip it (std::max(acc, NaN) is acc).
TEST(EngineLayers, CumulativeMaxMinPropagateNaN) {
  std::mt19937 rng(313);
  for (const auto& [dims, axis] : std::vector<std::pair<Dims, int64_t>>{{{4, 7}, 1}, {{3, 1000}, 1}, {{6, 3}, 0}}) {
    HostTensor x = random_grid_tensor(DType::Float32, dims, rng, -2, 2, 32);
    for (int64_t i = 3; i < x.numel(); i += 17) x.set_from_double(i, NAN);
    for (auto op : {CumulativeParams::Max, CumulativeParams::Min}) {
      for (bool flag : {false, true}) check_cumulative(x, CumulativeParams{op, axis, flag, flag}, kAllPrecisions);
    }
  }
}

TEST(EngineLayers, CumulativeIntegers) {
  std::mt19937 rng(312);
  for (DType dt : {DType::Int32, DType::Int64}) {
    HostTensor small = random_tensor(dt, {3, 7}, rng, -3, 4);
    HostTensor wide = random_tensor(dt, {2, 600}, rng, -100, 100);
    for (auto op : kOps) {
      // Exclusive max/min start from -inf/+inf, which saturate in integers: not compared here.
      bool exclusive_ok = op == CumulativeParams::Sum || op == CumulativeParams::Prod;
      for (bool rev : {false, true}) {
        check_cumulative(small, CumulativeParams{op, 1, false, rev}, {TestPrecision::FP32});
        if (exclusive_ok) check_cumulative(small, CumulativeParams{op, 1, true, rev}, {TestPrecision::FP32});
        if (op != CumulativeParams::Prod) {
          check_cumulative(wide, CumulativeParams{op, 1, rev && exclusive_ok, rev}, {TestPrecision::FP32});
        }
      }
    }
  }
}

/// The reference's order: by value (largest or smallest first), ties by lower index; NaN before numbers when
/// largest.
std::vector<double> ref_topk(const HostTensor& x, int64_t axis, int64_t k, bool largest, int out) {
  Split s = split(x.sizes(), axis);
  std::vector<double> y(static_cast<size_t>(s.outer * k * s.inner));
  std::vector<int64_t> order(static_cast<size_t>(s.n));
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      auto at = [&](int64_t j) { return x.get_as_double((o * s.n + j) * s.inner + i); };
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        double va = at(a), vb = at(b);
        if (std::isnan(va) || std::isnan(vb)) return largest && std::isnan(va) && !std::isnan(vb);
        return largest ? va > vb : va < vb;
      });
      for (int64_t j = 0; j < k; ++j) {
        y[(o * k + j) * s.inner + i] = out == 0 ? at(order[j]) : static_cast<double>(order[j]);
      }
    }
  return y;
}

void check_topk(const std::string& what, const HostTensor& x, int64_t axis, int64_t k, bool largest,
                std::vector<TestPrecision> precisions, bool k_as_tensor = false) {
  for (int out : {0, 1}) {
    check_layer(
        what + (largest ? " largest" : " smallest") + (out ? " indices" : " values") +
            " k=" + std::to_string(k),
        {x},
        [&](Network& n, const std::vector<Tensor*>& in) {
          Tensor* kt = k_as_tensor ? n.add_constant("k", HostTensor::from_int64s({k}, {1})) : nullptr;
          auto [v, i] = n.add_topk("", in[0], TopKParams{k_as_tensor ? 1 : k, axis, largest}, kt);
          return out == 0 ? v : i;
        },
        [&](const std::vector<HostTensor>& in) { return ref_topk(in[0], axis, k, largest, out); },
        precisions);
  }
}

TEST(EngineLayers, TopKShapesAxesTies) {
  std::mt19937 rng(313);
  struct Case {
    Dims dims;
    int64_t axis, k;
    double denom;  // values are multiples of 1/denom in [-4, 4): small denominators give many ties
  };
  const std::vector<Case> cases = {
      {{3, 17}, 1, 5, 1},    // 8 distinct values: ties everywhere
      {{4, 6, 5}, 1, 6, 8},  // full sort of a strided axis
      {{4, 6, 5}, 0, 2, 8},    {{4, 6, 5}, 2, 1, 8},
      {{2, 5000}, 1, 7, 8},     // longer than one shared-memory sort: chunked
      {{5000, 3}, 0, 10, 8},    // chunked, strided rows
      {{2, 4500}, 1, 3000, 8},  // long rows and a large k: ranking
  };
  for (const auto& c : cases) {
    HostTensor x = random_grid_tensor(DType::Float32, c.dims, rng, -4, 4, c.denom);
    std::string what = "topk axis " + std::to_string(c.axis) + " of n=" + std::to_string(c.dims[c.axis]);
    for (bool largest : {true, false}) check_topk(what, x, c.axis, c.k, largest, kAllPrecisions);
  }
  HostTensor x = random_grid_tensor(DType::Float32, {4, 9}, rng, -4, 4, 8);
  check_topk("topk k from a shape tensor", x, 1, 4, true, kAllPrecisions, true);
}

TEST(EngineLayers, TopKIntegersAndNaN) {
  std::mt19937 rng(314);
  for (DType dt : {DType::Int32, DType::Int64}) {
    HostTensor x = random_tensor(dt, {5, 40}, rng, -10, 10);
    for (bool largest : {true, false})
      check_topk(std::string("topk ") + dtype_name(dt), x, 1, 8, largest, {TestPrecision::FP32});
  }
  // NaN is larger than every number: first (in index order) when largest.
  HostTensor x = random_grid_tensor(DType::Float32, {2, 10}, rng, -4, 4, 8);
  for (int64_t i : {2, 7, 13}) x.set_from_double(i, NAN);
  check_topk("topk with NaN", x, 1, 4, true, kAllPrecisions);
}

}  // namespace
}  // namespace kiln::engine
