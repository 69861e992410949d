#include <algorithm>
#include <map>
#include <sstream>

#include "engine/core/plan_impl.h"
#include "engine/core/shape_walk.h"
#include "engine/core/zero_volume.h"
#include "kiln/support/checked_math.h"
#include "kiln/support/error.h"
#include "kiln/support/hash.h"

namespace kiln::engine {
void Plan::Impl::derive() {
  bindings.clear();
  for (int64_t id : inputs) {
    const auto& t = tensors[id];
    bindings.push_back({t.name, t.dtype, t.dims, true, false});
  }
  data_dependent = data_dependent_tensors(*this);
  for (int64_t id : outputs) {
    const auto& t = tensors[id];
    bindings.push_back({t.name, t.dtype, t.dims, false, static_cast<bool>(data_dependent[id])});
  }
  consumers.assign(tensors.size(), {});
  for (size_t i = 0; i < layers.size(); ++i) {
    for (int64_t id : layers[i].layer.inputs) consumers[id].push_back(static_cast<int64_t>(i));
  }
}

LayerInfo Plan::Impl::layer_info(int64_t i) const {
  LayerInfo info;
  info.layer = &layers[i].layer;
  const PlanProfile* p = profiles.empty() ? nullptr : &profiles[0];
  auto make = [&](int64_t id) {
    TensorInfo t{tensors[id].name, tensors[id].dtype,  tensors[id].dims, tensors[id].dims,
                 tensors[id].dims, tensors[id].format, tensors[id].range};
    if (p && static_cast<size_t>(id) < p->min.size()) {
      t.min = p->min[id];
      t.opt = p->opt[id];
      t.max = p->max[id];
    }
    return t;
  };
  for (int64_t id : layers[i].layer.inputs) info.inputs.push_back(make(id));
  for (int64_t id : layers[i].layer.outputs) info.outputs.push_back(make(id));
  // Kernels prepare themselves (oneDNN primitives, cuBLASLt plans) at the opt shape, and kernel libraries
  // divide by dims: where the opt shape empties a tensor of the layer, they prepare for the max shape instead
  // (zero_volume.h; layers empty even at the max shape get no kernel).
  auto empty_opt = [](const TensorInfo& t) { return is_empty_dims(t.opt); };
  if (std::any_of(info.inputs.begin(), info.inputs.end(), empty_opt) ||
      std::any_of(info.outputs.begin(), info.outputs.end(), empty_opt)) {
    for (auto* list : {&info.inputs, &info.outputs}) {
      for (TensorInfo& t : *list) t.opt = t.max;
    }
  }
  if (!layers[i].kernel_data.empty()) info.plan_data = &layers[i].kernel_data;
  info.tune = layers[i].retime;
  return info;
}

bool Plan::Impl::weights_missing() const {
  for (const auto& e : refit) {
    if (!layers[e.layer].layer.weights[e.slot].defined()) return true;
  }
  return false;
}

void Plan::Impl::upload_constants(int64_t only) {
  if (backend->host_accessible()) return;
  device_constants.resize(layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    if (only >= 0 && static_cast<int64_t>(i) != only) continue;
    device_constants[i] = BackendBuffer();
    const Layer& l = layers[i].layer;
    if (l.kind != LayerKind::Constant || !l.weights[0].defined()) continue;
    const HostTensor& w = l.weights[0].value;
    device_constants[i].backend = backend.get();
    device_constants[i].data = backend->allocate(w.nbytes());
    backend->copy(device_constants[i].data, w.data(), w.nbytes(), CopyKind::HostToDevice, nullptr);
    backend->synchronize(nullptr);
  }
}

void Plan::Impl::create_kernels(int64_t only, ErrorKind build_failure) {
  upload_constants(only);
  kernels.resize(layers.size());
  // Layers timed again at their final dtypes (retime, e.g. around tensors kept INT8) that share a tactic, a
  // signature and input formats tune once: the later ones start from what the first one's kernel recorded, as
  // from a loaded plan (resnet50's repeated blocks would each tune cuDNN engine configurations again).
  std::map<std::string, size_t> tuned_twin;
  for (size_t i = 0; i < layers.size(); ++i) {
    if (only >= 0 && static_cast<int64_t>(i) != only) continue;
    kernels[i].reset();
    if (!is_kernel_layer(static_cast<int64_t>(i)) || always_empty(*this, static_cast<int64_t>(i))) continue;
    bool missing = false;
    for (const auto& e : refit) {
      if (e.layer == static_cast<int64_t>(i) && !layers[i].layer.weights[e.slot].defined()) missing = true;
    }
    if (missing) continue;
    try {
      std::string twin;
      if (layers[i].retime && layers[i].kernel_data.empty()) {
        twin = layers[i].tactic + "|" + layer_signature(*this, static_cast<int64_t>(i));
        for (const TensorInfo& t : layer_info(static_cast<int64_t>(i)).inputs)
          twin += tensor_format_name(t.format);
        const auto it = tuned_twin.find(twin);
        if (it != tuned_twin.end()) layers[i].kernel_data = layers[it->second].kernel_data;
      }
      kernels[i] = backend->create_kernel(layer_info(static_cast<int64_t>(i)), layers[i].tactic);
      layers[i].kernel_data = kernels[i]->plan_data();
      if (!twin.empty() && !layers[i].kernel_data.empty()) tuned_twin.emplace(twin, i);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw Error(build_failure, detail::concat("layer '", layers[i].layer.name, "': kernel '", layers[i].tactic,
                                        "' failed to build: ", e.what()));
    }
  }
}

DType logical_dtype(const Plan::Impl& g, int64_t id) {
  // (bounded by the layers: a forged plan's producers cannot loop it)
  for (size_t step = 0; step <= g.layers.size(); ++step) {
    const PlanTensor& t = g.tensors[static_cast<size_t>(id)];
    if (!held_in_int8(t)) return t.dtype;
    if (t.producer < 0 || g.layers[t.producer].layer.inputs.empty()) break;
    id = g.layers[t.producer].layer.inputs[0];
  }
  return DType::Float32;
}

std::vector<ShapeIn> plan_shape_inputs(const Plan::Impl& plan, const Layer& layer,
                                       const std::vector<Dims>& dims,
                                       const std::vector<std::optional<HostTensor>>& values) {
  std::vector<ShapeIn> in;
  for (int64_t id : layer.inputs)
    in.push_back({logical_dtype(plan, id), dims[id], values[id] ? &*values[id] : nullptr});
  return in;
}

ConcreteShapes infer_concrete(const Plan::Impl& plan, const std::vector<Dims>& input_dims, DataDependentGuess guess) {
  ConcreteShapes s;
  s.dims.assign(plan.tensors.size(), Dims{});
  s.values.assign(plan.tensors.size(), std::nullopt);
  for (size_t i = 0; i < plan.inputs.size(); ++i) s.dims[plan.inputs[i]] = input_dims.at(i);
  for (const PlanLayer& pl : plan.layers) {
    const Layer& l = pl.layer;
    std::vector<ShapeIn> in = plan_shape_inputs(plan, l, s.dims, s.values);
    std::vector<ShapeOut> outs = infer_layer_shapes(l, in);
    for (size_t o = 0; o < outs.size(); ++o) s.dims[l.outputs[o]] = guessed_dims(outs[o], in, guess);
    if (!outs.empty()) s.values[l.outputs[0]] = host_value(l, pl.host, in, outs, HostValues::HostLayers);
  }
  return s;
}

bool is_reshape_view(const Layer& l) {
  if (l.kind != LayerKind::Shuffle || l.inputs.empty() || l.outputs.size() != 1) return false;
  const auto& p = l.get<ShuffleParams>();
  for (const auto* perm : {&p.first_perm, &p.second_perm}) {
    for (size_t i = 0; i < perm->size(); ++i) {
      if ((*perm)[i] != static_cast<int64_t>(i)) return false;
    }
  }
  return true;
}

std::vector<bool> data_dependent_tensors(const Plan::Impl& plan) {
  std::vector<bool> dd(plan.tensors.size(), false);
  for (const PlanLayer& pl : plan.layers) {
    const Layer& l = pl.layer;
    bool from_dd = false;
    for (int64_t id : l.inputs) from_dd = from_dd || dd[id];
    for (int64_t id : l.outputs) {
      const Dims& d = plan.tensors[id].dims;
      dd[id] = l.kind == LayerKind::NonZero || (from_dd && !dims_known(d));
    }
  }
  return dd;
}

void plan_memory(const Plan::Impl& plan, PlanProfile& prof) {
  size_t nt = plan.tensors.size();
  prof.offsets.assign(nt, -1);
  prof.capacity.assign(nt, 0);
  struct Buf {
    int64_t id, first, last, size;
  };
  std::vector<Buf> bufs;
  // Every buffer size a multiple of the alignment, so every offset is one too: 64 bytes (a cache line) on the
  // host; 256 on a device (cudaMalloc's alignment, which cuBLASLt's and cuDNN's fastest kernels and 16-byte
  // vector loads of any dtype expect).
  const int64_t align = plan.backend == nullptr || plan.backend->host_accessible() ? 64 : 256;
  const std::vector<bool> data_dependent = data_dependent_tensors(plan);
  for (size_t id = 0; id < nt; ++id) {
    const PlanTensor& t = plan.tensors[id];
    if (t.producer < 0) continue;
    const PlanLayer& pl = plan.layers[t.producer];
    if (pl.layer.kind == LayerKind::Constant) continue;
    // Written straight into the user's buffer, except data-dependent outputs: the arena holds them until their
    // size is known and an OutputAllocator gives their buffer.
    if (t.is_output && !data_dependent[id]) continue;
    int64_t bytes = format_bytes(t.format, t.dtype, prof.max[id]);
    bytes = checked_mul(checked_ceildiv(bytes, align, "an arena buffer"), align, "an arena buffer");
    prof.capacity[id] = bytes;
    int64_t last = t.producer;
    for (int64_t c : plan.consumers[id]) last = std::max(last, c);
    if (t.is_output) last = static_cast<int64_t>(plan.layers.size());
    if (bytes > 0) bufs.push_back({static_cast<int64_t>(id), t.producer, last, bytes});
  }
  // In place: the output of a layer with one residual (Sum post-op) takes its residual's buffer when the
  // residual dies at that layer, is read by it only as the residual, and has the output's size and format
  // (kernels then skip copying the residual into the output). Only on host backends: the CPU kernels fold the
  // residual in as oneDNN's sum post-op, which reads the destination; device kernels (cuda) run the main op
  // into the output first and add residuals in a later pass, which needs the residual intact.
  std::vector<int64_t> alias(nt, -1);  // output -> the tensor whose buffer it shares
  std::vector<int64_t> buf_of(nt, -1);
  for (size_t b = 0; b < bufs.size(); ++b) buf_of[bufs[b].id] = static_cast<int64_t>(b);
  // Views: a kernel Shuffle that only reshapes (no permutation) a Plain tensor into a Plain tensor of the same
  // dtype (or an E4M3 one into an E4M3 one: codes in plain order) reads and writes the same bytes in the same
  // order, so its output shares its input's buffer and its kernel has nothing to copy (shuffle kernels skip a copy
  // onto itself). Both ends of a view stay out of the in-place residual rule below, which needs to know when a
  // buffer dies.
  std::vector<bool> viewed(nt, false);
  for (size_t li = 0; li < plan.layers.size(); ++li) {
    if (!plan.is_kernel_layer(static_cast<int64_t>(li)) || !is_reshape_view(plan.layers[li].layer)) continue;
    const Layer& l = plan.layers[li].layer;
    int64_t in = l.inputs[0], out = l.outputs[0];
    const PlanTensor &it = plan.tensors[in], &ot = plan.tensors[out];
    const bool same_order = it.format == ot.format &&
                            (it.format == TensorFormat::Plain || it.format == TensorFormat::E4M3);
    if (buf_of[in] < 0 || buf_of[out] < 0 || !same_order || it.dtype != ot.dtype || plan.layers[it.producer].layer.kind == LayerKind::NonZero) {
      continue;
    }
    alias[out] = in;
    viewed[in] = viewed[out] = true;
  }
  const bool residual_in_place = plan.backend == nullptr || plan.backend->host_accessible();
  for (size_t li = 0; residual_in_place && li < plan.layers.size(); ++li) {
    const Layer& l = plan.layers[li].layer;
    const std::vector<PostOp>* post_ops = nullptr;
    if (l.kind == LayerKind::Convolution) post_ops = &l.get<ConvolutionParams>().post_ops;
    if (l.kind == LayerKind::MatrixMultiply) post_ops = &l.get<MatrixMultiplyParams>().post_ops;
    if (!post_ops || count_sum_post_ops(*post_ops) != 1 || !plan.is_kernel_layer(static_cast<int64_t>(li))) continue;
    size_t ri = static_cast<size_t>(first_residual_input(l));
    if (ri >= l.inputs.size() || l.outputs.size() != 1) continue;
    int64_t r = l.inputs[ri], out = l.outputs[0];
    if (buf_of[r] < 0 || buf_of[out] < 0 || viewed[r] || std::count(l.inputs.begin(), l.inputs.end(), r) != 1) {
      continue;
    }
    const Buf& rb = bufs[buf_of[r]];
    const PlanTensor &rt = plan.tensors[r], &ot = plan.tensors[out];
    if (rb.last != static_cast<int64_t>(li) || rb.size != bufs[buf_of[out]].size || rt.format != ot.format ||
        rt.dtype != ot.dtype || prof.max[r] != prof.max[out]) {
      continue;
    }
    alias[out] = r;
  }
  for (size_t id = 0; id < nt; ++id) {  // each output's lifetime (and size) joins its root buffer's
    if (alias[id] < 0) continue;
    int64_t root = alias[id];
    while (alias[root] >= 0) root = alias[root];
    Buf &rb = bufs[buf_of[root]], &own = bufs[buf_of[id]];
    rb.last = std::max(rb.last, own.last);
    rb.size = std::max(rb.size, own.size);  // a view's max dims may bound its bytes differently
    own.size = 0;  // dropped below
  }
  bufs.erase(std::remove_if(bufs.begin(), bufs.end(), [](const Buf& b) { return b.size == 0; }), bufs.end());
  // Lower bound: the largest sum of sizes live at one step.
  uint64_t lower = 0;
  for (size_t step = 0; step <= plan.layers.size(); ++step) {
    uint64_t live = 0;
    for (const auto& b : bufs) {
      if (b.first <= static_cast<int64_t>(step) && static_cast<int64_t>(step) <= b.last) live += b.size;
    }
    lower = std::max(lower, live);
  }
  // Best fit: largest first; each buffer goes into the smallest gap among the buffers it overlaps in time.
  std::vector<size_t> order(bufs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return bufs[a].size > bufs[b].size; });
  std::vector<size_t> placed;
  uint64_t arena = 0;
  for (size_t oi : order) {
    const Buf& b = bufs[oi];
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t pi : placed) {
      const Buf& p = bufs[pi];
      if (p.first <= b.last && b.first <= p.last) busy.push_back({prof.offsets[p.id], prof.offsets[p.id] + p.size});
    }
    std::sort(busy.begin(), busy.end());
    int64_t best = -1, best_gap = INT64_MAX, cursor = 0;
    for (const auto& [s, e] : busy) {
      if (s > cursor && s - cursor >= b.size && s - cursor < best_gap) {
        best = cursor;
        best_gap = s - cursor;
      }
      cursor = std::max(cursor, e);
    }
    if (best < 0) best = cursor;
    prof.offsets[b.id] = best;
    arena = std::max<uint64_t>(arena, static_cast<uint64_t>(checked_add(best, b.size, "the arena size")));
    placed.push_back(oi);
  }
  for (size_t id = 0; id < nt; ++id) {
    if (alias[id] < 0) continue;
    int64_t root = alias[id];
    while (alias[root] >= 0) root = alias[root];
    prof.offsets[id] = prof.offsets[root];
  }
  prof.arena_bytes = arena;
  prof.live_lower_bound = lower;
}

namespace {
/// Writes params as text (for signatures and plan listings).
struct TextVisitor {
  std::ostringstream& out;
  template <typename T>
  void operator()(const char* name, const T& v) {
    out << name << "=";
    write(v);
    out << ";";
  }
  void write(int64_t v) { out << v; }
  void write(double v) { out << v; }
  void write(bool v) { out << (v ? 1 : 0); }
  void write(DType v) { out << dtype_name(v); }
  void write(const std::string& v) { out << v; }
  template <typename E>
    requires std::is_enum_v<E>
  void write(E v) { out << static_cast<int64_t>(v); }
  template <typename T>
  void write(const std::vector<T>& v) {
    out << "[";
    for (const auto& x : v) { write(x); out << ","; }
    out << "]";
  }
  template <typename S>
    requires requires(S s, TextVisitor& t) { s.visit(t); }
  void write(const S& s) {
    out << "{";
    const_cast<S&>(s).visit(*this);
    out << "}";
  }
};
}  // namespace

std::string params_text(const LayerParams& params) {
  std::ostringstream out;
  TextVisitor v{out};
  std::visit([&](const auto& p) { const_cast<std::decay_t<decltype(p)>&>(p).visit(v); }, params);
  return out.str();
}

std::string layer_signature(const Plan::Impl& plan, int64_t i) {
  const Layer& l = plan.layers[i].layer;
  std::ostringstream out;
  out << layer_kind_name(l.kind) << "|" << params_text(l.params) << "|";
  LayerInfo info = plan.layer_info(i);
  auto dims = [&](const Dims& d) { for (int64_t x : d) out << x << ","; out << ";"; };
  for (const auto* list : {&info.inputs, &info.outputs}) {
    for (const auto& t : *list) {
      out << dtype_name(t.dtype) << ":";
      dims(t.min); dims(t.opt); dims(t.max);
    }
    out << "|";
  }
  for (const auto& w : l.weights) {
    out << (w.defined() ? dtype_name(w.value.dtype()) : "none") << ":";
    if (w.defined()) dims(w.value.sizes());
  }
  return out.str();
}

}  // namespace kiln::engine
