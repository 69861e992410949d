#include "frontend/weights.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "kiln/support/error.h"

namespace kiln::frontend {
namespace {

std::shared_ptr<const std::vector<uint8_t>> storage_of(const std::vector<float>& values) {
  auto bytes = std::make_shared<std::vector<uint8_t>>(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(bytes->data(), values.data(), bytes->size());
  return bytes;
}

std::vector<float> random_values(size_t n) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Values are copied bit for bit, so every comparison below is exact.
TEST(TensorFromStorageTest, ContiguousWholeStorageIsShared) {
  auto storage = storage_of(random_values(12));
  HostTensor t = tensor_from_storage(storage, DType::Float32, {3, 4}, {4, 1}, 0, "w");
  EXPECT_EQ(t.data(), storage->data());
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{3, 4}));
}

TEST(TensorFromStorageTest, OffsetAndStridedViews) {
  std::vector<float> v = random_values(24);
  auto storage = storage_of(v);
  // A contiguous slice at an offset.
  HostTensor slice = tensor_from_storage(storage, DType::Float32, {2, 3}, {3, 1}, 5, "slice");
  for (int i = 0; i < 6; ++i) EXPECT_EQ(slice.data_as<float>()[i], v[5 + i]);
  // A transposed view: [4, 6] with strides [1, 4] reads element (r, c) at c * 4 + r.
  HostTensor tr = tensor_from_storage(storage, DType::Float32, {4, 6}, {1, 4}, 0, "transposed");
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 6; ++c) EXPECT_EQ(tr.data_as<float>()[r * 6 + c], v[c * 4 + r]);
  }
  // Broadcast (stride 0) and size-1 dims with arbitrary strides.
  HostTensor bc = tensor_from_storage(storage, DType::Float32, {3, 1, 2}, {0, 99, 1}, 10, "broadcast");
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(bc.data_as<float>()[2 * i], v[10]);
    EXPECT_EQ(bc.data_as<float>()[2 * i + 1], v[11]);
  }
  // Scalars and empty tensors.
  HostTensor scalar = tensor_from_storage(storage, DType::Float32, {}, {}, 7, "scalar");
  EXPECT_EQ(scalar.data_as<float>()[0], v[7]);
  HostTensor empty = tensor_from_storage(storage_of({}), DType::Float32, {0, 5}, {5, 1}, 0, "empty");
  EXPECT_EQ(empty.numel(), 0);
}

TEST(TensorFromStorageTest, RejectsOutOfBoundsAndOverflow) {
  auto storage = storage_of(random_values(8));
  auto expect_invalid = [&](std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset) {
    try {
      tensor_from_storage(storage, DType::Float32, sizes, strides, offset, "t");
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidInput) << e.what();
    }
  };
  expect_invalid({9}, {1}, 0);                                 // one element too many
  expect_invalid({4}, {1}, 5);                                 // offset pushes past the end
  expect_invalid({2, 2}, {7, 1}, 0);                           // the last element is element 8 of 0..7
  expect_invalid({2}, {1}, -1);                                // negative offset
  expect_invalid({2}, {-1}, 1);                                // negative stride
  expect_invalid({3}, {int64_t{1} << 62}, 0);                  // overflowing extent
  expect_invalid({int64_t{1} << 40, int64_t{1} << 40}, {1, 1}, 0);  // overflowing numel
  expect_invalid({2, 2}, {1}, 0);                              // stride count mismatch
}

}  // namespace
}  // namespace kiln::frontend
