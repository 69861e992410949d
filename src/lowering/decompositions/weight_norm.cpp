// _weight_norm(v, g, dim) and _weight_norm_interface(v, g, dim) (weight normalization, as wav2vec2's
// positional convolution and other parametrized layers export it): w = v * g / ||v||, the 2-norm taken over
// every dim but `dim` (dim = -1: over all of v, torch's norm_except_dim convention, not the last dim); the
// interface form also returns the norms (shaped like g).
//
// Weights in, weights out: when v and g are constants with data (the usual case, parameters), w and the norms
// are computed here on the host, in double, and become constants, so the consuming convolution sees a frozen
// weight (its converter needs one; before, wav2vec2's grouped convolution ran in PyTorch). Otherwise the node
// becomes mul, sum, sqrt, div and mul.

#include <cmath>

#include "builder.h"
#include "decompositions_internal.h"

namespace kiln::lowering::detail {

namespace {

using ir::Argument;

// The index along the kept dim of each element of v (0 everywhere when dim = -1).
struct KeptDim {
  int64_t inner = 1;  // elements after the kept dim
  int64_t size = 1;   // extent of the kept dim
  int64_t of(int64_t flat) const { return (flat / inner) % size; }
};

bool fold(ir::Graph& g, ir::Node* n, ir::Value* v, ir::Value* gain, const KeptDim& kept) {
  const HostTensor& vd = v->data();
  const HostTensor& gd = gain->data();
  if (gd.numel() != kept.size) return false;
  std::vector<double> squares(static_cast<size_t>(kept.size), 0.0);
  for (int64_t i = 0; i < vd.numel(); ++i) {
    const double x = vd.get_as_double(i);
    squares[static_cast<size_t>(kept.of(i))] += x * x;
  }
  HostTensor w(n->output(0)->meta().dtype, vd.sizes());
  for (int64_t i = 0; i < vd.numel(); ++i) {
    const size_t c = static_cast<size_t>(kept.of(i));
    w.set_from_double(
        i, vd.get_as_double(i) * gd.get_as_double(static_cast<int64_t>(c)) / std::sqrt(squares[c]));
  }
  std::vector<ir::Value*> outs = {tensor_constant(g, std::move(w), n->output(0)->name() + "_folded")};
  if (n->outputs().size() > 1) {
    HostTensor norms(n->output(1)->meta().dtype, gd.sizes());
    for (int64_t c = 0; c < kept.size; ++c)
      norms.set_from_double(c, std::sqrt(squares[static_cast<size_t>(c)]));
    outs.push_back(tensor_constant(g, std::move(norms), n->output(1)->name() + "_folded"));
  }
  replace_node(g, n, outs);
  erase_if_dead_constant(g, v);
  erase_if_dead_constant(g, gain);
  return true;
}

}  // namespace

bool decompose_weight_norm(ir::Graph& g, ir::Node* n) {
  ir::Value* v = tensor_arg(*n, "v");
  ir::Value* gain = tensor_arg(*n, "g");
  if (v == nullptr || gain == nullptr || !is_floating(v->meta().dtype) || v->meta().rank() == 0) return false;
  const int64_t rank = v->meta().rank();
  const int64_t dim = int_arg(*n, "dim", 0);
  if (dim != -1 && (dim < 0 || dim >= rank)) return false;
  std::vector<int64_t> reduced;
  for (int64_t i = 0; i < rank; ++i) {
    if (i != dim) reduced.push_back(i);
  }
  const bool constant = v->role() == ir::ValueRole::Constant && v->data().defined() &&
                        gain->role() == ir::ValueRole::Constant && gain->data().defined();
  if (constant) {
    KeptDim kept;
    if (dim >= 0) {
      kept.size = v->data().sizes()[static_cast<size_t>(dim)];
      for (int64_t i = dim + 1; i < rank; ++i) kept.inner *= v->data().sizes()[static_cast<size_t>(i)];
    }
    if (fold(g, n, v, gain, kept)) return true;
  }
  Builder b(g, n);
  ir::Value* norm =
      b.unary("aten.sqrt.default", b.reduce("aten.sum.dim_IntList", b.mul(v, v), reduced, dim >= 0));
  ir::Value* w = b.mul(v, b.div(gain, norm));
  if (w->meta().sizes != n->output(0)->meta().sizes) return false;
  std::vector<ir::Value*> outs = {w};
  if (n->outputs().size() > 1) {
    if (norm->meta().sizes != n->output(1)->meta().sizes) return false;
    outs.push_back(norm);
  }
  replace_node(g, n, outs);
  return true;
}

}  // namespace kiln::lowering::detail
