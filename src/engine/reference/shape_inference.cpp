#include "engine/reference/shape_inference.h"

#include "engine/reference/attention_layout.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "kiln/support/checked_math.h"
#include "kiln/support/error.h"
#include "kiln/support/limits.h"

namespace kiln::engine {

bool dims_known(const Dims& dims) {
  return std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0; });
}

std::string dims_str(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

namespace {

constexpr int64_t kUnknown = -1;

void check_float(const ShapeIn& in, const char* what) {
  KILN_CHECK(is_floating(in.dtype), InvalidInput, what, " must be floating point, got ", dtype_name(in.dtype));
}

/// Reads a 1-D (or scalar) integer shape-tensor value, or nullopt when unknown.
std::optional<std::vector<int64_t>> shape_value(const ShapeIn& in, const char* what) {
  KILN_CHECK(in.dtype == DType::Int64 || in.dtype == DType::Int32, InvalidInput, what,
             " must be an Int64/Int32 shape tensor, got ", dtype_name(in.dtype));
  KILN_CHECK(in.dims.size() <= 1, InvalidInput, what, " must be 0-D or 1-D, got rank ", in.dims.size());
  if (!in.value) return std::nullopt;
  std::vector<int64_t> v(static_cast<size_t>(in.value->numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(in.value->get_as_double(static_cast<int64_t>(i)));
  return v;
}

/// Length of a 1-D shape tensor (-1 when dynamic).
int64_t shape_length(const ShapeIn& in) { return in.dims.empty() ? 1 : in.dims[0]; }

Dims conv_like_out(const Dims& in, const std::vector<int64_t>& k, const std::vector<int64_t>& stride,
                   const std::vector<int64_t>& pre, const std::vector<int64_t>& post,
                   const std::vector<int64_t>& dil, bool ceil_mode) {
  Dims out;
  for (size_t i = 0; i < k.size(); ++i) {
    int64_t x = in[i];
    if (x < 0) { out.push_back(kUnknown); continue; }
    const char* what = "a window's output size";
    int64_t span = checked_sub(checked_add(checked_add(x, pre[i], what), post[i], what),
                               checked_add(checked_mul(dil[i], checked_sub(k[i], 1, what), what), 1, what), what);
    KILN_CHECK(span >= 0, InvalidInput, "window ", k[i], " (dilation ", dil[i], ") larger than padded input ", x,
               " in spatial dim ", i);
    int64_t o = checked_add(ceil_mode ? checked_ceildiv(span, stride[i], what) : checked_floordiv(span, stride[i], what),
                            1, what);
    if (ceil_mode && checked_mul(o - 1, stride[i], what) >= checked_add(x, pre[i], what)) --o;
    out.push_back(o);
  }
  return out;
}

void fill_default(std::vector<int64_t>& v, size_t n, int64_t value, const char* what) {
  if (v.empty()) v.assign(n, value);
  KILN_CHECK(v.size() == n, InvalidInput, what, " has ", v.size(), " entries, expected ", n);
}

void check_post_ops(const Layer& layer, const std::vector<PostOp>& post_ops, const std::vector<ShapeIn>& in,
                    const Dims& out, DType dtype) {
  int64_t first = first_residual_input(layer);
  int64_t sums = count_sum_post_ops(post_ops);
  KILN_CHECK(static_cast<int64_t>(in.size()) == first + sums, InvalidInput, "expected ", first + sums,
             " inputs (", sums, " residuals), got ", in.size());
  for (int64_t i = first; i < first + sums; ++i) {
    KILN_CHECK(in[i].dtype == dtype, InvalidInput, "residual input ", i, " dtype ", dtype_name(in[i].dtype),
               " differs from output ", dtype_name(dtype));
    KILN_CHECK(in[i].dims.size() == out.size(), InvalidInput, "residual input ", i, " rank differs from output");
    for (size_t d = 0; d < out.size(); ++d) {
      KILN_CHECK(in[i].dims[d] < 0 || out[d] < 0 || in[i].dims[d] == out[d], InvalidInput, "residual input ", i,
                 " dims ", dims_str(in[i].dims), " differ from output ", dims_str(out));
    }
  }
}

std::vector<ShapeOut> infer_convolution(const Layer& layer, const std::vector<ShapeIn>& in) {
  ConvolutionParams p = layer.get<ConvolutionParams>();
  KILN_CHECK(!in.empty(), InvalidInput, "convolution needs an input");
  check_float(in[0], "input 0");
  KILN_CHECK(!layer.weights.empty() && layer.weights[0].defined(), InvalidInput, "convolution needs kernel weights");
  const HostTensor& w = layer.weights[0].value;
  KILN_CHECK(w.dim() >= 3 && w.dim() <= 5, InvalidInput, "kernel weights must have rank 3-5, got ", w.dim());
  size_t ns = static_cast<size_t>(w.dim() - 2);
  const Dims& x = in[0].dims;
  KILN_CHECK(x.size() == ns + 2, InvalidInput, "input 0 rank ", x.size(), " does not match a ", ns,
             "-D kernel (expected rank ", ns + 2, ")");
  fill_default(p.stride, ns, 1, "stride");
  fill_default(p.pre_padding, ns, 0, "pre_padding");
  fill_default(p.post_padding, ns, 0, "post_padding");
  fill_default(p.dilation, ns, 1, "dilation");
  fill_default(p.output_padding, ns, 0, "output_padding");
  KILN_CHECK(p.groups >= 1, InvalidInput, "groups must be >= 1, got ", p.groups);
  for (size_t i = 0; i < ns; ++i) {
    KILN_CHECK(p.stride[i] >= 1 && p.dilation[i] >= 1 && p.pre_padding[i] >= 0 && p.post_padding[i] >= 0 &&
                   p.output_padding[i] >= 0,
               InvalidInput, "bad stride/dilation/padding in spatial dim ", i);
  }
  int64_t out_c;
  int64_t in_c_per_group;
  if (!p.transposed) {
    out_c = w.sizes()[0];
    in_c_per_group = w.sizes()[1];
    KILN_CHECK(out_c % p.groups == 0, InvalidInput, "output channels ", out_c, " not divisible by groups ", p.groups);
  } else {
    KILN_CHECK(w.sizes()[0] % p.groups == 0, InvalidInput, "input channels not divisible by groups");
    out_c = checked_mul(w.sizes()[1], p.groups, "deconvolution output channels");
    in_c_per_group = w.sizes()[0] / p.groups;
  }
  const int64_t in_c = checked_mul(in_c_per_group, p.groups, "convolution input channels");
  KILN_CHECK(x[1] < 0 || x[1] == in_c, InvalidInput, "input 0 has ", x[1], " channels but the kernel expects ", in_c);
  if (layer.weights.size() > 1 && layer.weights[1].defined()) {
    KILN_CHECK(layer.weights[1].value.numel() == out_c, InvalidInput, "bias has ", layer.weights[1].value.numel(),
               " elements, expected ", out_c);
  }
  Dims out = {x[0], out_c};
  std::vector<int64_t> k(w.sizes().begin() + 2, w.sizes().end());
  if (!p.transposed) {
    Dims sp(x.begin() + 2, x.end());
    Dims o = conv_like_out(sp, k, p.stride, p.pre_padding, p.post_padding, p.dilation, false);
    out.insert(out.end(), o.begin(), o.end());
  } else {
    for (size_t i = 0; i < ns; ++i) {
      int64_t xi = x[2 + i];
      if (xi < 0) { out.push_back(kUnknown); continue; }
      const char* what = "a deconvolution's output size";
      int64_t o = checked_mul(checked_sub(xi, 1, what), p.stride[i], what);
      o = checked_sub(checked_sub(o, p.pre_padding[i], what), p.post_padding[i], what);
      o = checked_add(o, checked_mul(p.dilation[i], checked_sub(k[i], 1, what), what), what);
      o = checked_add(checked_add(o, p.output_padding[i], what), 1, what);
      KILN_CHECK(o > 0, InvalidInput, "deconvolution output size ", o, " <= 0 in spatial dim ", i);
      out.push_back(o);
    }
  }
  check_post_ops(layer, p.post_ops, in, out, in[0].dtype);
  return {{in[0].dtype, out}};
}

std::vector<ShapeOut> infer_matmul(const Layer& layer, const std::vector<ShapeIn>& in) {
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
  KILN_CHECK(a.dims.size() >= 2 && b_in.dims.size() >= 2, InvalidInput, "matrix multiply operands need rank >= 2, got ",
             a.dims.size(), " and ", b_in.dims.size());
  size_t ra = a.dims.size(), rb = b_in.dims.size();
  int64_t m = p.transpose_a ? a.dims[ra - 1] : a.dims[ra - 2];
  int64_t ka = p.transpose_a ? a.dims[ra - 2] : a.dims[ra - 1];
  int64_t kb = p.transpose_b ? b_in.dims[rb - 1] : b_in.dims[rb - 2];
  int64_t n = p.transpose_b ? b_in.dims[rb - 2] : b_in.dims[rb - 1];
  KILN_CHECK(ka < 0 || kb < 0 || ka == kb, InvalidInput, "inner dims differ: ", ka, " vs ", kb, " (a ",
             dims_str(a.dims), ", b ", dims_str(b_in.dims), ")");
  Dims batch = broadcast_dims(Dims(a.dims.begin(), a.dims.end() - 2), Dims(b_in.dims.begin(), b_in.dims.end() - 2));
  batch.push_back(m);
  batch.push_back(n);
  if (layer.weights.size() > 1 && layer.weights[1].defined()) {
    KILN_CHECK(n < 0 || layer.weights[1].value.numel() == n, InvalidInput, "bias has ",
               layer.weights[1].value.numel(), " elements, expected ", n);
  }
  check_post_ops(layer, p.post_ops, in, batch, a.dtype);
  return {{a.dtype, batch}};
}

std::vector<ShapeOut> infer_elementwise(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.size() == 2, InvalidInput, "elementwise needs 2 inputs");
  auto op = layer.get<ElementwiseParams>().op;
  KILN_CHECK(in[0].dtype == in[1].dtype, InvalidInput, "input dtypes differ: ", dtype_name(in[0].dtype), " vs ",
             dtype_name(in[1].dtype));
  if (is_logical(op)) {
    KILN_CHECK(in[0].dtype == DType::Bool, InvalidInput, "logical ", elementwise_op_name(op), " needs Bool inputs");
  } else {
    KILN_CHECK(in[0].dtype != DType::Bool || is_comparison(op), InvalidInput, "arithmetic ",
               elementwise_op_name(op), " on Bool inputs");
  }
  DType out = is_comparison(op) || is_logical(op) ? DType::Bool : in[0].dtype;
  return {{out, broadcast_dims(in[0].dims, in[1].dims)}};
}

std::vector<ShapeOut> infer_unary(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.size() == 1, InvalidInput, "unary needs 1 input");
  UnaryOp op = layer.get<UnaryParams>().op;
  if (op == UnaryOp::Not) {
    KILN_CHECK(in[0].dtype == DType::Bool, InvalidInput, "not needs a Bool input");
    return {{DType::Bool, in[0].dims}};
  }
  if (op == UnaryOp::Abs || op == UnaryOp::Neg || op == UnaryOp::Sign) {
    KILN_CHECK(in[0].dtype != DType::Bool, InvalidInput, unary_op_name(op), " on a Bool input");
    return {{in[0].dtype, in[0].dims}};
  }
  check_float(in[0], "input 0");
  if (op == UnaryOp::IsNan || op == UnaryOp::IsInf) return {{DType::Bool, in[0].dims}};
  return {{in[0].dtype, in[0].dims}};
}

std::vector<ShapeOut> infer_reduce(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.size() == 1, InvalidInput, "reduce needs 1 input");
  const auto& p = layer.get<ReduceParams>();
  int64_t rank = static_cast<int64_t>(in[0].dims.size());
  std::set<int64_t> axes;
  for (int64_t a : p.axes) {
    KILN_CHECK(a >= 0 && a < rank, InvalidInput, "reduce axis ", a, " out of range for rank ", rank);
    KILN_CHECK(axes.insert(a).second, InvalidInput, "reduce axis ", a, " repeated");
  }
  DType dt = in[0].dtype;
  if (p.op == ReduceOp::Any || p.op == ReduceOp::All) {
    KILN_CHECK(dt == DType::Bool, InvalidInput, "any/all need a Bool input");
  } else if (p.op == ReduceOp::ArgMax || p.op == ReduceOp::ArgMin) {
    KILN_CHECK(axes.size() == 1, InvalidInput, "argmax/argmin take exactly one axis");
    dt = DType::Int64;
  } else {
    KILN_CHECK(dt != DType::Bool, InvalidInput, reduce_op_name(p.op), " on a Bool input");
    if (p.op == ReduceOp::Mean) check_float(in[0], "input 0");
  }
  Dims out;
  for (int64_t i = 0; i < rank; ++i) {
    if (axes.count(i)) {
      KILN_CHECK(in[0].dims[i] != 0 || p.op == ReduceOp::Sum || p.op == ReduceOp::Prod || p.op == ReduceOp::Any ||
                     p.op == ReduceOp::All,
                 InvalidInput, reduce_op_name(p.op), " over an empty axis ", i);
      if (p.keep_dims) out.push_back(1);
    } else {
      out.push_back(in[0].dims[i]);
    }
  }
  return {{dt, out}};
}

std::vector<ShapeOut> infer_shuffle(const Layer& layer, const std::vector<ShapeIn>& in) {
  const auto& p = layer.get<ShuffleParams>();
  KILN_CHECK(in.size() == 1 || in.size() == 2, InvalidInput, "shuffle takes 1 or 2 inputs");
  auto permute = [](const Dims& d, const std::vector<int64_t>& perm, const char* what) {
    if (perm.empty()) return d;
    KILN_CHECK(perm.size() == d.size(), InvalidInput, what, " has ", perm.size(), " entries for rank ", d.size());
    std::vector<bool> seen(d.size(), false);
    Dims out;
    for (int64_t q : perm) {
      KILN_CHECK(q >= 0 && q < static_cast<int64_t>(d.size()) && !seen[q], InvalidInput, what,
                 " is not a permutation");
      seen[q] = true;
      out.push_back(d[q]);
    }
    return out;
  };
  Dims d = permute(in[0].dims, p.first_perm, "first_perm");
  if (p.has_reshape || in.size() == 2) {
    std::vector<int64_t> spec = p.reshape;
    bool spec_known = true;
    if (in.size() == 2) {
      auto v = shape_value(in[1], "shape input");
      if (v) {
        spec = *v;
      } else {
        int64_t len = shape_length(in[1]);
        KILN_CHECK(len >= 0, InvalidInput, "shape input of dynamic length");
        spec.assign(static_cast<size_t>(len), kUnknown);
        spec_known = false;
      }
    }
    Dims out;
    if (!spec_known) {
      out = spec;
    } else {
      int64_t infer_at = -1;
      int64_t prod = 1;
      bool prod_known = true;
      for (size_t i = 0; i < spec.size(); ++i) {
        int64_t s = spec[i];
        if (s == 0) {
          KILN_CHECK(i < d.size(), InvalidInput, "reshape 0 at dim ", i, " beyond input rank ", d.size());
          s = d[i];
          if (s < 0) prod_known = false;
        } else if (s == -1) {
          KILN_CHECK(infer_at < 0, InvalidInput, "reshape has more than one -1");
          infer_at = static_cast<int64_t>(i);
          out.push_back(kUnknown);
          continue;
        } else {
          KILN_CHECK(s > 0, InvalidInput, "reshape dim ", s, " is invalid");
        }
        out.push_back(s);
        if (s >= 0) prod = checked_mul(prod, s, "a reshape's elements");
      }
      bool in_known = dims_known(d);
      int64_t total = 1;
      for (int64_t x : d) total = checked_mul(total, x < 0 ? 1 : x, "a reshape's elements");
      if (infer_at >= 0 && in_known && prod_known) {
        KILN_CHECK(prod > 0 && total % prod == 0, InvalidInput, "cannot reshape ", dims_str(d), " to ",
                   dims_str(spec));
        out[infer_at] = total / prod;
      } else if (infer_at < 0 && in_known && prod_known) {
        KILN_CHECK(total == prod, InvalidInput, "cannot reshape ", dims_str(d), " (", total, " elements) to ",
                   dims_str(out));
      }
    }
    d = out;
  }
  return {{in[0].dtype, permute(d, p.second_perm, "second_perm")}};
}

std::vector<ShapeOut> infer_concat(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(!in.empty(), InvalidInput, "concat needs inputs");
  int64_t rank = static_cast<int64_t>(in[0].dims.size());
  int64_t axis = layer.get<ConcatParams>().axis;
  KILN_CHECK(axis >= 0 && axis < rank, InvalidInput, "concat axis ", axis, " out of range for rank ", rank);
  Dims out = in[0].dims;
  for (size_t i = 1; i < in.size(); ++i) {
    KILN_CHECK(in[i].dtype == in[0].dtype, InvalidInput, "input ", i, " dtype differs");
    KILN_CHECK(static_cast<int64_t>(in[i].dims.size()) == rank, InvalidInput, "input ", i, " rank differs");
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis) {
        out[d] = (out[d] < 0 || in[i].dims[d] < 0) ? kUnknown : out[d] + in[i].dims[d];
      } else {
        KILN_CHECK(out[d] < 0 || in[i].dims[d] < 0 || out[d] == in[i].dims[d], InvalidInput, "input ", i, " dims ",
                   dims_str(in[i].dims), " differ from input 0 ", dims_str(in[0].dims), " outside the concat axis");
        if (out[d] < 0) out[d] = in[i].dims[d];
      }
    }
  }
  return {{in[0].dtype, out}};
}

std::vector<ShapeOut> infer_slice(const Layer& layer, const std::vector<ShapeIn>& in) {
  SliceParams p = layer.get<SliceParams>();
  KILN_CHECK(in.size() >= 1 && in.size() <= 4, InvalidInput, "slice takes 1-4 inputs");
  size_t rank = in[0].dims.size();
  bool dyn = false;
  std::vector<int64_t>* fields[3] = {&p.start, &p.size, &p.stride};
  for (size_t i = 1; i < in.size(); ++i) {
    auto v = shape_value(in[i], "slice shape input");
    if (v) *fields[i - 1] = *v; else { fields[i - 1]->assign(rank, kUnknown); dyn = true; }
  }
  fill_default(p.stride, rank, 1, "stride");
  KILN_CHECK(p.start.size() == rank && p.size.size() == rank, InvalidInput, "slice start/size need ", rank,
             " entries");
  Dims out;
  for (size_t d = 0; d < rank; ++d) {
    int64_t s = p.size[d];
    out.push_back(s);
    if (dyn || in[0].dims[d] < 0 || s <= 0) continue;
    int64_t last = checked_add(p.start[d], checked_mul(s - 1, p.stride[d], "a slice's end"), "a slice's end");
    KILN_CHECK(p.stride[d] != 0, InvalidInput, "slice stride 0 in dim ", d);
    KILN_CHECK(p.start[d] >= 0 && p.start[d] < in[0].dims[d] && last >= 0 && last < in[0].dims[d], InvalidInput,
               "slice start ", p.start[d], " size ", s, " stride ", p.stride[d], " out of range for dim ", d,
               " of size ", in[0].dims[d]);
  }
  for (int64_t s : out) KILN_CHECK(s >= kUnknown, InvalidInput, "negative slice size ", s);
  return {{in[0].dtype, out}};
}

std::vector<ShapeOut> infer_gather(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.size() == 2, InvalidInput, "gather needs data and indices");
  const auto& p = layer.get<GatherParams>();
  KILN_CHECK(in[1].dtype == DType::Int64 || in[1].dtype == DType::Int32, InvalidInput,
             "indices must be Int64/Int32, got ", dtype_name(in[1].dtype));
  int64_t rank = static_cast<int64_t>(in[0].dims.size());
  KILN_CHECK(p.axis >= 0 && p.axis < rank, InvalidInput, "gather axis ", p.axis, " out of range for rank ", rank);
  if (p.mode == GatherParams::Elements) {
    KILN_CHECK(in[1].dims.size() == in[0].dims.size(), InvalidInput, "gather elements: indices rank differs");
    return {{in[0].dtype, in[1].dims}};
  }
  Dims out(in[0].dims.begin(), in[0].dims.begin() + p.axis);
  out.insert(out.end(), in[1].dims.begin(), in[1].dims.end());
  out.insert(out.end(), in[0].dims.begin() + p.axis + 1, in[0].dims.end());
  return {{in[0].dtype, out}};
}

std::vector<ShapeOut> infer_scatter(const Layer& layer, const std::vector<ShapeIn>& in) {
  KILN_CHECK(in.size() == 3, InvalidInput, "scatter needs data, indices, updates");
  const auto& p = layer.get<ScatterParams>();
  KILN_CHECK(in[1].dtype == DType::Int64 || in[1].dtype == DType::Int32, InvalidInput, "indices must be Int64/Int32");
  KILN_CHECK(in[2].dtype == in[0].dtype, InvalidInput, "updates dtype differs from data");
  size_t rank = in[0].dims.size();
  KILN_CHECK(p.axis >= 0 && p.axis < static_cast<int64_t>(rank), InvalidInput, "scatter axis out of range");
  KILN_CHECK(in[1].dims.size() == rank && in[2].dims.size() == rank, InvalidInput,
             "scatter indices/updates must have the data's rank");
  for (size_t d = 0; d < rank; ++d) {
    KILN_CHECK(in[1].dims[d] < 0 || in[2].dims[d] < 0 || in[1].dims[d] == in[2].dims[d], InvalidInput,
               "scatter indices and updates dims differ");
  }
  return {{in[0].dtype, in[0].dims}};
}

std::vector<ShapeOut> infer_pooling(const Layer& layer, const std::vector<ShapeIn>& in) {
  PoolingParams p = layer.get<PoolingParams>();
  KILN_CHECK(in.size() == 1, InvalidInput, "pooling needs 1 input");
  check_float(in[0], "input 0");
  const Dims& x = in[0].dims;
  size_t ns = p.adaptive ? p.output_size.size() : p.window.size();
  KILN_CHECK(ns >= 1 && ns <= 3 && x.size() == ns + 2, InvalidInput, "pooling over ", ns,
             " spatial dims needs rank ", ns + 2, " input, got ", x.size());
  Dims out = {x[0], x[1]};
  if (p.adaptive) {
    for (int64_t o : p.output_size) {
      KILN_CHECK(o >= 1, InvalidInput, "adaptive output size must be >= 1");
      out.push_back(o);
    }
    return {{in[0].dtype, out}};
  }
  fill_default(p.stride, ns, 1, "stride");
  fill_default(p.pre_padding, ns, 0, "pre_padding");
  fill_default(p.post_padding, ns, 0, "post_padding");
  fill_default(p.dilation, ns, 1, "dilation");
  for (size_t i = 0; i < ns; ++i) {
    KILN_CHECK(p.window[i] >= 1 && p.stride[i] >= 1 && p.dilation[i] >= 1, InvalidInput, "bad window/stride");
    KILN_CHECK(p.pre_padding[i] >= 0 && p.pre_padding[i] * 2 <= p.window[i] && p.post_padding[i] >= 0, InvalidInput,
               "padding ", p.pre_padding[i], " must be at most half the window ", p.window[i]);
  }
  Dims sp(x.begin() + 2, x.end());
  Dims o = conv_like_out(sp, p.window, p.stride, p.pre_padding, p.post_padding, p.dilation, p.ceil_mode);
  out.insert(out.end(), o.begin(), o.end());
  return {{in[0].dtype, out}};
}

std::vector<ShapeOut> infer_resize(const Layer& layer, const std::vector<ShapeIn>& in) {
  const auto& p = layer.get<ResizeParams>();
  KILN_CHECK(in.size() == 1 || in.size() == 2, InvalidInput, "resize takes 1 or 2 inputs");
  check_float(in[0], "input 0");
  const Dims& x = in[0].dims;
  KILN_CHECK(x.size() >= 3 && x.size() <= 5, InvalidInput, "resize needs an [N, C, spatial...] input");
  size_t ns = x.size() - 2;
  if (in.size() == 2) {
    auto v = shape_value(in[1], "resize shape input");
    if (!v) return {{in[0].dtype, Dims(x.size(), kUnknown)}};
    KILN_CHECK(v->size() == x.size(), InvalidInput, "resize shape input has ", v->size(), " entries for rank ",
               x.size());
    return {{in[0].dtype, *v}};
  }
  Dims out = {x[0], x[1]};
  if (!p.output_size.empty()) {
    KILN_CHECK(p.output_size.size() == ns, InvalidInput, "resize output_size needs ", ns, " entries");
    for (int64_t o : p.output_size) {
      KILN_CHECK(o >= 1, InvalidInput, "resize output size must be >= 1");
      out.push_back(o);
    }
  } else {
    KILN_CHECK(p.scales.size() == ns, InvalidInput, "resize needs output_size or ", ns, " scales");
    for (size_t i = 0; i < ns; ++i) {
      KILN_CHECK(p.scales[i] > 0, InvalidInput, "resize scale must be > 0");
      if (x[2 + i] < 0) {
        out.push_back(kUnknown);
        continue;
      }
      const double o = std::floor(static_cast<double>(x[2 + i]) * p.scales[i]);
      KILN_CHECK(o <= static_cast<double>(kMaxDimExtent), InvalidInput, "resize scale ", p.scales[i], " makes dim ",
                 2 + i, " larger than ", kMaxDimExtent, " (docs/limits.md)");
      out.push_back(static_cast<int64_t>(o));
    }
  }
  return {{in[0].dtype, out}};
}

std::vector<ShapeOut> infer_fill(const Layer& layer, const std::vector<ShapeIn>& in) {
  const auto& p = layer.get<FillParams>();
  KILN_CHECK(in.size() <= 3, InvalidInput, "fill takes at most 3 inputs");
  Dims dims = p.dims;
  if (!in.empty()) {
    auto v = shape_value(in[0], "fill shape input");
    if (v) {
      dims = *v;
    } else {
      int64_t len = shape_length(in[0]);
      KILN_CHECK(len >= 0, InvalidInput, "fill shape input of dynamic length");
      dims.assign(static_cast<size_t>(len), kUnknown);
    }
  }
  for (size_t i = 1; i < in.size(); ++i) {
    KILN_CHECK(in[i].dims.empty() || (in[i].dims.size() == 1 && in[i].dims[0] == 1), InvalidInput,
               "fill scalar input ", i, " must be 0-D or [1]");
  }
  for (int64_t d : dims) KILN_CHECK(d >= kUnknown, InvalidInput, "fill dim ", d, " is negative");
  if (p.op != FillParams::Constant) {
    KILN_CHECK(dims.size() == 1, InvalidInput, "arange/linspace fill must be 1-D");
    KILN_CHECK(p.dtype != DType::Bool, InvalidInput, "arange/linspace of Bool");
  }
  return {{p.dtype, dims}};
}

std::vector<ShapeOut> infer_topk(const Layer& layer, const std::vector<ShapeIn>& in) {
  const auto& p = layer.get<TopKParams>();
  KILN_CHECK(in.size() == 1 || in.size() == 2, InvalidInput, "topk takes 1 or 2 inputs");
  KILN_CHECK(in[0].dtype != DType::Bool, InvalidInput, "topk on Bool");
  int64_t rank = static_cast<int64_t>(in[0].dims.size());
  KILN_CHECK(p.axis >= 0 && p.axis < rank, InvalidInput, "topk axis ", p.axis, " out of range for rank ", rank);
  int64_t k = p.k;
  if (in.size() == 2) {
    auto v = shape_value(in[1], "k input");
    k = v ? (*v).at(0) : kUnknown;
  }
  int64_t n = in[0].dims[p.axis];
  KILN_CHECK(k < 0 && in.size() == 2 ? true : (k >= 0 && (n < 0 || k <= n)), InvalidInput, "topk k=", k,
             " out of range for axis size ", n);
  Dims out = in[0].dims;
  out[p.axis] = k;
  return {{in[0].dtype, out}, {DType::Int64, out}};
}

std::vector<ShapeOut> infer_padding(const Layer& layer, const std::vector<ShapeIn>& in) {
  const auto& p = layer.get<PaddingParams>();
  KILN_CHECK(in.size() == 1, InvalidInput, "padding needs 1 input");
  size_t rank = in[0].dims.size();
  KILN_CHECK(p.pre.size() == rank && p.post.size() == rank, InvalidInput, "padding needs ", rank,
             " pre and post entries");
  Dims out;
  for (size_t d = 0; d < rank; ++d) {
    KILN_CHECK(p.pre[d] >= 0 && p.post[d] >= 0, InvalidInput, "negative padding in dim ", d);
    int64_t x = in[0].dims[d];
    if (x >= 0 && (p.pre[d] || p.post[d])) {
      if (p.mode == PaddingParams::Reflect) {
        KILN_CHECK(p.pre[d] < x && p.post[d] < x, InvalidInput, "reflect padding must be smaller than dim ", d);
      } else if (p.mode != PaddingParams::Constant) {
        KILN_CHECK(x > 0 && (p.mode != PaddingParams::Circular || (p.pre[d] <= x && p.post[d] <= x)), InvalidInput,
                   "padding mode needs a larger dim ", d);
      }
    }
    out.push_back(x < 0 ? kUnknown : x + p.pre[d] + p.post[d]);
  }
  return {{in[0].dtype, out}};
}

std::vector<ShapeOut> infer_attention(const Layer& layer, const std::vector<ShapeIn>& in) {
  const auto& p = layer.get<AttentionParams>();
  KILN_CHECK(in.size() == (p.has_mask ? 4u : 3u), InvalidInput, "attention needs q, k, v", p.has_mask ? ", mask" : "");
  check_float(in[0], "query");
  // Logical operands: the tensors themselves, or what their views (attention_layout.h) read from them.
  static const char* const kOperandNames[] = {"query", "key", "value", "output"};
  Dims logical[3];
  for (int i = 0; i < 3; ++i) {
    const AttentionView& view = p.view(i);
    if (!view.empty()) check_attention_view(view, in[i].dims, kOperandNames[i]);
    logical[i] = view.empty() ? in[i].dims : view.dims;
  }
  const Dims &q = logical[0], &k = logical[1], &v = logical[2];
  KILN_CHECK(in[1].dtype == in[0].dtype && in[2].dtype == in[0].dtype, InvalidInput, "q/k/v dtypes differ");
  KILN_CHECK(q.size() >= 2 && k.size() == q.size() && v.size() == q.size(), InvalidInput,
             "q, k, v must have the same rank >= 2");
  KILN_CHECK(!p.has_views() || q.size() == 4, InvalidInput, "attention views need rank-4 q, k, v");
  size_t r = q.size();
  for (size_t d = 0; d + 2 < r; ++d) {
    KILN_CHECK(q[d] < 0 || k[d] < 0 || v[d] < 0 || (q[d] == k[d] && k[d] == v[d]), InvalidInput,
               "q/k/v batch dims differ");
  }
  KILN_CHECK(q[r - 1] < 0 || k[r - 1] < 0 || q[r - 1] == k[r - 1], InvalidInput, "q and k embedding dims differ");
  KILN_CHECK(k[r - 2] < 0 || v[r - 2] < 0 || k[r - 2] == v[r - 2], InvalidInput, "k and v lengths differ");
  if (p.has_mask) {
    const ShapeIn& m = in[3];
    KILN_CHECK(m.dtype == DType::Bool || m.dtype == in[0].dtype, InvalidInput, "mask must be Bool or the q dtype");
    Dims scores(q.begin(), q.end() - 1);
    scores.push_back(k[r - 2]);
    Dims b = broadcast_dims(scores, m.dims);
    KILN_CHECK(b.size() == scores.size(), InvalidInput, "mask rank larger than the scores");
  }
  Dims out(q.begin(), q.end() - 1);
  out.push_back(v[r - 1]);
  if (!p.out_view.empty()) {
    check_attention_view(p.out_view, p.out_dims, "output");
    KILN_CHECK(std::all_of(p.out_dims.begin(), p.out_dims.end(), [](int64_t x) { return x >= 0; }), InvalidInput,
               "attention output view over unknown dims");
    for (size_t d = 0; d < out.size(); ++d) {
      KILN_CHECK(out[d] < 0 || out[d] == p.out_view.dims[d], InvalidInput, "attention output view dims differ from the output's");
    }
    const int64_t n = checked_product(p.out_dims, "attention output elements");
    const int64_t m = checked_product(p.out_view.dims, "attention output view elements");
    KILN_CHECK(n == m && attention_view_is_permutation(p.out_view), InvalidInput,
               "attention output view must write every element of its tensor once");
    return {{in[0].dtype, p.out_dims}};
  }
  KILN_CHECK(p.out_dims.empty(), InvalidInput, "attention out_dims without an output view");
  return {{in[0].dtype, out}};
}

std::vector<ShapeOut> infer_fused_pointwise(const Layer& layer, const std::vector<ShapeIn>& in) {
  const auto& p = layer.get<FusedPointwiseParams>();
  KILN_CHECK(!p.program.empty(), InvalidInput, "empty pointwise program");
  for (size_t i = 0; i < p.program.size(); ++i) {
    const PointwiseInstr& ins = p.program[i];
    size_t arity = 1;
    switch (ins.kind) {
      case LayerKind::Elementwise:
        KILN_CHECK(ins.op >= 0 && ins.op <= static_cast<int64_t>(ElementwiseOp::Xor), InvalidInput, "bad pointwise op");
        arity = 2;
        break;
      case LayerKind::Unary:
        KILN_CHECK(ins.op >= 0 && ins.op <= static_cast<int64_t>(UnaryOp::IsInf), InvalidInput, "bad pointwise op");
        break;
      case LayerKind::Activation: case LayerKind::Cast: break;
      default: KILN_FAIL(InvalidInput, "pointwise instruction of kind ", layer_kind_name(ins.kind));
    }
    KILN_CHECK(ins.operands.size() == arity, InvalidInput, "pointwise instruction ", i, " has ", ins.operands.size(),
               " operands, expected ", arity);
    for (int64_t r : ins.operands) {
      bool ok = (r >= PointwiseInstr::kTemp && r - PointwiseInstr::kTemp < static_cast<int64_t>(i)) ||
                (r >= PointwiseInstr::kWeight && r < PointwiseInstr::kTemp &&
                 r - PointwiseInstr::kWeight < static_cast<int64_t>(layer.weights.size())) ||
                (r >= 0 && r < PointwiseInstr::kWeight && r < static_cast<int64_t>(in.size()));
      KILN_CHECK(ok, InvalidInput, "pointwise instruction ", i, " has a bad operand ", r);
    }
  }
  for (const auto& w : layer.weights) KILN_CHECK(w.defined(), InvalidInput, "pointwise weight undefined");
  Dims d;
  for (const auto& x : in) d = broadcast_dims(d, x.dims);
  for (const auto& w : layer.weights) d = broadcast_dims(d, w.value.sizes());
  return {{in.empty() ? DType::Float32 : in[0].dtype, d}};
}

}  // namespace

int64_t count_sum_post_ops(const std::vector<PostOp>& post_ops) {
  return std::count_if(post_ops.begin(), post_ops.end(), [](const PostOp& p) { return p.kind == PostOp::Sum; });
}

int64_t first_residual_input(const Layer& layer) {
  if (layer.kind == LayerKind::Convolution) return 1;
  bool b_weight = !layer.weights.empty() && layer.weights[0].defined();
  return b_weight ? 1 : 2;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const char* what) {
  int64_t a = axis < 0 ? axis + rank : axis;
  KILN_CHECK(a >= 0 && a < std::max<int64_t>(rank, 1), InvalidInput, what, " ", axis, " out of range for rank ", rank);
  return a;
}

Dims broadcast_dims(const Dims& a, const Dims& b) {
  size_t r = std::max(a.size(), b.size());
  Dims out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (x == 1) out[i] = y;
    else if (y == 1) out[i] = x;
    else if (x < 0) out[i] = y;
    else if (y < 0) out[i] = x;
    else {
      KILN_CHECK(x == y, InvalidInput, "cannot broadcast ", dims_str(a), " with ", dims_str(b));
      out[i] = x;
    }
  }
  return out;
}

std::vector<ShapeOut> infer_shapes(const Layer& layer, const std::vector<ShapeIn>& in) {
  switch (layer.kind) {
    case LayerKind::Constant:
      KILN_CHECK(in.empty() && layer.weights.size() == 1 && layer.weights[0].defined(), InvalidInput,
                 "constant needs one defined weight and no inputs");
      return {{layer.weights[0].value.dtype(), layer.weights[0].value.sizes()}};
    case LayerKind::Convolution: return infer_convolution(layer, in);
    case LayerKind::MatrixMultiply: return infer_matmul(layer, in);
    case LayerKind::Elementwise: return infer_elementwise(layer, in);
    case LayerKind::Activation:
      KILN_CHECK(in.size() == 1, InvalidInput, "activation needs 1 input");
      check_float(in[0], "input 0");
      return {{in[0].dtype, in[0].dims}};
    case LayerKind::Unary: return infer_unary(layer, in);
    case LayerKind::Reduce: return infer_reduce(layer, in);
    case LayerKind::Softmax: {
      KILN_CHECK(in.size() == 1, InvalidInput, "softmax needs 1 input");
      check_float(in[0], "input 0");
      int64_t axis = layer.get<SoftmaxParams>().axis;
      KILN_CHECK(axis >= 0 && axis < static_cast<int64_t>(in[0].dims.size()), InvalidInput, "softmax axis ", axis,
                 " out of range");
      return {{in[0].dtype, in[0].dims}};
    }
    case LayerKind::Normalization: {
      const auto& p = layer.get<NormalizationParams>();
      KILN_CHECK(in.size() == 1, InvalidInput, "normalization needs 1 input");
      check_float(in[0], "input 0");
      const Dims& x = in[0].dims;
      int64_t rank = static_cast<int64_t>(x.size());
      KILN_CHECK(p.epsilon >= 0, InvalidInput, "epsilon must be >= 0");
      Dims wshape;
      if (p.kind == NormalizationParams::Layer) {
        KILN_CHECK(p.axis >= 0 && p.axis < rank, InvalidInput, "layer norm axis ", p.axis, " out of range");
        wshape.assign(x.begin() + p.axis, x.end());
      } else {
        KILN_CHECK(rank >= 3, InvalidInput, "group/instance norm needs rank >= 3");
        int64_t g = p.kind == NormalizationParams::Instance ? x[1] : p.groups;
        KILN_CHECK(x[1] >= 0, InvalidInput, "group/instance norm needs a static channel dim");
        KILN_CHECK(g >= 1 && x[1] % g == 0, InvalidInput, "channels ", x[1], " not divisible by groups ", g);
        wshape = {x[1]};
      }
      for (size_t i = 0; i < layer.weights.size() && i < 2; ++i) {
        if (!layer.weights[i].defined()) continue;
        int64_t need = 1;
        bool k = dims_known(wshape);
        if (k) need = checked_product(wshape, "normalization weight elements");
        KILN_CHECK(!k || layer.weights[i].value.numel() == need, InvalidInput, i ? "bias" : "scale", " has ",
                   layer.weights[i].value.numel(), " elements, expected ", need);
      }
      return {{in[0].dtype, x}};
    }
    case LayerKind::Shuffle: return infer_shuffle(layer, in);
    case LayerKind::Concat: return infer_concat(layer, in);
    case LayerKind::Slice: return infer_slice(layer, in);
    case LayerKind::Gather: return infer_gather(layer, in);
    case LayerKind::Scatter: return infer_scatter(layer, in);
    case LayerKind::Pooling: return infer_pooling(layer, in);
    case LayerKind::Resize: return infer_resize(layer, in);
    case LayerKind::Select: {
      KILN_CHECK(in.size() == 3, InvalidInput, "select needs condition, then, else");
      KILN_CHECK(in[0].dtype == DType::Bool, InvalidInput, "select condition must be Bool");
      KILN_CHECK(in[1].dtype == in[2].dtype, InvalidInput, "select then/else dtypes differ");
      return {{in[1].dtype, broadcast_dims(broadcast_dims(in[0].dims, in[1].dims), in[2].dims)}};
    }
    case LayerKind::Cast:
      KILN_CHECK(in.size() == 1, InvalidInput, "cast needs 1 input");
      return {{layer.get<CastParams>().to, in[0].dims}};
    case LayerKind::Shape:
      KILN_CHECK(in.size() == 1, InvalidInput, "shape needs 1 input");
      return {{DType::Int64, {static_cast<int64_t>(in[0].dims.size())}}};
    case LayerKind::Fill: return infer_fill(layer, in);
    case LayerKind::TopK: return infer_topk(layer, in);
    case LayerKind::Cumulative: {
      KILN_CHECK(in.size() == 1, InvalidInput, "cumulative needs 1 input");
      KILN_CHECK(in[0].dtype != DType::Bool, InvalidInput, "cumulative on Bool");
      int64_t axis = layer.get<CumulativeParams>().axis;
      KILN_CHECK(axis >= 0 && axis < static_cast<int64_t>(in[0].dims.size()), InvalidInput, "cumulative axis ", axis,
                 " out of range");
      return {{in[0].dtype, in[0].dims}};
    }
    case LayerKind::Padding: return infer_padding(layer, in);
    case LayerKind::Attention: return infer_attention(layer, in);
    case LayerKind::NonZero:
      KILN_CHECK(in.size() == 1, InvalidInput, "nonzero needs 1 input");
      return {{DType::Int64, {kUnknown, static_cast<int64_t>(in[0].dims.size())}, true}};
    case LayerKind::FusedPointwise: return infer_fused_pointwise(layer, in);
    case LayerKind::Reformat: {
      const auto& p = layer.get<ReformatParams>();
      KILN_CHECK(in.size() == 1, InvalidInput, "reformat needs 1 input");
      for (TensorFormat f : {p.from, p.to}) {
        KILN_CHECK(format_applies(f, in[0].dims.size()), InvalidInput, "format ", tensor_format_name(f),
                   " does not apply to rank ", in[0].dims.size());
      }
      return {{in[0].dtype, in[0].dims}};
    }
  }
  KILN_FAIL(Internal, "unknown layer kind");
}

}  // namespace kiln::engine
