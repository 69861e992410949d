#include "kiln/engine/builder.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "engine/core/int8_policy.h"
#include "engine/core/passes.h"
#include "engine/core/plan_impl.h"
#include "engine/core/precision_probe.h"
#include "engine/core/producer_formats.h"
#include "engine/core/shape_walk.h"
#include "engine/core/tactics.h"
#include "kiln/support/error.h"
#include "kiln/support/limits.h"
#include "kiln/support/logging.h"

namespace kiln::engine {
namespace {

/// Restores the log level when a verbose build ends.
class VerboseScope {
 public:
  explicit VerboseScope(bool verbose) : saved_(log_level()) {
    if (verbose && saved_ > LogLevel::Info) set_log_level(LogLevel::Info);
  }
  ~VerboseScope() { set_log_level(saved_); }

 private:
  LogLevel saved_;
};

void copy_network(const Network& net, Plan::Impl& g) {
  std::set<std::string> names;
  for (int64_t id = 0; id < net.num_tensors(); ++id) {
    const Tensor* t = net.tensor(id);
    if (t->is_input() || t->is_output()) {
      KILN_CHECK(names.insert(t->name()).second, InvalidInput, "two network inputs/outputs are named '", t->name(), "'");
    }
    PlanTensor& pt = g.tensors.emplace_back(
        PlanTensor{t->name(), t->dtype(), t->dims(), t->is_input(), t->is_output(), t->producer()});
    pt.range = t->dynamic_range();
  }
  for (const auto& l : net.layers()) g.layers.push_back({*l, "", false, {}});
  g.inputs = net.inputs();
  g.outputs = net.outputs();
  KILN_CHECK(!g.outputs.empty(), InvalidInput, "network has no outputs (call mark_output)");
}

std::vector<OptimizationProfile> make_profiles(const Plan::Impl& g, const std::vector<OptimizationProfile>& given) {
  std::vector<OptimizationProfile> profiles = given;
  if (profiles.empty()) {
    OptimizationProfile p;
    for (int64_t id : g.inputs) {
      const auto& t = g.tensors[id];
      KILN_CHECK(dims_known(t.dims), InvalidInput, "input '", t.name, "' has dynamic dims ", dims_str(t.dims),
                 " but the builder config has no optimization profile");
      p.set_dimensions(t.name, t.dims, t.dims, t.dims);
    }
    profiles.push_back(p);
  }
  for (size_t pi = 0; pi < profiles.size(); ++pi) {
    auto& p = profiles[pi];
    for (int64_t id : g.inputs) {
      const auto& t = g.tensors[id];
      if (!p.has(t.name)) {
        KILN_CHECK(dims_known(t.dims), InvalidInput, "optimization profile ", pi,
                   " has no range for dynamic input '", t.name, "'");
        p.set_dimensions(t.name, t.dims, t.dims, t.dims);
        continue;
      }
      const ShapeRange& r = p.get(t.name);
      KILN_CHECK(r.min.size() == t.dims.size(), InvalidInput, "optimization profile ", pi, ": input '", t.name,
                 "' has rank ", t.dims.size(), " but the range has rank ", r.min.size());
      for (size_t d = 0; d < t.dims.size(); ++d) {
        if (t.dims[d] < 0) continue;
        KILN_CHECK(r.min[d] == t.dims[d] && r.max[d] == t.dims[d], InvalidInput, "optimization profile ", pi,
                   ": input '", t.name, "' dim ", d, " is static (", t.dims[d], ") but the range is ", r.min[d], "..",
                   r.max[d]);
      }
    }
    for (const auto& [name, r] : p.ranges()) {
      // (name captured by an init-capture: clang before 16 cannot capture structured bindings; KILN_FUZZ builds
      // with clang-14.)
      bool found = std::any_of(g.inputs.begin(), g.inputs.end(),
                               [&, &input = name](int64_t id) { return g.tensors[id].name == input; });
      KILN_CHECK(found, InvalidInput, "optimization profile ", pi, " names '", name, "', which is not a network input");
    }
  }
  return profiles;
}

void compute_ranges(Plan::Impl& g, const std::vector<OptimizationProfile>& profiles) {
  g.profiles.clear();
  for (const auto& p : profiles) {
    PlanProfile pp;
    pp.profile = p;
    std::vector<Dims> mins, opts, maxs;
    for (int64_t id : g.inputs) {
      const ShapeRange& r = p.get(g.tensors[id].name);
      mins.push_back(r.min);
      opts.push_back(r.opt);
      maxs.push_back(r.max);
    }
    auto a = infer_concrete(g, mins, DataDependentGuess::Min);
    auto b = infer_concrete(g, opts, DataDependentGuess::Max);
    auto c = infer_concrete(g, maxs, DataDependentGuess::Max);
    size_t n = g.tensors.size();
    pp.min.resize(n);
    pp.opt = b.dims;
    pp.max.resize(n);
    for (size_t t = 0; t < n; ++t) {
      pp.min[t] = a.dims[t];
      pp.max[t] = c.dims[t];
      for (size_t d = 0; d < pp.max[t].size() && d < a.dims[t].size() && d < b.dims[t].size(); ++d) {
        int64_t lo = std::min({a.dims[t][d], b.dims[t][d], c.dims[t][d]});
        int64_t hi = std::max({a.dims[t][d], b.dims[t][d], c.dims[t][d]});
        pp.min[t][d] = lo;
        pp.max[t][d] = hi;
      }
      KILN_CHECK(dims_known(pp.max[t]) && dims_known(pp.min[t]), InvalidInput,
                 "cannot bound the dims of tensor '", g.tensors[t].name, "' over the profile (got ",
                 dims_str(pp.max[t]), "): a shape depends on data the builder cannot evaluate");
    }
    g.profiles.push_back(std::move(pp));
  }
}

/// Marks shape-tensor layers (evaluated on the host at shape time) and checks shape inputs are computable.
void mark_host_layers(Plan::Impl& g) {
  std::vector<bool> host_t(g.tensors.size(), false);
  for (size_t i = 0; i < g.layers.size(); ++i) {
    PlanLayer& pl = g.layers[i];
    const Layer& l = pl.layer;
    if (l.outputs.size() != 1 || !is_value_dtype(g.tensors[l.outputs[0]].dtype)) continue;
    const Dims& od = g.tensors[l.outputs[0]].dims;
    if (!dims_known(od) || od.size() > 1 || (od.size() == 1 && od[0] > kMaxHostValueElements)) continue;
    if (l.kind == LayerKind::Constant) {
      host_t[l.outputs[0]] = true;
      continue;
    }
    bool inputs_host = !l.inputs.empty() && std::all_of(l.inputs.begin(), l.inputs.end(), [&](int64_t id) { return host_t[id]; });
    if (l.kind == LayerKind::Shape || (inputs_host && l.kind != LayerKind::NonZero)) {
      pl.host = true;
      host_t[l.outputs[0]] = true;
    }
  }
  for (const auto& pl : g.layers) {
    const Layer& l = pl.layer;
    size_t first_shape_input = 99;
    switch (l.kind) {
      case LayerKind::Shuffle: case LayerKind::Slice: case LayerKind::Resize: case LayerKind::TopK:
        first_shape_input = 1;
        break;
      case LayerKind::Fill: first_shape_input = 0; break;
      default: break;
    }
    for (size_t k = first_shape_input; k < l.inputs.size(); ++k) {
      KILN_CHECK(host_t[l.inputs[k]], InvalidInput, "layer '", l.name, "': shape input '", g.tensors[l.inputs[k]].name,
                 "' is not computable from input shapes (it depends on tensor data)");
    }
  }
}

void check_precisions(const Plan::Impl& g, const BuilderConfig& config) {
  for (size_t i = 0; i < g.layers.size(); ++i) {
    if (g.layers[i].host) continue;
    const Layer& l = g.layers[i].layer;
    std::vector<int64_t> ids = l.inputs;
    ids.insert(ids.end(), l.outputs.begin(), l.outputs.end());
    for (int64_t id : ids) {
      DType dt = g.tensors[id].dtype;
      if (!is_floating(dt) || dt == DType::Float32) continue;
      Precision p = dt == DType::Float16 ? Precision::FP16 : Precision::BF16;
      bool allowed = config.strongly_typed || config.allows(p);
      KILN_CHECK(allowed, InvalidInput, "layer '", l.name, "' uses ", dtype_name(dt), " tensor '", g.tensors[id].name,
                 "' but ", precision_name(p), " is not an allowed precision (enable it or build strongly typed)");
      KILN_CHECK(g.backend->supports_precision(l.kind, dt), Unsupported, "layer '", l.name, "' (",
                 layer_kind_name(l.kind), "): backend ", g.backend_name, " does not support ", dtype_name(dt));
    }
  }
}

/// A Reformat layer copying tensor `from` into tensor `to` (formats from the tensors), with its tactic.
PlanLayer reformat_layer(const Plan::Impl& g, int64_t from, int64_t to) {
  Layer l;
  l.name = g.tensors[to].name + "/reformat";
  l.kind = LayerKind::Reformat;
  l.params = ReformatParams{g.tensors[from].format, g.tensors[to].format};
  l.inputs = {from};
  l.outputs = {to};
  return PlanLayer{l, "", false, {}};
}

/// Memory formats: every tensor gets the format its producer's tactic writes (Plain for bindings); where a
/// consumer's tactic reads another format, a Reformat layer makes a copy in that format (one per tensor and
/// format, shared by the consumers that want it); a plan output written in another format is written to a
/// new tensor and reformatted into the output. Only kernel layers read buffers (host layers read values, and
/// shape layers only dims), so only they get reformats. A producer that can write the format its one consumer
/// reads (producer_writes, within `workspace_limit`) writes it instead of a Reformat after it; its kernel data (made
/// for the kernel that wrote the old format) is dropped, and in a `timed` build the new kernel times itself again.
/// A producer that can write a copy of its output in another format (producer_copies) gets that copy as an extra
/// output, which the readers in that format take instead of a Reformat's.
struct FormatCounts {
  int reformats = 0;  // Reformat layers inserted
  int written = 0;    // tensors their producer writes in their consumer's format
  int copied = 0;     // format copies their producer writes beside them (Layer::format_copies)
};
FormatCounts assign_formats(Plan::Impl& g, size_t workspace_limit, bool timed) {
  size_t nl = g.layers.size();
  std::vector<TacticFormats> want(nl);
  bool any = false;
  for (size_t i = 0; i < nl; ++i) {
    if (!g.is_kernel_layer(static_cast<int64_t>(i))) continue;
    const Layer& l = g.layers[i].layer;
    TacticFormats f = g.backend->formats(g.layer_info(static_cast<int64_t>(i)), g.layers[i].tactic);
    if (f.inputs.empty() && f.outputs.empty()) continue;
    KILN_CHECK(f.inputs.size() == l.inputs.size() && f.outputs.size() == l.outputs.size(), Internal, "backend ",
               g.backend_name, ": tactic '", g.layers[i].tactic, "' of layer '", l.name,
               "' gives formats for the wrong number of tensors");
    for (const auto* list : {&f.inputs, &f.outputs}) {
      for (TensorFormat x : *list) any = any || x != TensorFormat::Plain;
    }
    want[i] = std::move(f);
  }
  if (!any) return {};
  // Producers that write their consumer's format: (layer, format of its output 0); producers that write copies
  // of output 0: (layer, the copies' formats).
  std::map<int64_t, TensorFormat> writes;
  std::map<int64_t, std::set<TensorFormat>> copied;
  for (size_t i = 0; i < nl; ++i) {
    for (size_t k = 0; k < want[i].inputs.size(); ++k) {
      const int64_t t = g.layers[i].layer.inputs[k];
      const TensorFormat f = want[i].inputs[k];
      if (f == TensorFormat::Plain || g.tensors[t].producer < 0) continue;
      // (through reshape views, the first tensor's producer writes it: view_source)
      const int64_t source = view_source(g, t, f);
      const int64_t p = g.tensors[source].producer;
      const std::vector<TensorFormat>& written = want[p].outputs;
      if ((written.empty() ? TensorFormat::Plain : written[0]) == f) continue;
      if (producer_writes(g, t, f, workspace_limit)) {
        writes[p] = f;
        // The codes are read with the reader's tensor's range (the FP8 scale): the chain's tensors, the same
        // values reshaped, take it.
        for (int64_t v = t; v != source;) {
          v = g.layers[g.tensors[v].producer].layer.inputs[0];
          g.tensors[v].range = g.tensors[t].range;
        }
      } else if (producer_copies(g, t, f)) {
        copied[p].insert(f);
      }
    }
  }
  auto copy_tensor = [&](int64_t base, TensorFormat format) {
    PlanTensor t = g.tensors[base];
    t.name += std::string("/") + tensor_format_name(format);
    t.format = format;
    t.is_input = t.is_output = false;
    g.tensors.push_back(t);
    return static_cast<int64_t>(g.tensors.size()) - 1;
  };
  std::map<std::pair<int64_t, TensorFormat>, int64_t> copies;  // (tensor, format) -> tensor holding it so
  std::vector<PlanLayer> out;
  int reformats = 0;
  for (size_t i = 0; i < nl; ++i) {
    bool kernel = g.is_kernel_layer(static_cast<int64_t>(i));
    // Asked again once the producers' formats are known: a tactic may follow its input's format (pooling, a
    // reshape view of E4M3 codes).
    if (kernel) {
      bool moved = false;
      for (int64_t t : g.layers[i].layer.inputs) moved = moved || g.tensors[t].format != TensorFormat::Plain;
      if (moved) want[i] = g.backend->formats(g.layer_info(static_cast<int64_t>(i)), g.layers[i].tactic);
    }
    if (auto w = writes.find(static_cast<int64_t>(i)); w != writes.end()) {
      want[i].outputs.resize(g.layers[i].layer.outputs.size(), TensorFormat::Plain);
      want[i].outputs[0] = w->second;
      g.layers[i].kernel_data.clear();
      g.layers[i].retime = timed;
    }
    PlanLayer pl = std::move(g.layers[i]);
    Layer& l = pl.layer;
    if (auto c = copied.find(static_cast<int64_t>(i)); c != copied.end()) {
      for (TensorFormat f : c->second) {
        const int64_t copy = copy_tensor(l.outputs[0], f);
        l.outputs.push_back(copy);
        ++l.format_copies;
        copies.emplace(std::make_pair(l.outputs[0], f), copy);
      }
      pl.kernel_data.clear();
      pl.retime = timed;
    }
    std::vector<PlanLayer> after;
    if (!want[i].inputs.empty()) {
      for (size_t k = 0; k < l.inputs.size(); ++k) {
        int64_t t = l.inputs[k];
        TensorFormat f = want[i].inputs[k];
        if (g.tensors[t].format == f) continue;
        auto it = copies.find({t, f});
        if (it == copies.end()) {
          int64_t c = copy_tensor(t, f);
          out.push_back(reformat_layer(g, t, c));
          ++reformats;
          it = copies.emplace(std::make_pair(t, f), c).first;
        }
        l.inputs[k] = it->second;
      }
    } else if (kernel) {
      for (auto& t : l.inputs) {
        if (g.tensors[t].format == TensorFormat::Plain) continue;
        auto it = copies.find({t, TensorFormat::Plain});
        if (it == copies.end()) {
          int64_t c = copy_tensor(t, TensorFormat::Plain);
          out.push_back(reformat_layer(g, t, c));
          ++reformats;
          it = copies.emplace(std::make_pair(t, TensorFormat::Plain), c).first;
        }
        t = it->second;
      }
    }
    for (size_t o = 0; o < want[i].outputs.size(); ++o) {
      int64_t t = l.outputs[o];
      TensorFormat f = want[i].outputs[o];
      if (f == TensorFormat::Plain) continue;
      if (!g.tensors[t].is_output) {
        g.tensors[t].format = f;
        continue;
      }
      int64_t c = copy_tensor(t, f);  // the user's buffer is Plain: write a copy, reformat it into the output
      l.outputs[o] = c;
      copies[{t, f}] = c;
      after.push_back(reformat_layer(g, c, t));
      ++reformats;
    }
    out.push_back(std::move(pl));
    for (auto& a : after) out.push_back(std::move(a));
  }
  g.layers = std::move(out);
  passes::reindex_producers(g);
  int copies_written = 0;
  for (const auto& [layer, formats] : copied) copies_written += static_cast<int>(formats.size());
  return {reformats, static_cast<int>(writes.size()), copies_written};
}

}  // namespace

const char* precision_name(Precision precision) {
  switch (precision) {
    case Precision::FP32: return "fp32";
    case Precision::FP16: return "fp16";
    case Precision::BF16: return "bf16";
    case Precision::INT8: return "int8";
    case Precision::FP8: return "fp8";
  }
  return "?";
}

namespace {

// The reduced floating type of a weakly typed build (fp16 before bf16), or fp32.
DType reduced_dtype(const BuilderConfig& config) {
  if (config.strongly_typed) return DType::Float32;
  return config.allows(Precision::FP16)   ? DType::Float16
         : config.allows(Precision::BF16) ? DType::BFloat16
                                          : DType::Float32;
}

// Creates every kernel again (after tensors' dtypes or formats changed) and sizes the workspace for them. A
// kernel may need more workspace than when its tactic was chosen (a cuda INT8 convolution timed reading an
// INT8 input whose input stayed floating quantizes it into its workspace): over `workspace_limit` the build
// fails, naming the layer, rather than exceed it.
void recreate_kernels(Plan::Impl& g, size_t workspace_limit) {
  g.create_kernels();
  g.workspace_bytes = 0;
  for (size_t i = 0; i < g.kernels.size(); ++i) {
    if (!g.kernels[i]) continue;
    const size_t need = g.kernels[i]->workspace_size();
    KILN_CHECK(need <= workspace_limit, Unsupported, "layer '", g.layers[i].layer.name, "' (tactic '",
               g.layers[i].tactic, "'): its kernel needs ", need,
               " bytes of workspace with its tensors' final dtypes and formats, over the workspace limit of ",
               workspace_limit, " bytes (setting workspace_size)");
    g.workspace_bytes = std::max<uint64_t>(g.workspace_bytes, need);
  }
}

// One build. `keep_fp32`: layers the sample-input check keeps in fp32; `probe`: every layer output a binding.
std::shared_ptr<Plan> build_plan(const BuilderConfig& config, const Network& network,
                                 const std::map<std::string, std::string>& keep_fp32, bool probe) {
  VerboseScope verbose(config.verbose);
  PhaseTimer timer("engine build");
  auto g = std::make_unique<Plan::Impl>();
  g->backend = create_backend(config.backend, BackendOptions{config.threads});
  g->backend_name = g->backend->name();
  g->device = g->backend->device();
  g->refittable = config.refittable;
  g->strip_weights = config.strip_weights;
  copy_network(network, *g);
  std::vector<OptimizationProfile> profiles = make_profiles(*g, config.profiles);
  size_t before = g->layers.size();

  int folded = passes::fold_constants(*g, config.refittable);
  passes::remove_dead_layers(*g);
  int shuffles = passes::eliminate_shuffles(*g);
  passes::remove_dead_layers(*g);
  mark_host_layers(*g);
  compute_ranges(*g, profiles);
  int linear = passes::fuse_linear(*g, config.refittable);
  int pointwise = passes::fuse_pointwise(*g);
  int attention_views = config.attention_views ? passes::fold_attention_views(*g) : 0;
  passes::remove_dead_layers(*g);
  const int projections = passes::fuse_attention_projections(*g);
  if (projections > 0) passes::remove_dead_layers(*g);
  if (probe) passes::expose_layer_outputs(*g);
  KILN_INFO("engine: passes: ", folded, " folded, ", shuffles, " shuffles eliminated, ", linear,
            " linear fusions, ", pointwise, " pointwise chains, ", attention_views,
            " attention operands as views, ", projections, " q/k/v projections fused; ", before, " -> ",
            g->layers.size(), " layers");

  std::map<std::string, DType> original_dtypes;
  {
    const DType to = reduced_dtype(config);
    if (to != DType::Float32) {
      for (const auto& pl : g->layers) {
        KILN_CHECK(pl.host || g->backend->supports_precision(pl.layer.kind, to), Unsupported, "layer '", pl.layer.name,
                   "' (", layer_kind_name(pl.layer.kind), "): backend ", g->backend_name, " does not support ",
                   dtype_name(to));
      }
      passes::lower_precision(*g, to, original_dtypes, keep_fp32);
      KILN_INFO("engine: precision: floating layers run in ", dtype_name(to), " (", g->precision_notes.size(),
                " departures by the precision policy)");
      for (const PrecisionNote& note : g->precision_notes) {
        KILN_INFO("engine: precision: ", note.layer, ": ", note.reason);
      }
    }
  }
  for (auto& pl : g->layers) pl.host = false;
  mark_host_layers(*g);
  compute_ranges(*g, profiles);
  g->derive();
  check_precisions(*g, config);

  g->upload_constants();
  select_tactics(*g, config);
  const int quantized = keep_int8_between_layers(*g, config.int8_explicit, config.timing_iterations > 0);
  if (quantized > 0) KILN_INFO("engine: int8: ", quantized, " tensors stay in INT8 between INT8 layers");
  const FormatCounts formats = assign_formats(*g, config.workspace_limit, config.timing_iterations > 0);
  const int reformats = formats.reformats;
  if (formats.written > 0) {
    KILN_INFO("engine: formats: ", formats.written,
              " tensors written by their producer in the format their consumer reads");
  }
  if (formats.copied > 0) {
    KILN_INFO("engine: formats: ", formats.copied, " copies in another format written by the tensor's producer");
  }
  if (reformats > 0 || formats.copied > 0) {
    // New tensors and layers: ranges again, tactics for the reformats (fast kernels first).
    compute_ranges(*g, profiles);
    g->derive();
    for (size_t i = 0; i < g->layers.size(); ++i) {
      PlanLayer& pl = g->layers[i];
      if (pl.layer.kind != LayerKind::Reformat) continue;
      LayerInfo info = g->layer_info(static_cast<int64_t>(i));
      std::string why;
      KILN_CHECK(g->backend->supports(info, &why), Unsupported, "reformat '", pl.layer.name, "': ", why);
      pl.tactic = g->backend->tactics(info).at(0).name;
    }
    if (reformats > 0) KILN_INFO("engine: formats: ", reformats, " reformat layers inserted");
  }
  // (an INT8 layer may have been timed reading INT8 where its input stays floating: may_stay_int8)
  bool int8_layers = false;
  for (size_t i = 0; i < g->layers.size() && !int8_layers; ++i)
    int8_layers = g->is_kernel_layer(static_cast<int64_t>(i)) && tactic_is_int8(*g, static_cast<int64_t>(i));
  if (quantized > 0 || reformats > 0 || formats.written > 0 || formats.copied > 0 || int8_layers)
    recreate_kernels(*g, config.workspace_limit);  // with their tensors' final dtypes and formats
  for (PlanLayer& pl : g->layers) pl.retime = false;

  for (size_t p = 0; p < g->profiles.size(); ++p) {
    plan_memory(*g, g->profiles[p]);
    KILN_INFO("engine: memory plan (profile ", p, "): arena ", g->profiles[p].arena_bytes, " bytes, largest live set ",
              g->profiles[p].live_lower_bound, " bytes");
    // What the plan loader rejects, the builder never writes: fail here, naming the reason.
    KILN_CHECK(g->profiles[p].arena_bytes <= kMaxArenaBytes, InvalidInput, "optimization profile ", p,
               ": the activation memory for the max shapes would be ", g->profiles[p].arena_bytes,
               " bytes, over the limit of ", kMaxArenaBytes, " (docs/limits.md); narrow the input ranges");
    for (size_t t = 0; t < g->tensors.size(); ++t) {
      for (int64_t d : g->profiles[p].max[t]) {
        KILN_CHECK(d <= kMaxDimExtent, InvalidInput, "optimization profile ", p, ": tensor '", g->tensors[t].name,
                   "' reaches the dim ", d, " at the max shapes, over the limit of ", kMaxDimExtent,
                   " (docs/limits.md); narrow the input ranges");
      }
    }
  }
  for (size_t i = 0; i < g->layers.size(); ++i) {
    const auto& ws = g->layers[i].layer.weights;
    for (size_t s = 0; s < ws.size(); ++s) {
      if (!ws[s].defined() || ws[s].name.empty()) continue;
      auto it = original_dtypes.find(ws[s].name);
      g->refit.push_back({ws[s].name, static_cast<int64_t>(i), static_cast<int64_t>(s),
                          it != original_dtypes.end() ? it->second : ws[s].value.dtype(), ws[s].value.sizes()});
    }
  }
  g->derive();
  return std::make_shared<Plan>(std::move(g));
}

// The config of a probe build: first tactic, no timing cache, weights kept, quiet.
BuilderConfig probe_config(const BuilderConfig& config);

/// Keeps the earliest layers in fp32, doubling their number, until the reduced build's network outputs reach
/// config.min_output_cosine to fp32's on the sample inputs (`reference`'s values), with the layers `keep` already
/// holds kept too (`high`: the fp32 probe's values on the samples). `current`: the reduced probe built with
/// exactly `keep`, when there is one (saves a build).
void keep_for_accuracy(const BuilderConfig& config, const Network& network,
                       const std::shared_ptr<const Plan>& reference, const std::vector<passes::ProbeValues>& high,
                       std::shared_ptr<const Plan> current, std::map<std::string, std::string>& keep) {
  std::vector<std::string> outputs;
  for (int64_t id : network.outputs()) outputs.push_back(network.tensor(id)->name());
  auto cosine_with = [&](const std::map<std::string, std::string>& kept) {
    return passes::output_cosine(
        passes::run_probes(build_plan(probe_config(config), network, kept, true), config.sample_inputs), high,
        outputs);
  };
  const double before =
      current ? passes::output_cosine(passes::run_probes(current, config.sample_inputs), high, outputs)
              : cosine_with(keep);
  const double bar = config.min_output_cosine;
  if (!(before < bar)) return;  // close enough, or non-finite (the rounds' business)
  const std::vector<std::string> layers = passes::precision_layers(*reference);
  const char* type = reduced_dtype(config) == DType::Float16 ? "fp16" : "bf16";
  for (size_t k = 1;; k = std::min(2 * k, layers.size())) {
    std::map<std::string, std::string> more = keep;
    char why[200];
    std::snprintf(why, sizeof why,
                  "for accuracy: the first %zu of %zu layers (the %s outputs' cosine to fp32 on the sample inputs "
                  "was %.8g, below %.8g)",
                  k, layers.size(), type, before, bar);
    for (size_t i = 0; i < k && i < layers.size(); ++i) more.emplace(layers[i], why);
    const double after = cosine_with(more);
    if (after >= bar || k >= layers.size()) {
      KILN_INFO("engine: precision: the first ", k, " of ", layers.size(), " layers in fp32 for accuracy: the ",
                type, " outputs' cosine to fp32 on the sample inputs ", before, " -> ", after, " (bar ", bar,
                ")");
      keep = std::move(more);
      return;
    }
  }
}

BuilderConfig probe_config(const BuilderConfig& config) {
  BuilderConfig probe = config;
  probe.sample_inputs.clear();
  probe.timing_cache_path.clear();
  probe.timing_iterations = 0;
  probe.strip_weights = false;
  probe.verbose = false;
  return probe;
}

}  // namespace

std::shared_ptr<const Plan> passes::build_probe_plan(const BuilderConfig& config, const Network& network) {
  return build_plan(probe_config(config), network, {}, true);
}

Builder::Builder(BuilderConfig config) : config_(std::move(config)) {}

std::shared_ptr<Plan> Builder::build(const Network& network) const {
  KILN_CHECK(config_.min_output_cosine > 0 && config_.min_output_cosine <= 1, InvalidInput,
             "builder: min_output_cosine ", config_.min_output_cosine, " is not in (0, 1]");
  const DType to = reduced_dtype(config_);
  if (to == DType::Float32 || config_.sample_inputs.empty()) return build_plan(config_, network, {}, false);
  // Probes: quick builds (first tactic, no timing cache) that expose every layer's output.
  BuilderConfig fp32 = config_;
  fp32.precisions = {Precision::FP32};
  std::map<std::string, std::string> keep;
  try {
    const std::shared_ptr<const Plan> reference = passes::build_probe_plan(fp32, network);
    // The fp32 probe's values on the samples, which every rule below compares with.
    const std::vector<passes::ProbeValues> high = passes::run_probes(reference, config_.sample_inputs);
    for (auto& [layer, why] : passes::find_underflowing_layers(reference, high, to)) {
      if (keep.emplace(layer, why).second) KILN_INFO("engine: precision: ", layer, ": ", why, ": built in fp32");
    }
    std::shared_ptr<const Plan> settled;  // the last reduced probe, when the rounds found nothing more to keep
    for (int round = 0; round < kMaxPrecisionProbeRounds; ++round) {
      const std::shared_ptr<const Plan> reduced = build_plan(probe_config(config_), network, keep, true);
      size_t before = keep.size();
      for (auto& [layer, why] :
           passes::find_overflowing_layers(reduced, reference, high, config_.sample_inputs, to)) {
        if (keep.emplace(layer, why).second)
          KILN_INFO("engine: precision: ", layer, ": ", why, ": rebuilt in fp32");
      }
      if (keep.size() == before) {
        settled = reduced;
        break;
      }
    }
    keep_for_accuracy(config_, network, reference, high, settled, keep);
  } catch (const Error& e) {
    // A sample that does not fit the network (or a probe the backend cannot run) costs the check, not the
    // build: the plan keeps what the rounds before found.
    KILN_WARN("engine: precision: the sample-input check stopped: ", e.what());
  }
  return build_plan(config_, network, keep, false);
}

}  // namespace kiln::engine
