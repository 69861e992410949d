// Host values of the conformance sweep (sweep_values.h).

#include "engine/sweep/sweep_values.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>

namespace kiln::engine::sweep {
namespace {

/// Calls f(index) for every multi-index of `dims` in C order.
void for_each_index(const Dims& dims, const std::function<void(const Dims&)>& f) {
  for (int64_t x : dims) {
    if (x <= 0) return;
  }
  Dims index(dims.size(), 0);
  while (true) {
    f(index);
    size_t k = dims.size();
    while (k > 0) {
      if (++index[k - 1] < dims[k - 1]) break;
      index[--k] = 0;
    }
    if (k == 0) return;
  }
}

}  // namespace

Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    // fp32: fast kernels sum in another order (oneDNN's blocked accumulation, vector lanes) and use
    // polynomial exp/tanh/erf accurate to a few ulp. The longest sums here (1000 terms of magnitude <= 1,
    // results up to ~30) then differ by ~1e-5 at most: 1e-4 absolute plus 1e-4 relative leaves an order of
    // margin.
    case DType::Float32:
    case DType::Float64: return {1e-4, 1e-4};
    // fp16: 11-bit significand (eps 9.8e-4); a kernel may round intermediates (products, partial sums) to
    // fp16 where the reference rounds once: a few roundings of the output's size.
    case DType::Float16: return {1e-2, 1e-2};
    // bf16: 8-bit significand (eps 7.8e-3): the same few roundings, 8x coarser.
    case DType::BFloat16: return {5e-2, 5e-2};
    default: return {0, 0};  // integers and Bool: exact
  }
}

/// The tolerance of a layer: that of its lowest-precision floating tensor, looser for tactics that promise
/// less.
Tolerance layer_tolerance(const LayerInfo& info, const Tactic& tactic) {
  Tolerance t;
  for (const auto* list : {&info.inputs, &info.outputs}) {
    for (const TensorInfo& x : *list) {
      Tolerance d = tolerance_for(x.dtype);
      t.atol = std::max(t.atol, d.atol);
      t.rtol = std::max(t.rtol, d.rtol);
    }
  }
  // Winograd's transforms (reduced_precision) lose ~2 digits on 3x3 kernels; TF32 keeps a 10-bit mantissa in
  // products, as fp16 does.
  if (tactic.reduced_precision) t = {std::max(t.atol, 2e-3), std::max(t.rtol, 2e-3)};
  if (tactic.tf32) t = {std::max(t.atol, 1e-2), std::max(t.rtol, 1e-2)};
  return t;
}

std::string dims_text(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

/// The bytes of a dense tensor laid out in `format` (blocked channel tails zero).
std::vector<uint8_t> to_format(const HostTensor& t, TensorFormat format) {
  size_t es = dtype_size(t.dtype());
  std::vector<uint8_t> out(static_cast<size_t>(format_numel(format, t.sizes())) * es, 0);
  int64_t i = 0;
  for_each_index(t.sizes(), [&](const Dims& index) {
    std::memcpy(out.data() + format_offset(format, t.sizes(), index) * es, t.data() + i++ * es, es);
  });
  return out;
}

/// The dense tensor of `dims` read from `bytes` laid out in `format`.
HostTensor from_format(const std::vector<uint8_t>& bytes, DType dtype, const Dims& dims,
                       TensorFormat format) {
  HostTensor t(dtype, dims);
  size_t es = dtype_size(dtype);
  uint8_t* dst = t.mutable_data();
  int64_t i = 0;
  for_each_index(dims, [&](const Dims& index) {
    std::memcpy(dst + i++ * es, bytes.data() + format_offset(format, dims, index) * es, es);
  });
  return t;
}

HostTensor generate(const InputSpec& s, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(s.lo, s.hi);
  HostTensor t(s.dtype, s.dims);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = dist(gen);
    if (s.nonfinite_every > 0 && is_floating(s.dtype) && i % s.nonfinite_every == 1) {
      const double special[] = {std::nan(""), HUGE_VAL, -HUGE_VAL};
      v = special[(i / s.nonfinite_every) % 3];
    }
    if (s.dtype == DType::Bool)
      v = v >= 1.0 ? 1.0 : 0.0;
    else if (!is_floating(s.dtype))
      v = std::floor(v);
    t.set_from_double(i, v);
  }
  return t;
}

uint32_t seed_of(const std::string& name) {
  uint32_t h = 2166136261u;
  for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  return h;
}

/// Compares got with want; returns "" when they agree, else what differs (the first mismatch and the count).
std::string compare(const HostTensor& got, const HostTensor& want, Tolerance tol) {
  if (got.sizes() != want.sizes())
    return "dims " + dims_text(got.sizes()) + ", want " + dims_text(want.sizes());
  if (got.dtype() != want.dtype()) return std::string("dtype ") + dtype_name(got.dtype());
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < want.numel(); ++i) {
    double g = got.get_as_double(i), w = want.get_as_double(i);
    bool ok = (std::isnan(g) && std::isnan(w)) || g == w ||
              (std::isfinite(w) && std::fabs(g - w) <= tol.atol + tol.rtol * std::fabs(w));
    if (!ok && bad++ == 0) first = i;
  }
  if (bad == 0) return "";
  std::ostringstream s;
  s << bad << " of " << want.numel() << " elements differ; first: element " << first << " got "
    << got.get_as_double(first) << " want " << want.get_as_double(first) << " (atol " << tol.atol << ", rtol "
    << tol.rtol << ")";
  return s.str();
}

}  // namespace kiln::engine::sweep
