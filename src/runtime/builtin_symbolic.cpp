// Python operators on symbolic values (_operator.*, math.*, torch.sym_*), metadata queries (sym_size, ...)
// and runtime asserts. Python's integer semantics apply: floordiv and mod round toward negative infinity.

#include <cmath>
#include <limits>

#include <ATen/ATen.h>

#include "kiln/support/error.h"
#include "runtime/builtin_ops.h"

namespace kiln::runtime {
namespace {

using Values = std::vector<c10::IValue>;

// A Python number: int (bools count as ints) or float.
struct Number {
  bool is_int = true;
  int64_t i = 0;
  double f = 0.0;
  double as_double() const { return is_int ? static_cast<double>(i) : f; }
};

Number to_number(const c10::IValue& v, const NodeArgs& args) {
  if (v.isInt()) return Number{true, v.toInt(), 0.0};
  if (v.isBool()) return Number{true, v.toBool() ? 1 : 0, 0.0};
  if (v.isDouble()) return Number{false, 0, v.toDouble()};
  if (v.isTensor() && v.toTensor().numel() == 1) {
    const at::Tensor& t = v.toTensor();
    if (at::isFloatingType(t.scalar_type())) return Number{false, 0, t.item<double>()};
    return Number{true, t.item<int64_t>(), 0.0};
  }
  KILN_FAIL(InvalidInput, "node '", args.node().name(), "' (", args.node().target().to_string(),
            ") expects numbers, got a ", v.tagKind());
}

c10::IValue from_number(const Number& n) { return n.is_int ? c10::IValue(n.i) : c10::IValue(n.f); }

int64_t checked_add(int64_t a, int64_t b, const NodeArgs& args) {
  int64_t r = 0;
  KILN_CHECK(!__builtin_add_overflow(a, b, &r), InvalidInput, "integer overflow in node '", args.node().name(), "'");
  return r;
}

int64_t checked_sub(int64_t a, int64_t b, const NodeArgs& args) {
  int64_t r = 0;
  KILN_CHECK(!__builtin_sub_overflow(a, b, &r), InvalidInput, "integer overflow in node '", args.node().name(), "'");
  return r;
}

int64_t checked_mul(int64_t a, int64_t b, const NodeArgs& args) {
  int64_t r = 0;
  KILN_CHECK(!__builtin_mul_overflow(a, b, &r), InvalidInput, "integer overflow in node '", args.node().name(), "'");
  return r;
}

int64_t floor_div(int64_t a, int64_t b, const NodeArgs& args) {
  KILN_CHECK(b != 0, InvalidInput, "integer division by zero in node '", args.node().name(), "'");
  KILN_CHECK(!(a == std::numeric_limits<int64_t>::min() && b == -1), InvalidInput, "integer overflow in node '",
             args.node().name(), "'");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t py_mod_int(int64_t a, int64_t b, const NodeArgs& args) {
  KILN_CHECK(b != 0, InvalidInput, "integer modulo by zero in node '", args.node().name(), "'");
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

template <typename IntOp, typename FloatOp>
Values binary(const NodeArgs& args, IntOp int_op, FloatOp float_op) {
  Number a = to_number(args.value(size_t{0}), args);
  Number b = to_number(args.value(size_t{1}), args);
  if (a.is_int && b.is_int) return {c10::IValue(int_op(a.i, b.i))};
  return {c10::IValue(float_op(a.as_double(), b.as_double()))};
}

template <typename Cmp>
Values compare(const NodeArgs& args, Cmp cmp) {
  Number a = to_number(args.value(size_t{0}), args);
  Number b = to_number(args.value(size_t{1}), args);
  bool result = (a.is_int && b.is_int) ? cmp(a.i, b.i) : cmp(a.as_double(), b.as_double());
  return {c10::IValue(result)};
}

bool truthy(const c10::IValue& v, const NodeArgs& args) {
  Number n = to_number(v, args);
  return n.is_int ? n.i != 0 : n.f != 0.0;
}

int64_t normalize_dim(int64_t dim, int64_t rank, const NodeArgs& args) {
  int64_t d = dim < 0 ? dim + rank : dim;
  KILN_CHECK(d >= 0 && d < std::max<int64_t>(rank, 1), InvalidInput, "dimension ", dim, " out of range for rank ",
             rank, " in node '", args.node().name(), "'");
  return d;
}

// The tensor argument of a metadata query: "self" for aten ops, else the first argument.
at::Tensor subject(const NodeArgs& args) {
  if (args.has("self")) return args.tensor("self");
  c10::IValue v = args.value(size_t{0});
  KILN_CHECK(v.isTensor(), InvalidInput, "node '", args.node().name(), "' expects a tensor argument");
  return v.toTensor();
}

}  // namespace

Values py_add(const NodeArgs& args) {
  return binary(args, [&](int64_t a, int64_t b) { return checked_add(a, b, args); },
                [](double a, double b) { return a + b; });
}
Values py_sub(const NodeArgs& args) {
  return binary(args, [&](int64_t a, int64_t b) { return checked_sub(a, b, args); },
                [](double a, double b) { return a - b; });
}
Values py_mul(const NodeArgs& args) {
  return binary(args, [&](int64_t a, int64_t b) { return checked_mul(a, b, args); },
                [](double a, double b) { return a * b; });
}
Values py_truediv(const NodeArgs& args) {
  Number a = to_number(args.value(size_t{0}), args);
  Number b = to_number(args.value(size_t{1}), args);
  KILN_CHECK(b.as_double() != 0.0, InvalidInput, "division by zero in node '", args.node().name(), "'");
  return {c10::IValue(a.as_double() / b.as_double())};
}
Values py_floordiv(const NodeArgs& args) {
  return binary(args, [&](int64_t a, int64_t b) { return floor_div(a, b, args); },
                [&](double a, double b) {
                  KILN_CHECK(b != 0.0, InvalidInput, "division by zero in node '", args.node().name(), "'");
                  return std::floor(a / b);
                });
}
Values py_mod(const NodeArgs& args) {
  return binary(args, [&](int64_t a, int64_t b) { return py_mod_int(a, b, args); },
                [&](double a, double b) {
                  KILN_CHECK(b != 0.0, InvalidInput, "modulo by zero in node '", args.node().name(), "'");
                  return a - std::floor(a / b) * b;
                });
}
Values py_pow(const NodeArgs& args) {
  Number a = to_number(args.value(size_t{0}), args);
  Number b = to_number(args.value(size_t{1}), args);
  if (a.is_int && b.is_int && b.i >= 0) {
    int64_t result = 1;
    for (int64_t k = 0; k < b.i; ++k) {
      KILN_CHECK(!__builtin_mul_overflow(result, a.i, &result), InvalidInput, "integer overflow in node '",
                 args.node().name(), "'");
      if (result == 0 || result == 1) break;
    }
    return {c10::IValue(result)};
  }
  return {c10::IValue(std::pow(a.as_double(), b.as_double()))};
}
Values py_neg(const NodeArgs& args) {
  Number a = to_number(args.value(size_t{0}), args);
  if (a.is_int) {
    KILN_CHECK(a.i != std::numeric_limits<int64_t>::min(), InvalidInput, "integer overflow in node '",
               args.node().name(), "'");
    return {c10::IValue(-a.i)};
  }
  return {c10::IValue(-a.f)};
}
Values py_eq(const NodeArgs& args) { return compare(args, [](auto a, auto b) { return a == b; }); }
Values py_ne(const NodeArgs& args) { return compare(args, [](auto a, auto b) { return a != b; }); }
Values py_lt(const NodeArgs& args) { return compare(args, [](auto a, auto b) { return a < b; }); }
Values py_le(const NodeArgs& args) { return compare(args, [](auto a, auto b) { return a <= b; }); }
Values py_gt(const NodeArgs& args) { return compare(args, [](auto a, auto b) { return a > b; }); }
Values py_ge(const NodeArgs& args) { return compare(args, [](auto a, auto b) { return a >= b; }); }
Values py_and(const NodeArgs& args) {
  return {c10::IValue(truthy(args.value(size_t{0}), args) && truthy(args.value(size_t{1}), args))};
}
Values py_or(const NodeArgs& args) {
  return {c10::IValue(truthy(args.value(size_t{0}), args) || truthy(args.value(size_t{1}), args))};
}
Values py_not(const NodeArgs& args) { return {c10::IValue(!truthy(args.value(size_t{0}), args))}; }

Values py_getitem(const NodeArgs& args) {
  c10::IValue container = args.value(size_t{0});
  Number index = to_number(args.value(size_t{1}), args);
  KILN_CHECK(index.is_int, InvalidInput, "getitem index must be an int in node '", args.node().name(), "'");
  std::vector<c10::IValue> items;
  if (container.isList()) {
    for (const c10::IValue& item : container.toListRef()) items.push_back(item);
  } else if (container.isTuple()) {
    for (const c10::IValue& item : container.toTupleRef().elements()) items.push_back(item);
  } else if (container.isTensor()) {
    const at::Tensor& t = container.toTensor();
    KILN_CHECK(t.dim() > 0, InvalidInput, "getitem on a 0-d tensor in node '", args.node().name(), "'");
    return {c10::IValue(t.select(0, index.i))};
  } else {
    KILN_FAIL(InvalidInput, "getitem on a ", container.tagKind(), " in node '", args.node().name(), "'");
  }
  int64_t n = static_cast<int64_t>(items.size());
  int64_t i = index.i < 0 ? index.i + n : index.i;
  KILN_CHECK(i >= 0 && i < n, InvalidInput, "getitem index ", index.i, " out of range for ", n, " items in node '",
             args.node().name(), "'");
  return {items[static_cast<size_t>(i)]};
}

Values py_ceil(const NodeArgs& args) {
  Number a = to_number(args.value(size_t{0}), args);
  return {c10::IValue(a.is_int ? a.i : static_cast<int64_t>(std::ceil(a.f)))};
}
Values py_floor(const NodeArgs& args) {
  Number a = to_number(args.value(size_t{0}), args);
  return {c10::IValue(a.is_int ? a.i : static_cast<int64_t>(std::floor(a.f)))};
}
Values py_trunc(const NodeArgs& args) {
  Number a = to_number(args.value(size_t{0}), args);
  return {c10::IValue(a.is_int ? a.i : static_cast<int64_t>(std::trunc(a.f)))};
}
Values py_sqrt(const NodeArgs& args) {
  return {c10::IValue(std::sqrt(to_number(args.value(size_t{0}), args).as_double()))};
}
Values sym_float(const NodeArgs& args) {
  return {c10::IValue(to_number(args.value(size_t{0}), args).as_double())};
}
Values sym_int(const NodeArgs& args) { return py_trunc(args); }
Values sym_max(const NodeArgs& args) {
  return binary(args, [](int64_t a, int64_t b) { return std::max(a, b); },
                [](double a, double b) { return std::max(a, b); });
}
Values sym_min(const NodeArgs& args) {
  return binary(args, [](int64_t a, int64_t b) { return std::min(a, b); },
                [](double a, double b) { return std::min(a, b); });
}
Values sym_ite(const NodeArgs& args) {
  return {truthy(args.value(size_t{0}), args) ? args.value(size_t{1}) : args.value(size_t{2})};
}

Values sym_size_int(const NodeArgs& args) {
  at::Tensor t = subject(args);
  int64_t dim = args.has("dim") ? args.int_("dim") : to_number(args.value(size_t{1}), args).i;
  return {c10::IValue(t.size(normalize_dim(dim, t.dim(), args)))};
}
Values sym_size_default(const NodeArgs& args) {
  at::Tensor t = subject(args);
  return {c10::IValue(c10::List<int64_t>(t.sizes()))};
}
Values sym_stride_int(const NodeArgs& args) {
  at::Tensor t = subject(args);
  int64_t dim = args.has("dim") ? args.int_("dim") : to_number(args.value(size_t{1}), args).i;
  return {c10::IValue(t.stride(normalize_dim(dim, t.dim(), args)))};
}
Values sym_numel(const NodeArgs& args) { return {c10::IValue(subject(args).numel())}; }
Values sym_storage_offset(const NodeArgs& args) { return {c10::IValue(subject(args).storage_offset())}; }

Values assert_scalar(const NodeArgs& args) {
  c10::IValue cond = args.has("self") ? args.value(std::string("self")) : args.value(size_t{0});
  std::string msg = args.string_or("assert_msg", "runtime assertion");
  KILN_CHECK(truthy(cond, args), InvalidInput, "assertion failed in node '", args.node().name(), "': ", msg);
  return {};
}

Values assert_async(const NodeArgs& args) {
  at::Tensor t = subject(args);
  std::string msg = args.string_or("assert_msg", "runtime assertion");
  KILN_CHECK(t.numel() == 1, InvalidInput, "assertion on a tensor of ", t.numel(), " elements in node '",
             args.node().name(), "'");
  KILN_CHECK(t.item<double>() != 0.0, InvalidInput, "assertion failed in node '", args.node().name(), "': ", msg);
  return {};
}

Values functional_assert_async(const NodeArgs& args) {
  assert_async(args);
  return {c10::IValue(at::empty({0}))};
}

Values assert_tensor_metadata(const NodeArgs& args) {
  // Only the dtype is checked: sizes and strides were recorded for the export-time example and legitimately
  // differ for other values of dynamic dimensions.
  at::Tensor t = args.has("a") ? args.tensor("a") : subject(args);
  c10::IValue dtype = args.value(std::string("dtype"));
  if (dtype.isInt()) {
    auto expected = static_cast<c10::ScalarType>(dtype.toInt());
    KILN_CHECK(t.scalar_type() == expected, InvalidInput, "tensor metadata assertion failed in node '",
               args.node().name(), "': dtype is ", c10::toString(t.scalar_type()), ", expected ",
               c10::toString(expected));
  }
  return {};
}

Values sym_constrain_range(const NodeArgs& args) {
  c10::IValue v = args.has("size") ? args.value(std::string("size")) : args.value(size_t{0});
  Number n = to_number(v, args);
  if (n.is_int) {
    c10::IValue lo = args.value(std::string("min"));
    c10::IValue hi = args.value(std::string("max"));
    KILN_CHECK(!lo.isInt() || n.i >= lo.toInt(), InvalidInput, "value ", n.i, " below its constrained minimum ",
               lo.isInt() ? lo.toInt() : 0, " in node '", args.node().name(), "'");
    KILN_CHECK(!hi.isInt() || n.i <= hi.toInt(), InvalidInput, "value ", n.i, " above its constrained maximum ",
               hi.isInt() ? hi.toInt() : 0, " in node '", args.node().name(), "'");
  }
  return {};
}

Values functional_sym_constrain_range(const NodeArgs& args) {
  sym_constrain_range(args);
  return {c10::IValue(at::empty({0}))};
}

}  // namespace kiln::runtime
