// Argument checks, part 2: each op family's rules, written once per family (op_checks.h says what they cover).
// Each rule checks only what is static: a symbolic size or SymInt argument is left to run time.

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "frontend/op_checks_util.h"
#include "kiln/support/dtype.h"

namespace kiln::frontend::checks {
namespace {

std::string text(int64_t x) { return std::to_string(x); }

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + text(v[i]);
  return s + "]";
}

/// `dim` arguments (one int) wrapped against the first tensor's rank, or rank + `extra` (unsqueeze, stack).
void check_dim_args(const NodeView& v, int64_t extra) {
  const ir::TensorMeta* t = v.first_tensor();
  if (t == nullptr) return;
  int64_t rank = t->rank();
  // A tensor list (cat, stack): the largest rank (cat skips legacy 1-D empty tensors of any rank).
  if (const ir::Argument* list = v.arg("tensors")) {
    for (const ir::Value* x : list->values()) {
      if (x != nullptr && x->is_tensor()) rank = std::max(rank, x->meta().rank());
    }
  }
  for (const char* name : {"dim", "dim0", "dim1", "dim2", "start_dim", "end_dim"}) {
    const ir::Argument* a = v.arg(name);
    if (a == nullptr || a->kind() == ir::Argument::Kind::Ints || a->kind() == ir::Argument::Kind::SymInts) continue;
    if (auto d = v.int_(name)) wrap_dim(v, name, *d, rank + extra);
  }
}

/// Int-list dims (`dim` of reductions, `dims` of permute / flip): each in range, none repeated.
std::vector<int64_t> check_dim_list(const NodeView& v, const std::string& name, bool unique) {
  const ir::TensorMeta* t = v.first_tensor();
  const ir::Argument* a = v.arg(name);
  if (t == nullptr || a == nullptr ||
      (a->kind() != ir::Argument::Kind::Ints && a->kind() != ir::Argument::Kind::SymInts)) {
    return {};
  }
  auto dims = v.ints(name);
  if (!dims) return {};
  std::vector<int64_t> wrapped;
  for (int64_t d : *dims) {
    int64_t w = wrap_dim(v, name, d, t->rank());
    if (unique && std::find(wrapped.begin(), wrapped.end(), w) != wrapped.end()) {
      v.fail(name, "dimension " + text(d) + " appears more than once in " + list_text(*dims));
    }
    wrapped.push_back(w);
  }
  return wrapped;
}

void check_permute(const NodeView& v) {
  const ir::TensorMeta* t = v.first_tensor();
  auto dims = v.ints("dims");
  if (t == nullptr || !dims) return;
  if (static_cast<int64_t>(dims->size()) != t->rank()) {
    v.fail("dims", list_text(*dims) + " has " + text(static_cast<int64_t>(dims->size())) +
                       " entries for a tensor of rank " + text(t->rank()));
  }
  check_dim_list(v, "dims", true);
}

void check_flatten(const NodeView& v) {
  const ir::TensorMeta* t = v.first_tensor();
  auto start = v.int_("start_dim"), end = v.int_("end_dim");
  if (t == nullptr || !start || !end) return;
  int64_t s = wrap_dim(v, "start_dim", *start, t->rank()), e = wrap_dim(v, "end_dim", *end, t->rank());
  if (s > e) v.fail("start_dim", "start_dim " + text(*start) + " comes after end_dim " + text(*end));
}

/// Sizes of a new tensor (empty, zeros, full, randn, ...): none negative.
void check_new_sizes(const NodeView& v) {
  const ir::Argument* a = v.arg("size");
  if (a == nullptr) return;
  auto sizes = v.maybe_ints("size");
  if (!sizes) v.fail("size", std::string("is ") + ir::to_string(a->kind()) + " '" + a->to_string() + "', expected ints");
  for (const auto& s : *sizes) {
    if (s && *s < 0) v.fail("size", "negative dimension " + text(*s));
  }
}

/// view / reshape: at most one -1, no other negative size, and the sizes multiply out to the input's elements.
void check_view(const NodeView& v, const std::string& arg) {
  auto sizes = v.maybe_ints(arg);
  if (!sizes) return;
  int64_t inferred = -1, product = 1;
  bool known = true;
  for (size_t i = 0; i < sizes->size(); ++i) {
    const auto& s = (*sizes)[i];
    if (!s) {
      known = false;
      continue;
    }
    if (*s == -1) {
      if (inferred >= 0) v.fail(arg, "more than one size is -1");
      inferred = static_cast<int64_t>(i);
    } else if (*s < 0) {
      v.fail(arg, "invalid size " + text(*s));
    } else if (*s != 0 && product > std::numeric_limits<int64_t>::max() / *s) {
      v.fail(arg, "the sizes' product overflows 64 bits");
    } else {
      product *= *s;
    }
  }
  const ir::TensorMeta* t = v.first_tensor();
  if (!known || t == nullptr) return;
  auto in = t->static_sizes();
  if (!in) return;
  int64_t numel = 1;
  for (int64_t d : *in) {
    if (d != 0 && numel > std::numeric_limits<int64_t>::max() / d) return;
    numel *= d;
  }
  const bool fits = inferred >= 0 ? (product != 0 && numel % product == 0) : product == numel;
  if (!fits) {
    v.fail(arg, "shape " + list_text(*v.ints(arg)) + " is invalid for an input of " + text(numel) + " elements");
  }
}

void check_dropout(const NodeView& v) {
  const ir::Argument* p = v.arg("p");
  if (p == nullptr || (p->kind() != ir::Argument::Kind::Float && p->kind() != ir::Argument::Kind::Int)) return;
  const double x = p->as_float();
  if (!(x >= 0.0 && x <= 1.0)) v.fail("p", "dropout probability has to be between 0 and 1, got " + p->to_string());
}

void check_layer_norm(const NodeView& v) {
  const ir::TensorMeta* t = v.tensor("input");
  auto shape = v.maybe_ints("normalized_shape");
  if (t == nullptr || !shape) return;
  const int64_t n = static_cast<int64_t>(shape->size());
  if (n == 0 || n > t->rank()) {
    v.fail("normalized_shape", "has " + text(n) + " dims for an input of rank " + text(t->rank()));
  }
  for (int64_t i = 0; i < n; ++i) {
    auto want = (*shape)[static_cast<size_t>(i)];
    auto have = static_dim(*t, t->rank() - n + i);
    if (want && have && *want != *have) {
      v.fail("normalized_shape", "entry " + text(i) + " is " + text(*want) + " but the input's dim " +
                                     text(t->rank() - n + i) + " is " + text(*have));
    }
  }
  for (const char* name : {"weight", "bias"}) {
    const ir::TensorMeta* w = v.tensor(name);
    if (w == nullptr) continue;
    auto ws = w->static_sizes();
    auto ns = v.ints("normalized_shape");
    if (ws && ns && *ws != *ns) {
      v.fail(name, "has shape " + list_text(*ws) + ", normalized_shape is " + list_text(*ns));
    }
  }
}

void check_group_norm(const NodeView& v) {
  const ir::TensorMeta* t = v.tensor("input");
  auto groups = v.int_("num_groups");
  if (t == nullptr || !groups) return;
  if (*groups <= 0) v.fail("num_groups", "must be positive, got " + text(*groups));
  auto c = static_dim(*t, 1);
  if (c && *c % *groups != 0) v.fail("num_groups", text(*groups) + " does not divide the " + text(*c) + " channels");
}

/// Each entry of an int-list argument (given as one int or `n` ints) at least `min`.
void check_spatial_list(const NodeView& v, const std::string& name, size_t n, int64_t min, bool allow_empty = false) {
  auto list = v.maybe_ints(name);
  if (!list) return;
  if (!(list->size() == n || list->size() == 1 || (allow_empty && list->empty()))) {
    v.fail(name, "has " + text(static_cast<int64_t>(list->size())) + " entries, expected 1 or " +
                     text(static_cast<int64_t>(n)));
  }
  for (const auto& x : *list) {
    if (x && *x < min) v.fail(name, "entry " + text(*x) + " must be at least " + text(min));
  }
}

void check_convolution(const NodeView& v) {
  const ir::TensorMeta* x = v.tensor("input");
  const ir::TensorMeta* w = v.tensor("weight");
  if (w == nullptr) return;
  const std::string& name = v.node().target().name;
  const bool transposed = name.rfind("conv_transpose", 0) == 0 ||
                          (v.arg("transposed") != nullptr && v.arg("transposed")->kind() == ir::Argument::Kind::Bool &&
                           v.arg("transposed")->as_bool());
  if (w->rank() < 3) v.fail("weight", "has rank " + text(w->rank()) + ", expected 3 to 5");
  const size_t n = static_cast<size_t>(w->rank() - 2);
  check_spatial_list(v, "stride", n, 1);
  check_spatial_list(v, "dilation", n, 1);
  if (v.arg("padding") != nullptr && v.arg("padding")->kind() == ir::Argument::Kind::String) {
    const std::string& mode = v.arg("padding")->as_string();
    if (mode != "valid" && mode != "same") v.fail("padding", "must be 'valid' or 'same', got '" + mode + "'");
    auto stride = v.ints("stride");
    if (mode == "same" && stride && std::any_of(stride->begin(), stride->end(), [](int64_t s) { return s != 1; })) {
      v.fail("padding", "'same' is not supported for strided convolutions");
    }
  } else {
    check_spatial_list(v, "padding", n, 0);
  }
  check_spatial_list(v, "output_padding", n, 0);
  auto groups = v.int_("groups");
  if (groups && *groups <= 0) v.fail("groups", "must be positive, got " + text(*groups));
  if (x == nullptr) return;
  if (x->dtype != w->dtype) {
    v.fail("weight", std::string("is ") + dtype_name(w->dtype) + " but the input is " + dtype_name(x->dtype) +
                         " (libtorch requires the same dtype)");
  }
  if (x->rank() != w->rank() && x->rank() != w->rank() - 1) {
    v.fail("input", "has rank " + text(x->rank()) + " for a weight of rank " + text(w->rank()));
  }
  const int64_t c_axis = x->rank() == w->rank() ? 1 : 0;
  auto c_in = static_dim(*x, c_axis), w0 = static_dim(*w, 0), w1 = static_dim(*w, 1);
  if (groups && w0 && *w0 % *groups != 0) {
    v.fail("groups", text(*groups) + " does not divide the weight's " + text(*w0) + (transposed ? " input" : " output") +
                         " channels");
  }
  if (groups && c_in && w1 && w0) {
    // Compared by division: channels * groups may overflow (groups = 2^62).
    const bool ok = transposed ? *c_in == *w0 : (*c_in % *groups == 0 && *c_in / *groups == *w1);
    if (!ok) {
      v.fail("input", "has " + text(*c_in) + " channels; the weight " + list_text(*w->static_sizes()) +
                          " with groups=" + text(*groups) + " expects " +
                          (transposed ? text(*w0) : (*w1 <= std::numeric_limits<int64_t>::max() / *groups
                                                         ? text(*w1 * *groups)
                                                         : "more than 2^63")));
    }
  }
  if (const ir::TensorMeta* b = v.tensor("bias")) {
    auto out = transposed ? (w1 && groups ? std::optional<int64_t>(*w1 * *groups) : std::nullopt) : w0;
    auto bs = b->static_sizes();
    if (b->rank() != 1 || (bs && out && (*bs)[0] != *out)) {
      v.fail("bias", "has shape " + b->to_string() + ", expected [" + (out ? text(*out) : "C_out") + "]");
    }
    if (b->dtype != w->dtype) v.fail("bias", std::string("is ") + dtype_name(b->dtype) + ", the weight " + dtype_name(w->dtype));
  }
  // The output must have at least one element per spatial dim: in + 2 pad >= dilation * (kernel - 1) + 1.
  auto stride = v.ints("stride"), pad = v.ints("padding"), dil = v.ints("dilation");
  if (transposed || !pad || !dil) return;
  for (size_t i = 0; i < n; ++i) {
    auto in = static_dim(*x, x->rank() - static_cast<int64_t>(n) + static_cast<int64_t>(i));
    auto k = static_dim(*w, 2 + static_cast<int64_t>(i));
    int64_t p = (*pad)[pad->size() == 1 ? 0 : i], d = (*dil)[dil->size() == 1 ? 0 : i];
    if (in && k && p < (int64_t{1} << 40) && d < (int64_t{1} << 20) && *k < (int64_t{1} << 20) &&
        *in + 2 * p < d * (*k - 1) + 1) {
      v.fail("input", "spatial size " + text(*in) + " (padded " + text(*in + 2 * p) +
                          ") is smaller than the dilated kernel " + text(d * (*k - 1) + 1));
    }
  }
}

void check_pool(const NodeView& v) {
  const ir::TensorMeta* x = v.first_tensor();
  auto kernel = v.maybe_ints("kernel_size");
  if (x == nullptr || !kernel) return;
  const std::string& name = v.node().target().name;
  const size_t n = name.find("1d") != std::string::npos ? 1 : name.find("3d") != std::string::npos ? 3 : 2;
  check_spatial_list(v, "kernel_size", n, 1);
  check_spatial_list(v, "stride", n, 1, true);
  check_spatial_list(v, "padding", n, 0);
  check_spatial_list(v, "dilation", n, 1);
  auto k = v.ints("kernel_size"), pad = v.ints("padding"), dil = v.ints("dilation");
  if (!k || !pad || pad->empty()) return;
  for (size_t i = 0; i < n; ++i) {
    int64_t kk = (*k)[k->size() == 1 ? 0 : i], p = (*pad)[pad->size() == 1 ? 0 : i];
    int64_t d = dil && !dil->empty() ? (*dil)[dil->size() == 1 ? 0 : i] : 1;
    if (kk < (int64_t{1} << 30) && d < (int64_t{1} << 30) && p > (d * (kk - 1) + 1) / 2) {
      v.fail("padding", "entry " + text(p) + " is more than half of the effective kernel size " +
                            text(d * (kk - 1) + 1));
    }
  }
}

/// Matrix products: operands of one dtype and, where static, matching inner dims.
void check_matmul(const NodeView& v, const std::string& a_name, const std::string& b_name, bool b_transposed) {
  const ir::TensorMeta* a = v.tensor(a_name);
  const ir::TensorMeta* b = v.tensor(b_name);
  if (a == nullptr || b == nullptr) return;
  if (a->dtype != b->dtype) {
    v.fail(b_name, std::string("is ") + dtype_name(b->dtype) + " but " + a_name + " is " + dtype_name(a->dtype) +
                       " (libtorch requires the same dtype)");
  }
  if (a->rank() < 1 || b->rank() < 1) return;
  auto ka = static_dim(*a, a->rank() - 1);
  auto kb = b_transposed ? static_dim(*b, b->rank() - 1) : static_dim(*b, b->rank() >= 2 ? b->rank() - 2 : 0);
  if (ka && kb && *ka != *kb) {
    v.fail(b_name, "inner dimensions differ: " + a->to_string() + " and " + b->to_string());
  }
}

using Rule = std::function<void(const NodeView&)>;

const std::map<std::string, Rule>& rules() {
  static const std::map<std::string, Rule> kRules = [] {
    std::map<std::string, Rule> r;
    for (const char* op : {"aten.conv1d", "aten.conv2d", "aten.conv3d", "aten.conv_transpose1d",
                           "aten.conv_transpose2d", "aten.conv_transpose3d", "aten.convolution", "aten._convolution"}) {
      r[op] = check_convolution;
    }
    for (const char* op : {"aten.max_pool1d", "aten.max_pool2d", "aten.max_pool3d", "aten.max_pool2d_with_indices",
                           "aten.max_pool3d_with_indices", "aten.avg_pool1d", "aten.avg_pool2d", "aten.avg_pool3d"}) {
      r[op] = check_pool;
    }
    r["aten.permute"] = check_permute;
    r["aten.flip"] = [](const NodeView& v) { check_dim_list(v, "dims", true); };
    r["aten.flatten"] = check_flatten;
    for (const char* op : {"aten.view", "aten._unsafe_view", "aten.reshape"}) {
      r[op] = [](const NodeView& v) { check_view(v, v.arg("size") != nullptr ? "size" : "shape"); };
    }
    for (const char* op : {"aten.empty", "aten.zeros", "aten.ones", "aten.full", "aten.rand", "aten.randn",
                           "aten.empty_strided", "aten.new_empty", "aten.new_zeros", "aten.new_ones", "aten.new_full"}) {
      r[op] = check_new_sizes;
    }
    for (const char* op : {"aten.dropout", "aten.native_dropout", "aten.feature_dropout", "aten.alpha_dropout",
                           "aten.feature_alpha_dropout", "aten.dropout_"}) {
      r[op] = check_dropout;
    }
    r["aten.layer_norm"] = r["aten.native_layer_norm"] = check_layer_norm;
    r["aten.group_norm"] = check_group_norm;
    r["aten.linear"] = [](const NodeView& v) { check_matmul(v, "input", "weight", true); };
    r["aten.mm"] = r["aten.bmm"] = [](const NodeView& v) { check_matmul(v, "self", "mat2", false); };
    r["aten.addmm"] = [](const NodeView& v) { check_matmul(v, "mat1", "mat2", false); };
    r["aten.matmul"] = [](const NodeView& v) { check_matmul(v, "self", "other", false); };
    return r;
  }();
  return kRules;
}

/// Ops whose `dim` may also name the position after the last dim.
const std::set<std::string>& one_past_the_end() {
  static const std::set<std::string> kOps = {"aten.unsqueeze", "aten.stack", "aten.unsqueeze_"};
  return kOps;
}

/// Ops whose `dim` list are reduction dims (in range, none repeated).
const std::set<std::string>& reductions() {
  static const std::set<std::string> kOps = {"aten.sum", "aten.mean", "aten.amax", "aten.amin", "aten.prod",
                                             "aten.var", "aten.std", "aten.var_mean", "aten.std_mean",
                                             "aten.logsumexp", "aten.norm", "aten.linalg_vector_norm",
                                             "aten.squeeze", "aten.any", "aten.all", "aten.count_nonzero"};
  return kOps;
}

}  // namespace

void check_family(const NodeView& v) {
  if (v.node().target().is_python_operator()) return;
  const std::string packet = v.node().target().packet();
  check_dim_args(v, one_past_the_end().count(packet) ? 1 : 0);
  if (reductions().count(packet)) check_dim_list(v, "dim", true);
  auto it = rules().find(packet);
  if (it != rules().end()) it->second(v);
}

}  // namespace kiln::frontend::checks
