#include <map>
#include <random>

#include "lowering/decompositions/decomposition_test_util.h"

namespace kiln::lowering {
namespace {

// Runs the graph before and after the decomposition through the libtorch reference at every binding of
// `bindings` on random data whose index inputs (the inputs named in `index_dims`: input name -> the dim of
// `self` it indexes) are drawn from [-n, n) for that dim's size n, so negative indices are exercised. Index
// arithmetic and a gather of the same elements: the outputs must be equal (tolerance 0).
void expect_same_indexing(const std::string& before, const std::string& after,
                          const std::map<std::string, int64_t>& index_dims,
                          const std::vector<ir::SymBindings>& bindings) {
#ifdef KILN_LOWERING_HAVE_REFERENCE
  auto original = ir::parse_graph(before);
  auto lowered = ir::parse_graph(after);
  const ir::Value* self = original->inputs().at(0);
  uint32_t seed = 99;
  for (const ir::SymBindings& b : bindings) {
    std::mt19937 rng(seed++);
    std::vector<HostTensor> inputs;
    for (const ir::Value* v : original->inputs()) {
      std::vector<int64_t> sizes;
      for (const auto& s : v->meta().sizes) sizes.push_back(s.evaluate(b));
      auto it = index_dims.find(v->name());
      if (it == index_dims.end()) {
        inputs.push_back(testing::random_tensor(v->meta().dtype, sizes, rng));
        continue;
      }
      const int64_t n = self->meta().sizes.at(static_cast<size_t>(it->second)).evaluate(b);
      std::uniform_int_distribution<int64_t> pick(-n, n - 1);
      HostTensor t(v->meta().dtype, sizes);
      for (int64_t e = 0; e < t.numel(); ++e) t.set_from_double(e, static_cast<double>(pick(rng)));
      inputs.push_back(std::move(t));
    }
    const auto want = runtime::run_in_libtorch(*original, inputs);
    const auto got = runtime::run_in_libtorch(*lowered, inputs);
    ASSERT_EQ(want.size(), got.size());
    std::string at;
    for (const auto& [name, value] : b) at += " " + name + "=" + std::to_string(value);
    for (size_t i = 0; i < want.size(); ++i)
      testing::expect_allclose(want[i], got[i], 0, 0, "output " + std::to_string(i) + " at" + at);
  }
#else
  (void)before, (void)after, (void)index_dims, (void)bindings;
#endif
}

// Integer index arithmetic and a gather of the same elements: exact.
TEST(DecomposeIndex, SeveralIndexTensorsBecomeOneLinearIndex) {
  testing::expect_decomposition(R"(graph(%x: f32[5, 6, 3], %i: i64[2, 1], %j: i64[1, 4]) {
  %y: f32[2, 4, 3] = aten.index.Tensor(self=%x, indices=?[%i, %j])
  return (%y)
})",
                                R"(graph(%x: f32[5, 6, 3], %i: i64[2, 1], %j: i64[1, 4]) {
  %remainder: i64[2, 1] = aten.remainder.Scalar(self=%i, other=5)
  %mul: i64[2, 1] = aten.mul.Scalar(self=%remainder, other=6)
  %remainder_1: i64[1, 4] = aten.remainder.Scalar(self=%j, other=6)
  %add: i64[2, 4] = aten.add.Tensor(self=%mul, other=%remainder_1, *, alpha=1)
  %reshape: f32[30, 3] = aten.reshape.default(self=%x, shape=[30, 3])
  %index: f32[2, 4, 3] = aten.index.Tensor(self=%reshape, indices=?[%add])
  return (%index)
})");
}

// Runs both graphs through the libtorch reference on random data (masks about half true); the outputs (selected
// elements, data-dependent shapes) must be equal.
void expect_same_selection(const std::string& before, const std::string& after,
                           const std::vector<ir::SymBindings>& bindings) {
#ifdef KILN_LOWERING_HAVE_REFERENCE
  auto original = ir::parse_graph(before);
  auto lowered = ir::parse_graph(after);
  uint32_t seed = 7;
  for (const ir::SymBindings& b : bindings) {
    std::mt19937 rng(seed++);
    std::vector<HostTensor> inputs;
    for (const ir::Value* v : original->inputs()) {
      std::vector<int64_t> sizes;
      for (const auto& s : v->meta().sizes) sizes.push_back(s.evaluate(b));
      inputs.push_back(testing::random_tensor(v->meta().dtype, sizes, rng));
    }
    const auto want = runtime::run_in_libtorch(*original, inputs);
    const auto got = runtime::run_in_libtorch(*lowered, inputs);
    ASSERT_EQ(want.size(), got.size());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(want[i].sizes(), got[i].sizes());
      testing::expect_allclose(want[i], got[i], 0, 0, "output " + std::to_string(i));
    }
  }
#else
  (void)before, (void)after, (void)bindings;
#endif
}

// self[mask] (transformers' hidden[attention_mask.bool()]): a mask over the leading dims becomes masked_select
// with the mask broadcast over the trailing dims, reshaped to [count, trailing...]; a mask over every dim is
// masked_select itself. Selection of the same elements: exact.
TEST(DecomposeIndex, BooleanMaskBecomesMaskedSelect) {
  const char* leading = R"(graph(%x: f32[s0, 5, 3], %m: bool[s0, 5]) {
  symbol s0 in [1, 8] hint 2
  %y: f32[u0, 3] = aten.index.Tensor(self=%x, indices=?[%m])
  return (%y)
})";
  const char* leading_after = R"(graph(%x: f32[s0, 5, 3], %m: bool[s0, 5]) {
  symbol s0 in [1, 8] hint 2
  %unsqueeze: bool[s0, 5, 1] = aten.unsqueeze.default(self=%m, dim=2)
  %expand: bool[s0, 5, 3] = aten.expand.default(self=%unsqueeze, size=[-1, -1, 3], *, implicit=False)
  %masked_select: f32[3*u0] = aten.masked_select.default(self=%x, mask=%expand)
  %reshape: f32[u0, 3] = aten.reshape.default(self=%masked_select, shape=[-1, 3])
  return (%reshape)
})";
  testing::expect_decomposition(leading, leading_after);
  expect_same_selection(leading, leading_after, {{{"s0", 2}}, {{"s0", 6}}});
  const char* full = R"(graph(%x: f32[4, 6], %m: bool[4, 6]) {
  %y: f32[u0] = aten.index.Tensor(self=%x, indices=?[%m])
  return (%y)
})";
  const char* full_after = R"(graph(%x: f32[4, 6], %m: bool[4, 6]) {
  %masked_select: f32[u0] = aten.masked_select.default(self=%x, mask=%m)
  return (%masked_select)
})";
  testing::expect_decomposition(full, full_after);
  expect_same_selection(full, full_after, {{}});
}

TEST(DecomposeIndex, SeparatedIndicesAndMasksAreLeftAlone) {
  const char* separated = R"(graph(%x: f32[5, 6, 7], %i: i64[2], %j: i64[2]) {
  %y: f32[2, 6] = aten.index.Tensor(self=%x, indices=?[%i, None, %j])
  return (%y)
})";
  testing::expect_decomposition(separated, separated);
}

// Symbolic indexed dims and index tensors of dynamic shapes that broadcast against each other: the sizes
// become sym_size.int SymInts of `self`, the flattened extent their _operator.mul. Checked exactly at several
// sizes, with negative indices (see expect_same_indexing).
TEST(DecomposeIndex, SymbolicIndexedDimsAndDynamicIndexShapes) {
  const char* before = R"(graph(%x: f32[s0, s1, 3], %i: i64[s2, 1], %j: i64[1, s3]) {
  symbol s0 in [1, 8] hint 4
  symbol s1 in [2, 9] hint 5
  symbol s2 in [1, 6] hint 2
  symbol s3 in [1, 7] hint 3
  %y: f32[s2, s3, 3] = aten.index.Tensor(self=%x, indices=?[%i, %j])
  return (%y)
})";
  const char* after = R"(graph(%x: f32[s0, s1, 3], %i: i64[s2, 1], %j: i64[1, s3]) {
  symbol s0 in [1, 8] hint 4
  symbol s1 in [2, 9] hint 5
  symbol s2 in [1, 6] hint 2
  symbol s3 in [1, 7] hint 3
  %sym_size_int: sym_int(s0) = aten.sym_size.int(self=%x, dim=0)
  %sym_size_int_1: sym_int(s1) = aten.sym_size.int(self=%x, dim=1)
  %remainder: i64[s2, 1] = aten.remainder.Scalar(self=%i, other=%sym_size_int)
  %mul: i64[s2, 1] = aten.mul.Scalar(self=%remainder, other=%sym_size_int_1)
  %remainder_1: i64[1, s3] = aten.remainder.Scalar(self=%j, other=%sym_size_int_1)
  %add: i64[s2, s3] = aten.add.Tensor(self=%mul, other=%remainder_1, *, alpha=1)
  %mul_1: sym_int(s0*s1) = _operator.mul(a=%sym_size_int, b=%sym_size_int_1)
  %reshape: f32[s0*s1, 3] = aten.reshape.default(self=%x, shape=[%mul_1, 3])
  %index: f32[s2, s3, 3] = aten.index.Tensor(self=%reshape, indices=?[%add])
  return (%index)
})";
  testing::PassCheck check;
  check.numeric = false;  // index values must lie in [-n, n): checked below
  testing::expect_decomposition(before, after, check);
  expect_same_indexing(before, after, {{"i", 0}, {"j", 1}},
                       {{{"s0", 4}, {"s1", 5}, {"s2", 2}, {"s3", 3}},
                        {{"s0", 1}, {"s1", 2}, {"s2", 1}, {"s3", 1}},
                        {{"s0", 8}, {"s1", 9}, {"s2", 6}, {"s3", 7}},
                        {{"s0", 3}, {"s1", 7}, {"s2", 5}, {"s3", 2}}});
}

// transformers' padding mask (masking_utils.padding_mask_function): attention_mask[batch_idx, kv_idx] with
// batch_idx = arange(B)[:, None, None, None] and kv_idx = arange(KV)[None, None, None, :]. The sizes already
// exist as SymInts (sym_size.int of another input, as torch.export writes them): they are reused. Exact, at
// several batch and sequence sizes, with negative indices.
TEST(DecomposeIndex, TransformersPaddingMaskWithDynamicBatchAndSequence) {
  const char* before =
      R"(graph(%ids: i64[s43, s53], %mask: bool[s43, s53], %b: i64[s43, 1, 1, 1], %k: i64[1, 1, 1, s53]) {
  symbol s43 in [1, 8] hint 2
  symbol s53 in [4, 64] hint 16
  %n: sym_int(s43) = aten.sym_size.int(self=%ids, dim=0)
  %m: sym_int(s53) = aten.sym_size.int(self=%ids, dim=1)
  %y: bool[s43, 1, 1, s53] = aten.index.Tensor(self=%mask, indices=?[%b, %k])
  return (%y, %n, %m)
})";
  const char* after =
      R"(graph(%ids: i64[s43, s53], %mask: bool[s43, s53], %b: i64[s43, 1, 1, 1], %k: i64[1, 1, 1, s53]) {
  symbol s43 in [1, 8] hint 2
  symbol s53 in [4, 64] hint 16
  %n: sym_int(s43) = aten.sym_size.int(self=%ids, dim=0)
  %m: sym_int(s53) = aten.sym_size.int(self=%ids, dim=1)
  %remainder: i64[s43, 1, 1, 1] = aten.remainder.Scalar(self=%b, other=%n)
  %mul: i64[s43, 1, 1, 1] = aten.mul.Scalar(self=%remainder, other=%m)
  %remainder_1: i64[1, 1, 1, s53] = aten.remainder.Scalar(self=%k, other=%m)
  %add: i64[s43, 1, 1, s53] = aten.add.Tensor(self=%mul, other=%remainder_1, *, alpha=1)
  %mul_1: sym_int(s43*s53) = _operator.mul(a=%n, b=%m)
  %reshape: bool[s43*s53] = aten.reshape.default(self=%mask, shape=[%mul_1])
  %index: bool[s43, 1, 1, s53] = aten.index.Tensor(self=%reshape, indices=?[%add])
  return (%index, %n, %m)
})";
  testing::PassCheck check;
  check.numeric = false;  // index values must lie in [-n, n): checked below
  testing::expect_decomposition(before, after, check);
  expect_same_indexing(before, after, {{"b", 0}, {"k", 1}},
                       {{{"s43", 2}, {"s53", 16}},
                        {{"s43", 1}, {"s53", 4}},
                        {{"s43", 8}, {"s53", 64}},
                        {{"s43", 3}, {"s53", 37}}});
}

// A leading None keeps its dim; one static and one symbolic indexed dim (the SymInt product folds nothing but
// the static factor); a trailing dim after the indexed ones. Exact at several sizes with negative indices.
TEST(DecomposeIndex, LeadingNoneWithStaticAndSymbolicIndexedDims) {
  const char* before = R"(graph(%x: f32[2, 5, s0, 3], %i: i64[4], %j: i64[4]) {
  symbol s0 in [1, 6] hint 3
  %y: f32[2, 4, 3] = aten.index.Tensor(self=%x, indices=?[None, %i, %j])
  return (%y)
})";
  const char* after = R"(graph(%x: f32[2, 5, s0, 3], %i: i64[4], %j: i64[4]) {
  symbol s0 in [1, 6] hint 3
  %sym_size_int: sym_int(s0) = aten.sym_size.int(self=%x, dim=2)
  %remainder: i64[4] = aten.remainder.Scalar(self=%i, other=5)
  %mul: i64[4] = aten.mul.Scalar(self=%remainder, other=%sym_size_int)
  %remainder_1: i64[4] = aten.remainder.Scalar(self=%j, other=%sym_size_int)
  %add: i64[4] = aten.add.Tensor(self=%mul, other=%remainder_1, *, alpha=1)
  %mul_1: sym_int(5*s0) = _operator.mul(a=5, b=%sym_size_int)
  %reshape: f32[2, 5*s0, 3] = aten.reshape.default(self=%x, shape=[2, %mul_1, 3])
  %index: f32[2, 4, 3] = aten.index.Tensor(self=%reshape, indices=?[None, %add])
  return (%index)
})";
  testing::PassCheck check;
  check.numeric = false;  // index values must lie in [-n, n): checked below
  testing::expect_decomposition(before, after, check);
  expect_same_indexing(before, after, {{"i", 1}, {"j", 2}}, {{{"s0", 3}}, {{"s0", 1}}, {{"s0", 6}}});
}

// A symbolic indexed dim that may be 0 over its range: a remainder by zero is an error in torch, so the node
// stays whole.
TEST(DecomposeIndex, SymbolicDimThatMayBeZeroIsLeftAlone) {
  const char* may_be_empty = R"(graph(%x: f32[s0, 4], %i: i64[2], %j: i64[2]) {
  symbol s0 in [0, 8] hint 3
  %y: f32[2] = aten.index.Tensor(self=%x, indices=?[%i, %j])
  return (%y)
})";
  testing::PassCheck check;
  check.numeric = false;  // unchanged graph
  testing::expect_decomposition(may_be_empty, may_be_empty, check);
}

}  // namespace
}  // namespace kiln::lowering
