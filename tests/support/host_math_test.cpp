// Host math (kiln/support/host_math.h): the one element conversion, strides, broadcasting and the whole-tensor
// operations constant folding uses. Exact comparisons: every value here is a small integer or a float that the
// dtype holds exactly.

#include "kiln/support/host_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kiln/support/error.h"
#include "support/test_util.h"

namespace kiln {
namespace {

using test::values;

HostTensor iota(DType dtype, std::vector<int64_t> sizes) {
  HostTensor t(dtype, std::move(sizes));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_from_double(i, static_cast<double>(i));
  return t;
}

TEST(HostMath, StoreConvertsAndSaturatesIntegers) {
  HostTensor t(DType::Int8, {5});
  t.set_from_double(0, 300.0);
  t.set_from_double(1, -300.0);
  t.set_from_double(2, std::numeric_limits<double>::quiet_NaN());
  t.set_from_double(3, -2.7);  // truncated toward zero
  t.set_from_double(4, 5.0);
  EXPECT_EQ(values(t), (std::vector<double>{127, -128, 0, -2, 5}));
  HostTensor b(DType::Bool, {2});
  b.set_from_double(0, 0.5);
  EXPECT_EQ(values(b), (std::vector<double>{1, 0}));
  HostTensor h(DType::Float16, {1});
  h.set_from_double(0, 1.5);
  EXPECT_EQ(load_element(h.data(), DType::Float16, 0), 1.5);
}

TEST(HostMath, StridesAndBroadcasting) {
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(contiguous_strides({}), (std::vector<int64_t>{}));
  EXPECT_EQ(broadcast_shape({3, 1}, {4}), (std::vector<int64_t>{3, 4}));
  EXPECT_THROW(broadcast_shape({3}, {4}), Error);
  EXPECT_EQ(broadcast_offsets({3, 1}, {3, 2}), (std::vector<int64_t>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(broadcast_offsets({2}, {2, 2}), (std::vector<int64_t>{0, 1, 0, 1}));
}

TEST(HostMath, PermuteExpandSliceCat) {
  HostTensor t = iota(DType::Int64, {2, 3});
  HostTensor p = host_permute(t, {1, 0});
  EXPECT_EQ(p.sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values(p), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  HostTensor e = host_expand(iota(DType::Float32, {2, 1}), {2, 2});
  EXPECT_EQ(values(e), (std::vector<double>{0, 0, 1, 1}));
  HostTensor s = host_slice(t, 1, 0, 3, 2);
  EXPECT_EQ(values(s), (std::vector<double>{0, 2, 3, 5}));
  HostTensor c = host_cat({t, t}, 0, DType::Float32);
  EXPECT_EQ(c.sizes(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(c.dtype(), DType::Float32);
  EXPECT_EQ(values(c), (std::vector<double>{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}));
}

TEST(HostMath, BinaryBroadcastsAndUnaryConverts) {
  HostTensor sum = host_binary(iota(DType::Int32, {2, 1}), iota(DType::Int32, {3}), DType::Int64,
                               [](double a, double b) { return 10 * a + b; });
  EXPECT_EQ(sum.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(sum), (std::vector<double>{0, 1, 2, 10, 11, 12}));
  HostTensor half = host_unary(iota(DType::Int64, {3}), DType::Float32, [](double x) { return x / 2; });
  EXPECT_EQ(values(half), (std::vector<double>{0, 0.5, 1}));
}

}  // namespace
}  // namespace kiln
