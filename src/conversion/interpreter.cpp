#include "kiln/conversion/interpreter.h"

#include <algorithm>
#include <set>

#include "kiln/conversion/conversion_context.h"
#include "kiln/conversion/converter_args.h"
#include "kiln/conversion/impl/common.h"
#include "kiln/frontend/op_checks.h"
#include "kiln/ir/int8_weight_scales.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"

namespace kiln::conversion {

namespace {

// Range of one dim expression under symbol ranges and hints.
struct DimRange {
  int64_t min = 0, opt = 0, max = 0;
};

DimRange dim_range(const ir::SymExpr& e, const ir::SymRanges& ranges, const std::map<std::string, int64_t>& hints,
                   int64_t factor, const std::string& where) {
  ir::SymRange b = e.bound(ranges);
  DimRange r;
  r.min = std::max<int64_t>(0, b.min <= ir::SymRange::kNegUnbounded ? 0 : b.min);
  ir::SymBindings bind;
  bool have_hints = true;
  for (const std::string& s : e.free_symbols()) {
    auto h = hints.find(s);
    if (h == hints.end()) {
      have_hints = false;
      break;
    }
    bind[s] = h->second;
  }
  r.opt = have_hints ? e.evaluate(bind) : r.min;
  r.opt = std::max(r.opt, r.min);
  if (b.max >= ir::SymRange::kUnbounded) {
    r.max = std::max(r.min, std::max<int64_t>(r.opt, 1) * factor);
    KILN_LOG(Warning, "conversion: ", where, " (", e.to_string(), ") has no upper bound; using max ", r.max,
                " (give an input spec to choose)");
  } else {
    r.max = b.max;
  }
  r.opt = std::min(r.opt, r.max);
  return r;
}

}  // namespace

Interpreter::Interpreter(const ir::Graph& graph, const settings::CompilationSettings& settings,
                         InterpreterOptions options, const ConverterRegistry* registry)
    : graph_(graph), settings_(settings), options_(std::move(options)), registry_(registry ? registry : &converters()) {}

InterpreterResult Interpreter::run() {
  InterpreterResult result;
  result.network = std::make_unique<engine::Network>();
  engine::Network& net = *result.network;
  ConversionContext ctx(net, settings_);
  TensorMap tensors;

  ir::SymRanges ranges = graph_.symbol_ranges();
  for (const auto& [s, r] : options_.symbol_ranges) ranges[s] = r;
  std::map<std::string, int64_t> hints = graph_.symbol_hints();
  for (const auto& [s, h] : options_.symbol_hints) hints[s] = h;

  // Inputs.
  for (const ir::Value* in : graph_.inputs()) {
    if (!in->is_tensor()) {
      result.input_bindings.emplace_back();
      continue;
    }
    const ir::TensorMeta& m = in->meta();
    engine::Dims dims;
    engine::ShapeRange range;
    bool dynamic = false;
    auto user = options_.input_ranges.find(in->name());
    for (int64_t d = 0; d < m.rank(); ++d) {
      const ir::SymExpr& e = m.sizes[d];
      if (user != options_.input_ranges.end()) {
        const engine::ShapeRange& u = user->second;
        KILN_CHECK(static_cast<int64_t>(u.min.size()) == m.rank() && u.opt.size() == u.min.size() &&
                       u.max.size() == u.min.size(),
                   InvalidInput, "input spec for '", in->name(), "' has rank ", u.min.size(), ", the input has rank ",
                   m.rank());
        const bool dyn = !(u.min[d] == u.max[d] && e.is_constant());
        dims.push_back(dyn ? -1 : u.min[d]);
        range.min.push_back(u.min[d]);
        range.opt.push_back(u.opt[d]);
        range.max.push_back(u.max[d]);
        dynamic = dynamic || dyn;
      } else if (e.is_constant()) {
        dims.push_back(*e.as_int());
        range.min.push_back(*e.as_int());
        range.opt.push_back(*e.as_int());
        range.max.push_back(*e.as_int());
      } else {
        DimRange r = dim_range(e, ranges, hints, options_.unbounded_max_factor,
                               "dim " + std::to_string(d) + " of input '" + in->name() + "'");
        dims.push_back(-1);
        range.min.push_back(r.min);
        range.opt.push_back(r.opt);
        range.max.push_back(r.max);
        dynamic = true;
      }
    }
    engine::Tensor* t = net.add_input(in->name(), m.dtype, dims);
    tensors[in] = t;
    result.input_bindings.push_back(in->name());
    if (dynamic) {
      result.profile.set_dimensions(in->name(), range.min, range.opt, range.max);
      result.dynamic = true;
    }
    for (int64_t d = 0; d < m.rank(); ++d) {
      const ir::SymExpr& e = m.sizes[d];
      if (e.kind() == ir::SymExpr::Kind::Symbol && ctx.symbol_sources.count(e.symbol_name()) == 0) {
        ctx.symbol_sources[e.symbol_name()] = ConversionContext::SymbolSource{t, d};
      }
    }
  }

  // The INT8 scales of weights a Q/DQ program stored as int8 (ir/int8_weight_scales.h).
  const std::string prefix = ir::kInt8WeightScalesKeyPrefix;
  for (const ir::Node* node : graph_.nodes()) {
    for (const auto& [key, text] : node->metadata()) {
      if (key.rfind(prefix, 0) != 0) continue;
      if (std::optional<std::vector<float>> scales = ir::parse_int8_weight_scales(text))
        ctx.int8_weight_scales[key.substr(prefix.size())] = std::move(*scales);
    }
  }

  // Nodes, in topological (program) order.
  for (const ir::Node* node : graph_.nodes()) {
    ctx.current_node = node->name();
    ConverterMatch match = registry_->at(*node, settings_);
    if (match.flags.requires_output_allocator) ctx.requires_output_allocator = true;
    ConverterArgs args(*node, tensors);
    std::vector<engine::Tensor*> outs;
    try {
      // The converters rely on these (dims in range, positive strides, dtypes agreeing, ...): op_checks.h.
      frontend::check_node_arguments(*node);
      outs = match.converter_implementation(ctx, *node, args);
    } catch (const Error& e) {
      throw Error(e.kind(), "converting node '" + node->name() + "' (" + node->target().to_string() + "): " + e.message(),
                  e.context());
    }
    KILN_CHECK(outs.size() <= node->outputs().size(), Internal, "converter for '", node->name(), "' returned ",
               outs.size(), " tensors for ", node->outputs().size(), " outputs");
    for (size_t i = 0; i < outs.size(); ++i) {
      if (outs[i] == nullptr) continue;
      const ir::Value* v = node->outputs()[i];
      // The program states each tensor's dtype: converters computing in another type are cast back to it.
      if (v->is_tensor() && outs[i]->dtype() != v->meta().dtype) outs[i] = impl::cast(ctx, outs[i], v->meta().dtype);
      tensors[v] = outs[i];
    }
  }

  // Outputs: each a distinct non-input tensor named after its IR value.
  ctx.current_node = "output";
  std::set<engine::Tensor*> used;
  for (const ir::Value* out : graph_.outputs()) {
    engine::Tensor* t = nullptr;
    auto it = tensors.find(out);
    if (it != tensors.end()) {
      t = it->second;
    } else if (out->role() == ir::ValueRole::Constant) {
      t = impl::constant(ctx, out->data());
    }
    KILN_CHECK(t != nullptr, Unsupported, "segment output '", out->name(), "' was not produced by any converter");
    if (t->is_input() || used.count(t) || t->is_output() || t->producer() < 0) t = impl::identity(ctx, t);
    if (net.find_tensor(out->name()) != nullptr && net.find_tensor(out->name()) != t) {
      // The IR name is taken by an input of the same name: keep the engine's name.
      result.output_bindings.push_back(t->name());
    } else {
      t->set_name(out->name());
      result.output_bindings.push_back(out->name());
    }
    net.mark_output(t);
    used.insert(t);
  }
  result.weight_refit_map = ctx.weight_refit_map;
  result.requires_output_allocator = ctx.requires_output_allocator;
  result.quantization_notes = ctx.quantization_notes;
  return result;
}

std::pair<ir::SymRanges, std::map<std::string, int64_t>> symbol_ranges_from_specs(
    const ir::Graph& program, const std::map<std::string, engine::ShapeRange>& specs) {
  ir::SymRanges ranges;
  std::map<std::string, int64_t> hints;
  for (const ir::Value* in : program.inputs()) {
    auto it = specs.find(in->name());
    if (it == specs.end() || !in->is_tensor()) continue;
    const engine::ShapeRange& s = it->second;
    const ir::TensorMeta& m = in->meta();
    KILN_CHECK(static_cast<int64_t>(s.min.size()) == m.rank() && s.opt.size() == s.min.size() &&
                   s.max.size() == s.min.size(),
               InvalidInput, "input spec for '", in->name(), "' has rank ", s.min.size(), ", the input has rank ",
               m.rank());
    for (int64_t d = 0; d < m.rank(); ++d) {
      const ir::SymExpr& e = m.sizes[d];
      if (e.is_constant()) {
        KILN_CHECK(s.min[d] <= *e.as_int() && *e.as_int() <= s.max[d], InvalidInput, "input spec for '", in->name(),
                   "' dim ", d, " excludes the program's static size ", *e.as_int());
        continue;
      }
      if (e.kind() != ir::SymExpr::Kind::Symbol) continue;
      const std::string& sym = e.symbol_name();
      auto r = ranges.find(sym);
      if (r == ranges.end()) {
        ranges[sym] = ir::SymRange{s.min[d], s.max[d]};
        hints[sym] = s.opt[d];
      } else {
        r->second.min = std::max(r->second.min, s.min[d]);
        r->second.max = std::min(r->second.max, s.max[d]);
        KILN_CHECK(r->second.min <= r->second.max, InvalidInput, "input specs give symbol ", sym, " an empty range");
      }
    }
  }
  return {ranges, hints};
}

}  // namespace kiln::conversion
