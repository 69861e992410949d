#include "kiln/support/dtype_promotion.h"

namespace kiln {

namespace {

int category(DType d) {
  if (d == DType::Bool) return 0;
  return is_floating(d) ? 2 : 1;
}

int width(DType d) {
  switch (d) {
    case DType::Float64: case DType::Int64: return 8;
    case DType::Float32: case DType::Int32: return 4;
    case DType::Float16: case DType::BFloat16: case DType::Int16: return 2;
    default: return 1;
  }
}

DType promote_same_dimness(DType a, DType b) {
  if (a == b) return a;
  const int ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16)) {
    return DType::Float32;
  }
  if ((a == DType::UInt8 && b == DType::Int8) || (a == DType::Int8 && b == DType::UInt8)) return DType::Int16;
  return width(a) >= width(b) ? a : b;
}

}  // namespace

DType promote_types(DType a, int64_t rank_a, DType b, int64_t rank_b) {
  // torch: dimensioned tensors decide the type unless a zero-dim operand is of a higher category.
  const bool za = rank_a == 0, zb = rank_b == 0;
  if (za == zb) return promote_same_dimness(a, b);
  const DType dim_t = za ? b : a, zero_t = za ? a : b;
  // A 0-d operand of a higher category decides (torch promotes the two, which gives the higher category).
  return category(zero_t) > category(dim_t) ? zero_t : dim_t;
}

}  // namespace kiln
