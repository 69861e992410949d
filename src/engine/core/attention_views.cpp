// The attention-view pass: an Attention layer reads q, k and v through strided views of the tensors that a
// chain of Shuffle (reshape / permute), select-like Gather and constant Slice layers copied them from, and writes its output
// straight into the layout of a permute that follows it (AttentionView, layers.h). The bypassed copies die
// when nothing else uses them (dead-layer removal).
//
// The chain's layout is tracked hierarchically, because torch-style view rules fail on real chains (ViT's
// reshape [L, B, E] -> [L, B*H, D] merges B and H, whose strides do not line up, and a later reshape splits
// them again): each dim of an intermediate tensor is a list of (size, stride) atoms, major first, over the
// source tensor's dense buffer. A permute reorders dims; a reshape flattens the atoms and regroups them into
// the new dims, splitting an atom where a new dim boundary falls inside it; a select (Gather of one constant
// index) adds the index's offset and drops the dim; a slice (GPT-2's split of its fused q/k/v projection) adds
// its start's offset and scales the stride of each sliced dim, which must coalesce into one atom. At the end every one of the 4 attention dims must
// coalesce into one (size, stride), with the head dim at stride 1. Static shapes only.

#include <algorithm>
#include <deque>
#include <optional>
#include <set>
#include <string>

#include "engine/core/passes.h"
#include "engine/ops/shape_inference.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"

namespace kiln::engine::passes {
namespace {

struct Atom {
  int64_t size = 1, stride = 0;
};
/// A tensor's layout over a source buffer: per dim its atoms (major first; none for a dim of size 1).
struct Layout {
  std::vector<std::vector<Atom>> dims;
  int64_t offset = 0;
};

constexpr size_t kMaxChain = 16;

Layout dense_layout(const Dims& d) {
  Layout l;
  l.dims.resize(d.size());
  int64_t stride = 1;
  for (size_t i = d.size(); i-- > 0;) {
    if (d[i] != 1) l.dims[i].push_back({d[i], stride});
    stride *= d[i];
  }
  return l;
}

int64_t dim_size(const std::vector<Atom>& atoms) {
  int64_t n = 1;
  for (const Atom& a : atoms) n *= a.size;
  return n;
}

bool permute(Layout& l, const std::vector<int64_t>& perm) {
  if (perm.empty()) return true;
  if (perm.size() != l.dims.size()) return false;
  std::vector<std::vector<Atom>> out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(l.dims.size())) return false;
    out.push_back(l.dims[p]);
  }
  l.dims = std::move(out);
  return true;
}

/// Regroups the atoms (in row-major order) into dims `to`, splitting an atom where a dim boundary falls
/// inside it; false when sizes do not divide.
bool reshape(Layout& l, const Dims& to) {
  std::deque<Atom> flat;
  for (const auto& d : l.dims) {
    for (const Atom& a : d) {
      if (a.size != 1) flat.push_back(a);
    }
  }
  std::vector<std::vector<Atom>> out(to.size());
  for (size_t i = 0; i < to.size(); ++i) {
    if (to[i] <= 0) return false;
    int64_t need = to[i];
    while (need > 1) {
      if (flat.empty()) return false;
      Atom a = flat.front();
      if (a.size <= need) {
        if (need % a.size != 0) return false;
        out[i].push_back(a);
        flat.pop_front();
        need /= a.size;
      } else {
        if (a.size % need != 0) return false;
        out[i].push_back({need, a.stride * (a.size / need)});
        flat.front() = {a.size / need, a.stride};
        need = 1;
      }
    }
  }
  if (!flat.empty()) return false;
  l.dims = std::move(out);
  return true;
}

/// Fixes dim `axis` at `index`: its offset joins the layout's, the dim goes away.
void select(Layout& l, size_t axis, int64_t index) {
  const auto& atoms = l.dims[axis];
  for (size_t k = atoms.size(); k-- > 0;) {
    l.offset += (index % atoms[k].size) * atoms[k].stride;
    index /= atoms[k].size;
  }
  l.dims.erase(l.dims.begin() + static_cast<std::ptrdiff_t>(axis));
}

/// One (size, stride) for a dim whose atoms are contiguous with each other; size-1 dims get stride 0.
std::optional<Atom> coalesce(const std::vector<Atom>& atoms) {
  if (atoms.empty()) return Atom{1, 0};
  Atom cur = atoms[0];
  for (size_t k = 1; k < atoms.size(); ++k) {
    if (cur.stride != atoms[k].size * atoms[k].stride) return std::nullopt;
    cur = {cur.size * atoms[k].size, atoms[k].stride};
  }
  return cur;
}

/// Keeps out[d] indices start[d] + i * step[d] of every dim d; false when a sliced dim's atoms do not coalesce.
bool slice(Layout& l, const SliceParams& p, const Dims& in, const Dims& out) {
  if (p.start.size() != in.size() || (!p.stride.empty() && p.stride.size() != in.size())) return false;
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t step = p.stride.empty() ? 1 : p.stride[d];
    if (p.start[d] == 0 && step == 1 && out[d] == in[d]) continue;
    const std::optional<Atom> a = coalesce(l.dims[d]);
    if (!a || step <= 0) return false;
    l.offset += p.start[d] * a->stride;
    l.dims[d].clear();
    if (out[d] != 1) l.dims[d].push_back({out[d], a->stride * step});
  }
  return true;
}

bool is_const(const Plan::Impl& g, int64_t id) {
  int64_t p = g.tensors[id].producer;
  return p >= 0 && g.layers[p].layer.kind == LayerKind::Constant && !g.layers[p].layer.weights.empty();
}

/// The constant scalar index of a Gather that selects one element of a dim (torch select), or nullopt.
std::optional<int64_t> select_index(const Plan::Impl& g, const Layer& l) {
  if (l.kind != LayerKind::Gather || l.inputs.size() != 2) return std::nullopt;
  if (l.get<GatherParams>().mode != GatherParams::Default || !is_const(g, l.inputs[1])) return std::nullopt;
  const HostTensor& idx = g.layers[g.tensors[l.inputs[1]].producer].layer.weights[0].value;
  if (idx.dim() != 0 || (idx.dtype() != DType::Int64 && idx.dtype() != DType::Int32)) return std::nullopt;
  return static_cast<int64_t>(idx.get_as_double(0));
}

/// Whether layer `l` is a step the walk may go through (static dims on both sides).
bool chain_step(const Plan::Impl& g, const Layer& l) {
  if (l.outputs.size() != 1 || l.inputs.empty()) return false;
  if (!dims_known(g.tensors[l.inputs[0]].dims) || !dims_known(g.tensors[l.outputs[0]].dims)) return false;
  if (g.tensors[l.inputs[0]].dtype != g.tensors[l.outputs[0]].dtype) return false;
  if (l.kind == LayerKind::Shuffle) return true;
  if (l.kind == LayerKind::Slice) return l.inputs.size() == 1;  // constant start / size / stride
  return select_index(g, l).has_value();
}

/// Applies layer `l` (a chain step) to layout `x` of its input; false when the result is not affine in atoms.
bool apply(const Plan::Impl& g, const Layer& l, Layout& x) {
  const Dims& in = g.tensors[l.inputs[0]].dims;
  const Dims& out = g.tensors[l.outputs[0]].dims;
  if (x.dims.size() != in.size()) return false;
  if (l.kind == LayerKind::Gather) {
    int64_t axis = l.get<GatherParams>().axis;
    if (axis < 0) axis += static_cast<int64_t>(in.size());
    if (axis < 0 || axis >= static_cast<int64_t>(in.size())) return false;
    int64_t index = *select_index(g, l);
    if (index < 0) index += in[axis];
    if (index < 0 || index >= in[axis]) return false;
    select(x, static_cast<size_t>(axis), index);
  } else if (l.kind == LayerKind::Slice) {
    if (!slice(x, l.get<SliceParams>(), in, out)) return false;
  } else {
    const auto& p = l.get<ShuffleParams>();
    if (!permute(x, p.first_perm)) return false;
    if (p.has_reshape) {
      Dims mid = out;
      if (!p.second_perm.empty()) {
        if (p.second_perm.size() != out.size()) return false;
        for (size_t i = 0; i < out.size(); ++i) mid[p.second_perm[i]] = out[i];
      }
      if (!reshape(x, mid)) return false;
    }
    if (!permute(x, p.second_perm)) return false;
  }
  if (x.dims.size() != out.size()) return false;
  for (size_t i = 0; i < out.size(); ++i) {
    if (dim_size(x.dims[i]) != out[i]) return false;
  }
  return true;
}

/// A view of tensor `operand` (rank 4, static) over the source of the longest chain of steps before it that
/// composes; sets `*source` and `*bypassed` (layers of the chain). nullopt when there is none worth taking
/// (no chain, or one of reshapes only: those are free views of their input already).
std::optional<AttentionView> compose_operand(const Plan::Impl& g, int64_t operand, int64_t* source,
                                             std::vector<int64_t>* bypassed) {
  std::vector<int64_t> chain;  // nearest first
  for (int64_t t = operand; chain.size() < kMaxChain;) {
    int64_t p = g.tensors[t].producer;
    if (p < 0 || !chain_step(g, g.layers[p].layer)) break;
    chain.push_back(p);
    t = g.layers[p].layer.inputs[0];
  }
  const Dims& od = g.tensors[operand].dims;
  for (size_t len = chain.size(); len > 0; --len) {  // longest chain first
    bool copies = false;
    for (size_t k = 0; k < len; ++k) {
      const Layer& l = g.layers[chain[k]].layer;
      const auto* sp = l.kind == LayerKind::Shuffle ? &l.get<ShuffleParams>() : nullptr;
      copies = copies || !sp || !sp->first_perm.empty() || !sp->second_perm.empty();
    }
    if (!copies) break;  // shorter chains are reshapes only too
    int64_t src = g.layers[chain[len - 1]].layer.inputs[0];
    Layout x = dense_layout(g.tensors[src].dims);
    bool ok = true;
    for (size_t k = len; k-- > 0 && ok;) ok = apply(g, g.layers[chain[k]].layer, x);
    if (!ok || x.dims.size() != 4) continue;
    AttentionView view;
    view.dims = od;
    view.offset = x.offset;
    for (size_t d = 0; d < 4 && ok; ++d) {
      auto a = coalesce(x.dims[d]);
      ok = a.has_value();
      if (ok) view.strides.push_back(od[d] == 1 ? (d == 3 ? 1 : 0) : a->stride);
    }
    if (!ok || view.strides[3] != 1) continue;
    *source = src;
    bypassed->assign(chain.begin(), chain.begin() + static_cast<std::ptrdiff_t>(len));
    return view;
  }
  return std::nullopt;
}

/// The consumers of tensor `id` (layer indices; each once).
std::vector<int64_t> consumers(const Plan::Impl& g, int64_t id) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < g.layers.size(); ++i) {
    const auto& in = g.layers[i].layer.inputs;
    if (std::find(in.begin(), in.end(), id) != in.end()) out.push_back(static_cast<int64_t>(i));
  }
  return out;
}

/// When the output of attention layer `a` feeds only a permute Shuffle (then maybe a reshape in the same
/// layer, never a second permute), the attention writes the permute's output directly: returns true after
/// rewiring (the permute is left without inputs and outputs).
bool fold_output(Plan::Impl& g, int64_t a) {
  Layer& l = g.layers[a].layer;
  int64_t out = l.outputs[0];
  if (g.tensors[out].is_output) return false;
  auto c = consumers(g, out);
  if (c.size() != 1) return false;
  Layer& s = g.layers[c[0]].layer;
  if (s.kind != LayerKind::Shuffle || s.inputs[0] != out || s.outputs.size() != 1) return false;
  if (std::count(s.inputs.begin(), s.inputs.end(), out) != 1) return false;
  const auto& sp = s.get<ShuffleParams>();
  const Dims& od = g.tensors[out].dims;
  const Dims& td = g.tensors[s.outputs[0]].dims;
  if (sp.first_perm.size() != 4 || !dims_known(td) || g.tensors[s.outputs[0]].dtype != g.tensors[out].dtype)
    return false;
  bool identity_first = true;
  for (size_t i = 0; i < 4; ++i)
    identity_first = identity_first && sp.first_perm[i] == static_cast<int64_t>(i);
  if (identity_first) return false;  // a reshape only: already a free view of its input
  bool identity_second = true;
  for (size_t i = 0; i < sp.second_perm.size(); ++i)
    identity_second = identity_second && sp.second_perm[i] == static_cast<int64_t>(i);
  if (!identity_second) return false;
  // Element (b, h, s, d) lands at its row-major position in the permuted dims; a reshape keeps positions.
  Dims pd(4);
  for (size_t i = 0; i < 4; ++i) pd[i] = od[sp.first_perm[i]];
  std::vector<int64_t> ps(4, 1);
  for (size_t i = 3; i-- > 0;) ps[i] = ps[i + 1] * pd[i + 1];
  AttentionView view;
  view.dims = od;
  view.strides.assign(4, 0);
  for (size_t i = 0; i < 4; ++i) view.strides[sp.first_perm[i]] = ps[i];
  for (size_t d = 0; d < 4; ++d) {
    if (od[d] == 1) view.strides[d] = d == 3 ? 1 : 0;
  }
  if (view.strides[3] != 1) return false;
  auto& p = l.get<AttentionParams>();
  p.out_view = view;
  p.out_dims = td;
  l.outputs[0] = s.outputs[0];
  g.tensors[l.outputs[0]].producer = a;
  KILN_INFO("engine: attention '", l.name, "' writes its output through a view (shuffle '", s.name,
            "' bypassed)");
  s.inputs.clear();
  s.outputs.clear();
  return true;
}

}  // namespace

int fold_attention_views(Plan::Impl& g) {
  int folds = 0;
  for (size_t i = 0; i < g.layers.size(); ++i) {
    Layer& l = g.layers[i].layer;
    if (l.kind != LayerKind::Attention || l.outputs.size() != 1 || l.inputs.size() < 3) continue;
    if (l.get<AttentionParams>().has_views()) continue;
    bool static_rank4 = dims_known(g.tensors[l.outputs[0]].dims) && g.tensors[l.outputs[0]].dims.size() == 4;
    for (size_t k = 0; k < 3; ++k) {
      const Dims& d = g.tensors[l.inputs[k]].dims;
      static_rank4 = static_rank4 && dims_known(d) && d.size() == 4;
    }
    if (!static_rank4) continue;
    std::string which;
    std::set<int64_t> bypassed;
    for (int k = 0; k < 3; ++k) {
      int64_t src = -1;
      std::vector<int64_t> chain;
      auto view = compose_operand(g, l.inputs[k], &src, &chain);
      if (!view) continue;
      l.get<AttentionParams>().view(k) = *view;
      l.inputs[k] = src;
      which += std::string(which.empty() ? "" : "/") + "qkv"[k];
      bypassed.insert(chain.begin(), chain.end());
      ++folds;
    }
    if (!which.empty()) {
      KILN_INFO("engine: attention '", l.name, "' reads ", which, " through views (", bypassed.size(),
                " layers bypassed)");
    }
    if (fold_output(g, static_cast<int64_t>(i))) ++folds;
  }
  return folds;
}

}  // namespace kiln::engine::passes
