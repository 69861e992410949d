// Host-side planning of the CUDA strided copy (no GPU needed): 32-bit division by invariant divisors, merged
// dims, vector widths and their alignment fallback, the tiled transpose choice and the index width.
// The kernels that run these plans are checked on a GPU by layers_movement_paths_test.cpp.

#if KILN_HAVE_CUDA

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "engine/backends/cuda/index_math.h"
#include "engine/backends/cuda/movement/strided_copy_plan.h"

namespace kiln::engine::cuda {
namespace {

TEST(EngineCudaCopyPlan, FastDivisionIsExact) {
  std::mt19937 rng(601);
  std::uniform_int_distribution<uint32_t> any(0, (1u << 31) - 1);
  std::vector<int64_t> divisors;
  for (int64_t d = 1; d <= 1100; ++d) divisors.push_back(d);
  for (int s = 11; s < 31; ++s) {
    for (int64_t d : {(int64_t{1} << s) - 1, int64_t{1} << s, (int64_t{1} << s) + 1}) divisors.push_back(d);
  }
  divisors.push_back((int64_t{1} << 31) - 1);
  for (int k = 0; k < 200; ++k) divisors.push_back(any(rng) | 1);
  for (int64_t d : divisors) {
    FastDiv32 f(d);
    uint32_t ud = static_cast<uint32_t>(d);
    std::vector<uint32_t> ns = {0, 1, ud - 1, ud, ud + 1, 2 * ud - 1, (1u << 31) - 1, (1u << 31) - 2};
    for (int k = 0; k < 100; ++k) ns.push_back(any(rng));
    for (uint32_t n : ns) {
      if (n >= (1u << 31)) continue;
      ASSERT_EQ(f.div(n), n / ud) << n << " / " << d;
    }
  }
}

/// Row-major element strides of `dims`, and those of `dims` read through `perm` (out dim k = in dim perm[k]).
std::vector<int64_t> row_major(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int k = static_cast<int>(dims.size()) - 2; k >= 0; --k) s[k] = s[k + 1] * dims[k + 1];
  return s;
}

/// Plans the permutation of a contiguous tensor into a contiguous output (as ShuffleKernel launches it).
CopyPlan plan_permute(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm, int elem_size,
                      uintptr_t in_addr = 4096, uintptr_t out_addr = 8192) {
  auto ist = row_major(dims);
  std::vector<int64_t> od, st;
  for (int64_t p : perm) {
    od.push_back(dims[p]);
    st.push_back(ist[p]);
  }
  auto ost = row_major(od);
  Shape s;
  s.rank = static_cast<int>(od.size());
  for (int k = 0; k < s.rank; ++k) s.d[k] = od[k];
  return plan_strided_copy(in_addr, 0, st.data(), out_addr, 0, ost.data(), s, elem_size);
}

std::vector<int64_t> dims_of(const CopyPlan& p) { return std::vector<int64_t>(p.d, p.d + p.rank); }
std::vector<int64_t> in_strides(const CopyPlan& p) { return std::vector<int64_t>(p.in_st, p.in_st + p.rank); }
std::vector<int64_t> out_strides(const CopyPlan& p) {
  return std::vector<int64_t>(p.out_st, p.out_st + p.rank);
}

TEST(EngineCudaCopyPlan, HeadSplitMovesSixteenByteVectors) {
  // [B, S, H, D] -> [B, H, S, D], fp16, D = 64: 8 halves per vector; dims innermost first.
  CopyPlan p = plan_permute({32, 197, 12, 64}, {0, 2, 1, 3}, 2);
  EXPECT_EQ(p.path, CopyPath::kElementwise);
  EXPECT_EQ(p.elem_size, 16);
  EXPECT_TRUE(p.narrow);
  EXPECT_EQ(dims_of(p), (std::vector<int64_t>{8, 197, 12, 32}));
  EXPECT_EQ(in_strides(p), (std::vector<int64_t>{1, 12 * 8, 8, 197 * 12 * 8}));
  EXPECT_EQ(out_strides(p), (std::vector<int64_t>{1, 8, 197 * 8, 12 * 197 * 8}));
  EXPECT_EQ(p.count, 32 * 197 * 12 * 8);
}

TEST(EngineCudaCopyPlan, MergesDimsAndDropsOnes) {
  // Contiguous on both sides: one dim, 16-byte vectors.
  CopyPlan p = plan_permute({4, 1, 5, 6}, {0, 1, 2, 3}, 4);
  EXPECT_EQ(dims_of(p), (std::vector<int64_t>{30}));
  EXPECT_EQ(p.elem_size, 16);
  // [A, B, C, D] -> [C, D, A, B]: two merged pairs, a 2-D transpose of 6x20 (too thin to tile).
  p = plan_permute({4, 5, 2, 3}, {2, 3, 0, 1}, 4);
  EXPECT_EQ(dims_of(p), (std::vector<int64_t>{20, 6}));
  EXPECT_EQ(in_strides(p), (std::vector<int64_t>{6, 1}));
  EXPECT_EQ(p.path, CopyPath::kElementwise);
  // A single element, and an empty copy.
  p = plan_permute({1, 1}, {1, 0}, 8);
  EXPECT_EQ(p.path, CopyPath::kElementwise);
  EXPECT_EQ(p.count, 1);
  EXPECT_EQ(plan_permute({3, 0, 2}, {2, 1, 0}, 2).path, CopyPath::kNone);
}

TEST(EngineCudaCopyPlan, VectorWidthFollowsAlignment) {
  // Rows of 6 halves (12 bytes): 4-byte vectors. Rows of 5: none.
  EXPECT_EQ(plan_permute({3, 50, 7, 6}, {0, 2, 1, 3}, 2).elem_size, 4);
  EXPECT_EQ(plan_permute({3, 50, 7, 5}, {0, 2, 1, 3}, 2).elem_size, 2);
  // An output base 8 bytes past alignment limits the vectors to 8 bytes; 2 bytes to no vectors.
  EXPECT_EQ(plan_permute({4, 8, 3, 64}, {0, 2, 1, 3}, 2, 4096, 8192 + 8).elem_size, 8);
  EXPECT_EQ(plan_permute({4, 8, 3, 64}, {0, 2, 1, 3}, 2, 4096 + 2, 8192).elem_size, 2);
  // A slice one element into each row of 64 halves: the base offset breaks the alignment.
  int64_t ist[2] = {64, 1}, ost[2] = {62, 1};
  Shape s;
  s.rank = 2;
  s.d[0] = 40;
  s.d[1] = 62;
  CopyPlan p = plan_strided_copy(4096, 1, ist, 8192, 0, ost, s, 2);
  EXPECT_EQ(p.elem_size, 2);
  EXPECT_EQ(p.in_offset, 2);
  p = plan_strided_copy(4096, 8, ist, 8192, 0, ost, s, 2);  // 16 bytes in, rows of 124 bytes: 4-byte vectors
  EXPECT_EQ(p.elem_size, 4);
  EXPECT_EQ(dims_of(p), (std::vector<int64_t>{31, 40}));
  EXPECT_EQ(in_strides(p), (std::vector<int64_t>{1, 32}));
}

TEST(EngineCudaCopyPlan, TransposesTileWhenBothSidesAreWide) {
  // [B, C, HW] -> [B, HW, C]: dim 0 (C) is strided in the input, dim 1 (HW) contiguous there.
  CopyPlan p = plan_permute({32, 768, 196}, {0, 2, 1}, 2);
  EXPECT_EQ(p.path, CopyPath::kTiled);
  EXPECT_EQ(p.tile_dim, 1);
  EXPECT_EQ(dims_of(p), (std::vector<int64_t>{768, 196, 32}));
  EXPECT_EQ(p.elem_size, 2);
  // Rank 6 with the tiled dims apart.
  p = plan_permute({2, 3, 4, 20, 3, 18}, {0, 5, 2, 1, 4, 3}, 8);
  EXPECT_EQ(p.path, CopyPath::kTiled);
  EXPECT_EQ(p.rank, 6);
  EXPECT_EQ(p.d[p.tile_dim], 18);
  // Three channels, or a contiguous run of 8: elementwise.
  EXPECT_EQ(plan_permute({2, 3, 17, 19}, {0, 2, 3, 1}, 4).path, CopyPath::kElementwise);
  EXPECT_EQ(plan_permute({5, 8, 300}, {0, 2, 1}, 4).path, CopyPath::kElementwise);
}

TEST(EngineCudaCopyPlan, IndexWidthFollowsOffsets) {
  // 2^31 elements or offsets beyond 2^31 need 64-bit index math; counts and offsets are in (vector)
  // elements, so 16-byte vectors of 8 halves bring 2^31 halves back within range; negative strides count by
  // their extent.
  EXPECT_FALSE(plan_permute({2, 1024, 1024, 1025}, {0, 2, 1, 3}, 2).narrow);
  EXPECT_TRUE(plan_permute({2, 1024, 1024, 1024}, {0, 2, 1, 3}, 2).narrow);
  EXPECT_TRUE(plan_permute({1024, 1024, 1024}, {1, 0, 2}, 2).narrow);
  int64_t st[2] = {(int64_t{1} << 31) + 1, 1}, ost[2] = {4, 1};
  Shape s;
  s.rank = 2;
  s.d[0] = 2;
  s.d[1] = 4;
  EXPECT_FALSE(plan_strided_copy(4096, 0, st, 8192, 0, ost, s, 1).narrow);
  int64_t neg[2] = {-64, -1};
  EXPECT_TRUE(plan_strided_copy(4096, 1023, neg, 8192, 0, ost, s, 1).narrow);
}

}  // namespace
}  // namespace kiln::engine::cuda

#endif  // KILN_HAVE_CUDA
