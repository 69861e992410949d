// Pooling and resizing: max/avg pooling, adaptive pooling, upsample nearest/bilinear.

#include "conversion/converters/converter_util.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/conversion/impl/spatial.h"
#include "kiln/support/error.h"

namespace kiln::conversion {

namespace {
using detail::Outputs;
using engine::PoolingParams;

int64_t spatial_of(const ir::Node& n) {
  const std::string& name = n.target().name;
  if (name.find("1d") != std::string::npos) return 1;
  if (name.find("3d") != std::string::npos) return 3;
  return 2;
}

Outputs max_pool(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  return {impl::pool(ctx, a.tensor(ctx, "self"), PoolingParams::Max, spatial_of(n), a.ints("kernel_size"),
                     a.ints("stride", std::vector<int64_t>{}), a.ints("padding", std::vector<int64_t>{0}),
                     a.ints("dilation", std::vector<int64_t>{1}), a.bool_("ceil_mode", false), true)};
}

Outputs avg_pool(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  std::optional<int64_t> divisor;
  if (a.has("divisor_override")) divisor = a.int_("divisor_override");
  return {impl::pool(ctx, a.tensor(ctx, "self"), PoolingParams::Average, spatial_of(n), a.ints("kernel_size"),
                     a.ints("stride", std::vector<int64_t>{}), a.ints("padding", std::vector<int64_t>{0}), {1},
                     a.bool_("ceil_mode", false), a.bool_("count_include_pad", true), divisor)};
}

bool no_divisor_override(const ir::Node& n, const settings::CompilationSettings&) {
  const ir::Argument* d = n.find_arg("divisor_override");
  return (d == nullptr || d->is_none()) && detail::window_args_within_bounds(n);
}

bool pool_args_within_bounds(const ir::Node& n, const settings::CompilationSettings&) {
  return detail::window_args_within_bounds(n);
}

// The indices output of the *_with_indices forms is not produced.
bool indices_unused(const ir::Node& n, const settings::CompilationSettings&) {
  if (n.owner() == nullptr || n.outputs().size() < 2) return true;
  return n.owner()->users(n.outputs()[1]).empty() && !n.owner()->is_output(n.outputs()[1]);
}

template <PoolingParams::Kind K>
Outputs adaptive(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  std::vector<int64_t> size = a.ints("output_size");
  if (size.size() == 1 && spatial_of(n) > 1) size.assign(static_cast<size_t>(spatial_of(n)), size[0]);
  return {impl::adaptive_pool(ctx, a.tensor(ctx, "self"), K, size)};
}

bool static_pool_input(const ir::Node& n, const settings::CompilationSettings&) {
  // Adaptive windows depend on the input's spatial size: it must be static.
  const ir::Argument* x = n.find_arg("self");
  if (x == nullptr || x->kind() != ir::Argument::Kind::Tensor) return false;
  const ir::TensorMeta& m = x->as_tensor()->meta();
  const int64_t s = spatial_of(n);
  for (int64_t i = m.rank() - s; i < m.rank(); ++i) {
    if (i < 0 || !m.sizes[i].is_constant()) return false;
  }
  return true;
}

template <engine::ResizeParams::Mode M>
Outputs upsample(ConversionContext& ctx, const ir::Node& n, const ConverterArgs& a) {
  const char* in = a.raw("input") ? "input" : "self";
  engine::Tensor* x = a.tensor(ctx, in);
  const int64_t spatial = x->rank() - 2;
  std::vector<int64_t> size;
  std::vector<double> scales;
  if (a.has("output_size")) size = a.ints("output_size");
  if (a.has("scale_factors")) {
    const ir::Argument* s = a.raw("scale_factors");
    scales = s->as_floats();
  }
  for (const char* k : {"scales_d", "scales_h", "scales_w", "scales"}) {
    if (a.has(k)) scales.push_back(a.float_(k));
  }
  if (!scales.empty() && static_cast<int64_t>(scales.size()) != spatial) {
    const double first = scales[0];
    scales.assign(static_cast<size_t>(spatial), first);
  }
  if (size.empty()) {
    // torch: out = floor(in * scale).
    KILN_CHECK(!scales.empty(), InvalidInput, ctx.current_node, ": upsample without size or scales");
    for (int64_t i = 0; i < spatial; ++i) {
      const int64_t d = x->dims()[2 + i];
      KILN_CHECK(d >= 0, Unsupported, ctx.current_node, ": upsample by scale of a dynamic dim");
      size.push_back(static_cast<int64_t>(static_cast<double>(d) * scales[i]));
    }
  }
  (void)n;
  return {impl::resize(ctx, x, M, size, scales, a.bool_("align_corners", false))};
}

bool static_spatial(const ir::Node& n, const settings::CompilationSettings&) {
  const ir::Argument* x = n.find_arg("input") ? n.find_arg("input") : n.find_arg("self");
  if (x == nullptr || x->kind() != ir::Argument::Kind::Tensor) return false;
  const ir::TensorMeta& m = x->as_tensor()->meta();
  for (int64_t i = 2; i < m.rank(); ++i) {
    if (!m.sizes[i].is_constant()) return false;
  }
  return true;
}

}  // namespace

void register_pooling_resize_converters(ConverterRegistry& r) {
  using detail::add;
  add(r, {"aten.max_pool1d.default", "aten.max_pool2d.default", "aten.max_pool3d.default"}, max_pool, true,
      pool_args_within_bounds);
  add(r, {"aten.max_pool2d_with_indices.default", "aten.max_pool3d_with_indices.default"}, max_pool, true,
      [](const ir::Node& n, const settings::CompilationSettings& s) {
        return indices_unused(n, s) && pool_args_within_bounds(n, s);
      });
  add(r, {"aten.avg_pool1d.default", "aten.avg_pool2d.default", "aten.avg_pool3d.default"}, avg_pool, true,
      no_divisor_override);
  add(r, {"aten.adaptive_avg_pool1d.default", "aten.adaptive_avg_pool2d.default", "aten._adaptive_avg_pool2d.default",
          "aten.adaptive_avg_pool3d.default"},
      adaptive<PoolingParams::Average>, true, static_pool_input);
  add(r, {"aten.adaptive_max_pool2d.default"}, adaptive<PoolingParams::Max>, true,
      [](const ir::Node& n, const settings::CompilationSettings& s) {
        return static_pool_input(n, s) && indices_unused(n, s);
      });
  add(r, {"aten.upsample_nearest1d.vec", "aten.upsample_nearest2d.vec", "aten.upsample_nearest3d.vec",
          "aten.upsample_nearest2d.default"},
      upsample<engine::ResizeParams::Nearest>, true, static_spatial);
  add(r, {"aten.upsample_linear1d.vec", "aten.upsample_bilinear2d.vec", "aten.upsample_trilinear3d.vec",
          "aten.upsample_bilinear2d.default"},
      upsample<engine::ResizeParams::Linear>, true, static_spatial);
}

}  // namespace kiln::conversion
