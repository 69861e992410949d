// The "vec" Shuffle and Slice kernels against the reference kernels: permutes before and after reshapes
// (attention's head splits and merges, NCHW <-> NHWC, transposes with inner rows that stay contiguous and
// ones that do not), plain reshapes and size-1 dims; slices with unit, larger and negative strides (GPT-2's
// q/k/v split); for element sizes 1, 2, 4 and 8 bytes, with 1, 2 and 16 threads and copies large enough to be
// split over the pool. A copy moves bits: the outputs must equal the reference's byte for byte.

#include <cstring>

#include "engine/backends/cpu/kernels/kernel_test_util.h"

namespace kiln::engine::cpu::testing {
namespace {

OneLayer shuffle_layer(std::vector<int64_t> first, std::vector<int64_t> reshape,
                       std::vector<int64_t> second) {
  OneLayer l;
  l.layer.name = "shuffle";
  l.layer.kind = LayerKind::Shuffle;
  ShuffleParams p;
  p.first_perm = std::move(first);
  p.has_reshape = !reshape.empty();
  p.reshape = std::move(reshape);
  p.second_perm = std::move(second);
  l.layer.params = p;
  return l;
}

/// Runs `vec` and the reference on `x` (dims `d`, elements of `dt`, random bytes) and compares the bytes.
void check(const OneLayer& l, const Dims& d, DType dt, const std::string& what) {
  std::vector<ShapeIn> in{ShapeIn{dt, d, nullptr}};
  const Dims y = infer_shapes(l.layer, in).at(0).dims;
  LayerInfo info;
  info.layer = &l.layer;
  info.inputs.push_back(TensorInfo{"in", dt, d, d, d});
  info.outputs.push_back(TensorInfo{"out", dt, y, y, y});
  const KernelRow& f = row(l.layer.kind, "vec");
  ASSERT_TRUE(f.runs(info, nullptr)) << what;
  auto kernel = f.create(info);
  const size_t es = dtype_size(dt), bytes = static_cast<size_t>(numel(d)) * es;
  std::vector<uint8_t> x(bytes);
  std::mt19937 gen(static_cast<uint32_t>(bytes));
  for (auto& b : x) b = static_cast<uint8_t>(gen());
  auto run_with = [&](bool reference, ThreadPool* pool) {
    std::vector<uint8_t> out(bytes, 0xAB);
    KernelArgs args;
    args.inputs.push_back(TensorView{x.data(), dt, d});
    args.outputs.push_back(TensorView{out.data(), dt, y});
    args.pool = pool;
    if (reference) {
      ops::execute(l.layer, args);
    } else {
      kernel->execute(args);
    }
    return out;
  };
  const std::vector<uint8_t> want = run_with(true, nullptr);
  for (int threads : {1, 2, 16}) {
    ThreadPool pool(threads);
    EXPECT_TRUE(run_with(false, &pool) == want)
        << what << " (" << dtype_name(dt) << ", " << threads << " threads)";
  }
}

TEST(VecShuffle, EqualsReferenceBitForBit) {
  for (DType dt : {DType::Float32, DType::Float16, DType::Int64, DType::Bool}) {
    // Attention head split: [B, S, H*D] -> [B, S, H, D] -> [B, H, S, D] (reshape then permute).
    check(shuffle_layer({}, {2, 10, 4, 16}, {0, 2, 1, 3}), {2, 10, 64}, dt, "head split");
    // Head merge: [B, H, S, D] -> [B, S, H, D] -> [B, S, H*D] (permute then reshape).
    check(shuffle_layer({0, 2, 1, 3}, {2, 10, 64}, {}), {2, 4, 10, 16}, dt, "head merge");
    // batch_first transposes: [L, B, E] <-> [B, L, E] (inner rows contiguous).
    check(shuffle_layer({1, 0, 2}, {}, {}), {23, 3, 64}, dt, "transpose 0 1");
    // Last-dim transposes (no contiguous inner row), NCHW <-> NHWC.
    check(shuffle_layer({0, 2, 1}, {}, {}), {3, 17, 29}, dt, "transpose 1 2");
    check(shuffle_layer({0, 2, 3, 1}, {}, {}), {2, 8, 5, 7}, dt, "nchw -> nhwc");
    check(shuffle_layer({0, 3, 1, 2}, {}, {}), {2, 5, 7, 8}, dt, "nhwc -> nchw");
    // A plain reshape, size-1 dims, a single element, a 5-D permutation.
    check(shuffle_layer({}, {6, 5}, {}), {2, 3, 5}, dt, "reshape");
    check(shuffle_layer({2, 0, 1}, {}, {}), {1, 7, 1}, dt, "size-1 dims");
    check(shuffle_layer({1, 0}, {}, {}), {1, 1}, dt, "one element");
    check(shuffle_layer({4, 2, 0, 3, 1}, {}, {}), {2, 3, 4, 5, 6}, dt, "5-D");
  }
  // Large enough to be split over the pool (several 64 KiB tasks), both row kinds.
  check(shuffle_layer({0, 2, 1, 3}, {}, {}), {4, 64, 12, 64}, DType::Float32, "large, contiguous rows");
  check(shuffle_layer({0, 2, 1}, {}, {}), {4, 384, 256}, DType::Float32, "large, strided rows");
}

OneLayer slice_layer(std::vector<int64_t> start, std::vector<int64_t> size, std::vector<int64_t> stride) {
  OneLayer l;
  l.layer.name = "slice";
  l.layer.kind = LayerKind::Slice;
  SliceParams p;
  p.start = std::move(start);
  p.size = std::move(size);
  p.stride = std::move(stride);
  l.layer.params = p;
  return l;
}

TEST(VecSlice, EqualsReferenceBitForBit) {
  for (DType dt : {DType::Float32, DType::Float16, DType::Int64, DType::Bool}) {
    // GPT-2's split of its fused projection [B, S, 3E] into q, k, v: contiguous runs of E.
    for (int64_t part = 0; part < 3; ++part) {
      check(slice_layer({0, 0, 24 * part}, {2, 10, 24}, {}), {2, 10, 72}, dt,
            "split " + std::to_string(part));
    }
    check(slice_layer({1, 2, 3}, {1, 3, 4}, {1, 2, 3}), {3, 9, 17}, dt, "strides 1, 2, 3");
    check(slice_layer({2, 8}, {3, 5}, {-1, -2}), {4, 9}, dt, "negative strides");
    check(slice_layer({0, 4, 0}, {1, 1, 6}, {1, 1, 1}), {1, 7, 6}, dt, "size-1 dims");
    check(slice_layer({3, 2}, {1, 1}, {}), {5, 4}, dt, "one element");
    check(slice_layer({0, 0}, {5, 4}, {1, 1}), {5, 4}, dt, "the whole input");
  }
  // Large enough to be split over the pool: GPT-2 small's value slice.
  check(slice_layer({0, 0, 1536}, {1, 128, 768}, {1, 1, 1}), {1, 128, 2304}, DType::Float32, "large");
}

TEST(VecSlice, LeavesTensorStartsToTheReference) {
  OneLayer l = slice_layer({0, 0}, {2, 2}, {});
  LayerInfo info;
  info.layer = &l.layer;
  info.inputs.push_back(TensorInfo{"in", DType::Float32, {4, 4}, {4, 4}, {4, 4}});
  info.inputs.push_back(TensorInfo{"start", DType::Int64, {2}, {2}, {2}});
  info.outputs.push_back(TensorInfo{"out", DType::Float32, {2, 2}, {2, 2}, {2, 2}});
  EXPECT_FALSE(row(LayerKind::Slice, "vec").runs(info, nullptr));
}

TEST(VecShuffle, LeavesTwoPermutationsToTheReference) {
  OneLayer l = shuffle_layer({1, 0, 2}, {3, 8}, {1, 0});
  LayerInfo info;
  info.layer = &l.layer;
  info.inputs.push_back(TensorInfo{"in", DType::Float32, {2, 3, 4}, {2, 3, 4}, {2, 3, 4}});
  info.outputs.push_back(TensorInfo{"out", DType::Float32, {8, 3}, {8, 3}, {8, 3}});
  EXPECT_FALSE(row(LayerKind::Shuffle, "vec").runs(info, nullptr));
}

}  // namespace
}  // namespace kiln::engine::cpu::testing
