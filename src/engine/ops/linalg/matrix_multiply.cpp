// MatrixMultiply layers (params: kiln/engine/ops/linalg/matrix_multiply.h): shape inference and the reference
// kernel.

#include <algorithm>

#include "engine/ops/common.h"
#include "engine/ops/kind_ops.h"
#include "engine/ops/linalg/post_ops.h"
#include "engine/ops/shape_util.h"

namespace kiln::engine::ops {

template <>
std::vector<ShapeOut> infer_kind<LayerKind::MatrixMultiply>(const Layer& layer,
                                                            const std::vector<ShapeIn>& in) {
  const auto& p = layer.get<MatrixMultiplyParams>();
  bool b_weight = !layer.weights.empty() && layer.weights[0].defined();
  KILN_CHECK(in.size() >= (b_weight ? 1u : 2u), InvalidInput, "matrix multiply needs two operands");
  ShapeIn b_in;
  if (b_weight) {
    b_in.dtype = in[0].dtype;
    b_in.dims = layer.weights[0].value.sizes();
  } else {
    b_in = in[1];
  }
  const ShapeIn& a = in[0];
  check_float(a, "input 0");
  KILN_CHECK(b_in.dtype == a.dtype, InvalidInput, "operand dtypes differ: ", dtype_name(a.dtype), " vs ",
             dtype_name(b_in.dtype));
  KILN_CHECK(a.dims.size() >= 2 && b_in.dims.size() >= 2, InvalidInput,
             "matrix multiply operands need rank >= 2, got ", a.dims.size(), " and ", b_in.dims.size());
  size_t ra = a.dims.size(), rb = b_in.dims.size();
  int64_t m = p.transpose_a ? a.dims[ra - 1] : a.dims[ra - 2];
  int64_t ka = p.transpose_a ? a.dims[ra - 2] : a.dims[ra - 1];
  int64_t kb = p.transpose_b ? b_in.dims[rb - 1] : b_in.dims[rb - 2];
  int64_t n = p.transpose_b ? b_in.dims[rb - 2] : b_in.dims[rb - 1];
  KILN_CHECK(ka < 0 || kb < 0 || ka == kb, InvalidInput, "inner dims differ: ", ka, " vs ", kb, " (a ",
             dims_str(a.dims), ", b ", dims_str(b_in.dims), ")");
  Dims batch =
      broadcast_dims(Dims(a.dims.begin(), a.dims.end() - 2), Dims(b_in.dims.begin(), b_in.dims.end() - 2));
  batch.push_back(m);
  batch.push_back(n);
  if (layer.weights.size() > 1 && layer.weights[1].defined()) {
    KILN_CHECK(n < 0 || layer.weights[1].value.numel() == n, InvalidInput, "bias has ",
               layer.weights[1].value.numel(), " elements, expected ", n);
  }
  check_post_ops(layer, p.post_ops, in, batch, a.dtype);
  return {{a.dtype, batch}};
}

template <>
void run_kind<LayerKind::MatrixMultiply>(const Layer& layer, KernelArgs& args) {
  const auto& p = layer.get<MatrixMultiplyParams>();
  bool b_weight = !layer.weights.empty() && layer.weights[0].defined();
  const TensorView& a = args.inputs[0];
  TensorView b = b_weight ? TensorView{const_cast<uint8_t*>(layer.weights[0].value.data()),
                                       layer.weights[0].value.dtype(), layer.weights[0].value.sizes()}
                          : args.inputs[1];
  const TensorView& y = args.outputs[0];
  size_t ra = a.dims.size(), ry = y.dims.size();
  int64_t m = y.dims[ry - 2], n = y.dims[ry - 1];
  int64_t k = p.transpose_a ? a.dims[ra - 2] : a.dims[ra - 1];
  Dims batch(y.dims.begin(), y.dims.end() - 2);
  auto boff_a = broadcast_offsets(Dims(a.dims.begin(), a.dims.end() - 2), batch);
  auto boff_b = broadcast_offsets(Dims(b.dims.begin(), b.dims.end() - 2), batch);
  std::vector<float> af = load_floats(a), bf = load_floats(b);
  if (p.transpose_b) {  // make B [.., K, N] so the inner loop streams rows
    std::vector<float> t(bf.size());
    int64_t mats = static_cast<int64_t>(bf.size()) / std::max<int64_t>(k * n, 1);
    for (int64_t q = 0; q < mats; ++q)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t kk = 0; kk < k; ++kk) t[q * k * n + kk * n + j] = bf[q * k * n + j * k + kk];
    bf.swap(t);
  }
  int64_t nb = checked_numel(batch);
  std::vector<float> acc(static_cast<size_t>(nb * m * n), 0.0f);
  parallel(args.pool, nb * m, 4, [&](int64_t s, int64_t e) {
    for (int64_t bi = s; bi < e; ++bi) {
      int64_t bt = bi / m, i = bi % m;
      const float* A = &af[boff_a[bt] * m * k];
      const float* B = &bf[boff_b[bt] * k * n];
      float* Y = &acc[(bt * m + i) * n];
      for (int64_t kk = 0; kk < k; ++kk) {
        float av = p.transpose_a ? A[kk * m + i] : A[i * k + kk];
        const float* brow = B + kk * n;
        for (int64_t j = 0; j < n; ++j) Y[j] += av * brow[j];
      }
    }
  });
  finish_linalg(layer, p.post_ops, args, acc, [&](int64_t i) { return i % n; });
}

}  // namespace kiln::engine::ops
