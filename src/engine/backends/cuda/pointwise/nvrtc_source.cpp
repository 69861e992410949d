// Source generation of the NVRTC pointwise kernels (see nvrtc_source.h). The device formulas repeat those of
// the generic interpreter (pointwise_ops.cuh) expression for expression: same operations in the same order,
// same constants (written T(decimal) as there), so the compiler rounds and contracts them alike. Between
// instructions an empty asm keeps each result opaque: the interpreter never fuses a multiply of one
// instruction into an add of the next, and neither may the compiled chain.

#include "engine/backends/cuda/pointwise/nvrtc_source.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <sstream>

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/pointwise/pointwise_launch.h"
#include "engine/backends/follow_channels_last.h"

namespace kiln::engine::cuda {
namespace {

struct TypeNames {
  const char* tag;      // suffix of the generated helpers
  const char* storage;  // element type in memory
};

TypeNames type_names(DType dt) {
  switch (dt) {
    case DType::Float32: return {"f32", "float"};
    case DType::Float16: return {"f16", "unsigned short"};
    case DType::BFloat16: return {"bf16", "unsigned short"};
    case DType::Float64: return {"f64", "double"};
    case DType::Int64: return {"i64", "long long"};
    case DType::Int32: return {"i32", "int"};
    case DType::Int16: return {"i16", "short"};
    case DType::Int8: return {"i8", "signed char"};
    case DType::UInt8: return {"u8", "unsigned char"};
    default: return {"b8", "unsigned char"};
  }
}

// Conversions between T and each element type, as load_as/store_as in device_util.cuh do: floats round to
// nearest, integers truncate toward zero (NaN gives 0), Bool is v != 0. fp16/bf16 through float.
std::string type_helpers(DType dt) {
  TypeNames t = type_names(dt);
  std::string cv, to;
  switch (dt) {
    case DType::Float16:
      cv = "(T)f16_to_f32(x)";
      to = "f32_to_f16((float)v)";
      break;
    case DType::BFloat16:
      cv = "(T)bf16_to_f32(x)";
      to = "f32_to_bf16((float)v)";
      break;
    case DType::Float32:
      cv = "(T)x";
      to = "(float)v";
      break;
    case DType::Float64:
      cv = "(T)x";
      to = "(double)v";
      break;
    case DType::Bool:
      cv = "x ? T(1) : T(0)";
      to = "v != T(0) ? 1 : 0";
      break;
    default:
      cv = "(T)x";
      to = std::string("(") + t.storage + ")k_int(v)";
      break;
  }
  std::ostringstream s;
  s << "KILN_INLINE T cv_" << t.tag << "(" << t.storage << " x) { return " << cv << "; }\n"
    << "KILN_INLINE " << t.storage << " to_" << t.tag << "(T v) { return " << to << "; }\n"
    << "KILN_INLINE T ld_" << t.tag << "(const void* p, I i) { return cv_" << t.tag << "(((const "
    << t.storage << "*)p)[i]); }\n"
    << "KILN_INLINE void st_" << t.tag << "(void* p, I i, T v) { ((" << t.storage << "*)p)[i] = to_" << t.tag
    << "(v); }\n"
    << "struct alignas(" << 4 * dtype_size(dt) << ") v4_" << t.tag << " { " << t.storage << " v[4]; };\n";
  return s.str();
}

// Everything that does not depend on the layer: conversions and the formulas of every operation.
constexpr const char* kPrelude = R"(#define KILN_INLINE __device__ __forceinline__
struct Args {
  const void* src[8];
  void* out;
  long long n;
  long long d[8];
  long long st[8][8];
  long long div[8];
  long long len[8];
};
KILN_INLINE float f16_to_f32(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
KILN_INLINE unsigned short f32_to_f16(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
KILN_INLINE float bf16_to_f32(unsigned short h) { return __uint_as_float(((unsigned int)h) << 16); }
KILN_INLINE unsigned short f32_to_bf16(float f) {
#if __CUDA_ARCH__ >= 800
  unsigned short h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
#else
  unsigned int u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fff;
  u += 0x7fffu + ((u >> 16) & 1u);
  return (unsigned short)(u >> 16);
#endif
}
#define KNAN ((T)__int_as_float(0x7fc00000))
#define KINF ((T)__int_as_float(0x7f800000))
KILN_INLINE long long k_int(T v) { return v == v ? (long long)v : 0; }
KILN_INLINE T k_clamp(T x, T lo, T hi) { return x < lo ? lo : (x > hi ? hi : x); }
KILN_INLINE bool k_isnan(T x) { return x != x; }
KILN_INLINE T e_div_int(T a, T b) { return b == T(0) ? T(0) : KM(trunc)(a / b); }
KILN_INLINE T e_truncdiv(T a, T b) { return KM(trunc)(a / b); }
KILN_INLINE T e_truncdiv_int(T a, T b) { return b == T(0) ? T(0) : KM(trunc)(a / b); }
KILN_INLINE T e_floordiv(T a, T b) { return KM(floor)(a / b); }
KILN_INLINE T e_floordiv_int(T a, T b) { return b == T(0) ? T(0) : KM(floor)(a / b); }
KILN_INLINE T e_mod(T a, T b) {
  T r = KM(fmod)(a, b);
  if (r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;
  return r;
}
KILN_INLINE T e_mod_int(T a, T b) { return b == T(0) ? T(0) : e_mod(a, b); }
KILN_INLINE T e_max(T a, T b) { return (k_isnan(a) || k_isnan(b)) ? KNAN : (a > b ? a : b); }
KILN_INLINE T e_min(T a, T b) { return (k_isnan(a) || k_isnan(b)) ? KNAN : (a < b ? a : b); }
KILN_INLINE T a_relu(T x, T, T) { return x < T(0) ? T(0) : x; }
KILN_INLINE T a_sigmoid(T x, T, T) { return T(1) / (T(1) + KM(exp)(-x)); }
KILN_INLINE T a_tanh(T x, T, T) { return KM(tanh)(x); }
KILN_INLINE T a_gelu_erf(T x, T, T) { return T(0.5) * x * (T(1) + KM(erf)(x * T(0.70710678118654752))); }
KILN_INLINE T a_gelu_tanh(T x, T, T) {
  return T(0.5) * x * (T(1) + KM(tanh)(T(0.79788456080286536) * (x + T(0.044715) * x * x * x)));
}
KILN_INLINE T a_silu(T x, T, T) { return x / (T(1) + KM(exp)(-x)); }
KILN_INLINE T a_hard_swish(T x, T, T) { return x * k_clamp(x + T(3), T(0), T(6)) / T(6); }
KILN_INLINE T a_hard_sigmoid(T x, T alpha, T beta) { return k_clamp(alpha * x + beta, T(0), T(1)); }
KILN_INLINE T a_leaky_relu(T x, T alpha, T) { return x >= T(0) ? x : alpha * x; }
KILN_INLINE T a_elu(T x, T alpha, T) { return x > T(0) ? x : alpha * (KM(exp)(x) - T(1)); }
KILN_INLINE T a_selu(T x, T, T) {
  return T(1.0507009873554805) * (x > T(0) ? x : T(1.6732632423543772) * (KM(exp)(x) - T(1)));
}
KILN_INLINE T a_softplus(T x, T alpha, T beta) {
  T b = beta == T(0) ? T(1) : beta, threshold = alpha == T(0) ? T(20) : alpha;
  return b * x > threshold ? x : KM(log1p)(KM(exp)(b * x)) / b;
}
KILN_INLINE T a_softsign(T x, T, T) { return x / (T(1) + KM(fabs)(x)); }
KILN_INLINE T a_clip(T x, T alpha, T beta) { return x < alpha ? alpha : (x > beta ? beta : x); }
KILN_INLINE T a_mish(T x, T, T) { return x * KM(tanh)(KM(log1p)(KM(exp)(x))); }
)";

// Per ElementwiseOp: the expression over A and B (integer programs use the *_int variants where they differ).
std::string elementwise_expr(int op, bool integral, const std::string& a, const std::string& b) {
  auto call = [&](const char* f) { return std::string(f) + "(" + a + ", " + b + ")"; };
  auto boolean = [&](const std::string& e) { return "((" + e + ") ? T(1) : T(0))"; };
  switch (static_cast<ElementwiseOp>(op)) {
    case ElementwiseOp::Add: return "(" + a + " + " + b + ")";
    case ElementwiseOp::Sub: return "(" + a + " - " + b + ")";
    case ElementwiseOp::Mul: return "(" + a + " * " + b + ")";
    case ElementwiseOp::Div: return integral ? call("e_div_int") : "(" + a + " / " + b + ")";
    case ElementwiseOp::FloorDiv: return call(integral ? "e_floordiv_int" : "e_floordiv");
    case ElementwiseOp::TruncDiv: return call(integral ? "e_truncdiv_int" : "e_truncdiv");
    case ElementwiseOp::Mod: return call(integral ? "e_mod_int" : "e_mod");
    case ElementwiseOp::Pow: return call("KM(pow)");
    case ElementwiseOp::Max: return call("e_max");
    case ElementwiseOp::Min: return call("e_min");
    case ElementwiseOp::Equal: return boolean(a + " == " + b);
    case ElementwiseOp::NotEqual: return boolean(a + " != " + b);
    case ElementwiseOp::Less: return boolean(a + " < " + b);
    case ElementwiseOp::LessEqual: return boolean(a + " <= " + b);
    case ElementwiseOp::Greater: return boolean(a + " > " + b);
    case ElementwiseOp::GreaterEqual: return boolean(a + " >= " + b);
    case ElementwiseOp::And: return boolean("(" + a + " != T(0)) && (" + b + " != T(0))");
    case ElementwiseOp::Or: return boolean("(" + a + " != T(0)) || (" + b + " != T(0))");
    default: return boolean("(" + a + " != T(0)) != (" + b + " != T(0))");
  }
}

const char* activation_function(int kind) {
  static const char* const kNames[] = {"a_relu",       "a_sigmoid", "a_tanh",       "a_gelu_erf",
                                       "a_gelu_tanh",  "a_silu",    "a_hard_swish", "a_hard_sigmoid",
                                       "a_leaky_relu", "a_elu",     "a_selu",       "a_softplus",
                                       "a_softsign",   "a_clip",    "a_mish"};
  KILN_CHECK(kind >= 0 && kind < static_cast<int>(std::size(kNames)), Unsupported,
             "nvrtc pointwise: activation ", kind);
  return kNames[kind];
}

std::string unary_expr(int op, const std::string& x) {
  auto m = [&](const char* f) { return std::string("KM(") + f + ")(" + x + ")"; };
  switch (static_cast<UnaryOp>(op)) {
    case UnaryOp::Exp: return m("exp");
    case UnaryOp::Log: return m("log");
    case UnaryOp::Sqrt: return m("sqrt");
    case UnaryOp::Rsqrt: return "(T(1) / " + m("sqrt") + ")";
    case UnaryOp::Abs: return m("fabs");
    case UnaryOp::Neg: return "(-" + x + ")";
    case UnaryOp::Recip: return "(T(1) / " + x + ")";
    case UnaryOp::Erf: return m("erf");
    case UnaryOp::Sin: return m("sin");
    case UnaryOp::Cos: return m("cos");
    case UnaryOp::Tan: return m("tan");
    case UnaryOp::Asin: return m("asin");
    case UnaryOp::Acos: return m("acos");
    case UnaryOp::Atan: return m("atan");
    case UnaryOp::Sinh: return m("sinh");
    case UnaryOp::Cosh: return m("cosh");
    case UnaryOp::Floor: return m("floor");
    case UnaryOp::Ceil: return m("ceil");
    case UnaryOp::Round: return m("rint");  // half to even
    case UnaryOp::Sign: return "(" + x + " > T(0) ? T(1) : (" + x + " < T(0) ? T(-1) : T(0)))";
    case UnaryOp::Not: return "(" + x + " == T(0) ? T(1) : T(0))";
    case UnaryOp::Expm1: return m("expm1");
    case UnaryOp::Log1p: return m("log1p");
    case UnaryOp::IsNan: return "(k_isnan(" + x + ") ? T(1) : T(0))";
    default: return "(" + m("fabs") + " == KINF ? T(1) : T(0))";
  }
}

/// A float parameter exactly (its bits), as the interpreter's T(float) conversion sees it.
std::string float_literal(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "T(__int_as_float(0x%08x))", bits);
  return buf;
}

std::string operand(int r) {
  return r >= kPwTemp ? "t" + std::to_string(r - kPwTemp) : "s" + std::to_string(r);
}

bool all_static(const Dims& min, const Dims& max) {
  if (min != max) return false;
  for (int64_t x : max) {
    if (x < 0) return false;
  }
  return true;
}

}  // namespace

const char* pw_index_mode_name(PwIndexMode mode) {
  switch (mode) {
    case PwIndexMode::Full: return "full";
    case PwIndexMode::Scalar: return "scalar";
    case PwIndexMode::Inner: return "inner";
    case PwIndexMode::Outer: return "outer";
    case PwIndexMode::Channel: return "channel";
    case PwIndexMode::OuterInner: return "outer_inner";
    default: return "general";
  }
}

PwIndex pw_index(const Dims& src, const Dims& out) {
  PwIndex r;
  if (src.size() > out.size()) return r;
  if (numel(src) == 1) {
    r.mode = PwIndexMode::Scalar;
    return r;
  }
  size_t rank = out.size(), k0 = rank - src.size();
  int first = -1, last = -1;
  bool broadcast = false;
  std::vector<int> kind(rank, 0);  // 0: out dim 1 (either), 1: kept, 2: broadcast
  for (size_t k = 0; k < rank; ++k) {
    int64_t s = k < k0 ? 1 : src[k - k0];
    if (out[k] == 1) {
      if (s != 1) return r;
      continue;
    }
    if (s == out[k]) {
      kind[k] = 1;
      if (first < 0) first = static_cast<int>(k);
      last = static_cast<int>(k);
    } else if (s == 1) {
      kind[k] = 2;
      broadcast = true;
    } else {
      return r;
    }
  }
  if (!broadcast) {
    r.mode = PwIndexMode::Full;
    return r;
  }
  for (int k = first; k <= last; ++k) {
    if (kind[k] != 2) continue;
    // Kept dims in two runs: OuterInner when they are the output's leading and trailing dims (no broadcast
    // before the first run or after the second) around one broadcast run.
    int k1 = k, k2 = k;  // the broadcast run [k1, k2)
    while (k2 <= last && kind[k2] != 1) ++k2;
    for (int j = 0; j < first; ++j) {
      if (kind[j] == 2) return r;
    }
    for (int j = k2; j <= last; ++j) {
      if (kind[j] == 2) return r;
    }
    for (size_t j = last + 1; j < rank; ++j) {
      if (kind[j] == 2) return r;
    }
    r.div = r.len = 1;
    for (size_t j = k1; j < rank; ++j) r.div *= out[j];
    for (size_t j = k2; j < rank; ++j) r.len *= out[j];
    r.mode = PwIndexMode::OuterInner;
    return r;
  }
  int64_t before = 1;
  r.div = 1;
  r.len = 1;
  for (int k = 0; k < first; ++k) before *= out[k];
  for (int k = first; k <= last; ++k) r.len *= out[k];
  for (size_t k = last + 1; k < rank; ++k) r.div *= out[k];
  r.mode = r.div == 1 ? PwIndexMode::Inner : before == 1 ? PwIndexMode::Outer : PwIndexMode::Channel;
  return r;
}

NvrtcPwSpec nvrtc_pointwise_spec(const LayerInfo& info) {
  NvrtcPwSpec s;
  s.program = pointwise_program(info);
  const TensorInfo& out = info.outputs[0];
  // Every dim in the order the output's format stores it (follow_channels_last.h): a ChannelsLast layer is
  // the same program over [N, spatial..., C].
  const size_t rank = out.max.size();
  const auto order = [&](const Dims& d, TensorFormat f) {
    return pointwise_operand_dims(d, f, out.format, rank);
  };
  const Dims out_max = order(out.max, out.format), out_opt = order(out.opt, out.format);
  s.rank = static_cast<int>(rank);
  s.index64 = numel(out.max) > (int64_t{1} << 31);
  if (all_static(out.min, out.max)) s.static_out = out_max;
  std::vector<Dims> opt;
  for (const auto& t : info.inputs) {
    s.static_src.push_back(all_static(t.min, t.max) ? order(t.max, t.format) : Dims{});
    opt.push_back(order(t.opt, t.format));
  }
  if (info.kind() == LayerKind::FusedPointwise) {
    for (const auto& w : info.layer->weights) {
      s.static_src.push_back(order(w.value.sizes(), TensorFormat::Plain));
      opt.push_back(order(w.value.sizes(), TensorFormat::Plain));
    }
  }
  s.fast = true;
  s.vec = true;
  for (const Dims& d : opt) {
    PwIndex p = pw_index(d, out_opt);
    s.fast_index.push_back(p);
    s.fast = s.fast && p.mode != PwIndexMode::General;
    s.vec = s.vec && (p.mode == PwIndexMode::Full || p.mode == PwIndexMode::Scalar);
  }
  s.vec = s.vec && s.fast;
  if (!s.fast) s.fast_index.clear();
  return s;
}

std::string nvrtc_pointwise_source(const NvrtcPwSpec& spec) {
  const PwLayerProgram& p = spec.program;
  size_t ns = p.source_dtypes.size();
  bool index_static = !spec.static_out.empty();
  std::ostringstream s;
  s << "// Generated by Kiln for the cuda tactic \"nvrtc\": a pointwise chain of " << p.instr.size()
    << " instructions over " << ns << " sources, rank " << spec.rank << ", computing in "
    << (p.use_double ? "double" : "float") << (p.integral ? " (integer semantics)" : "") << ".\n";
  s << "typedef " << (p.use_double ? "double" : "float") << " T;\n";
  s << "typedef " << (spec.index64 ? "long long" : "unsigned int") << " I;\n";
  s << (p.use_double ? "#define KM(name) name\n" : "#define KM(name) name##f\n");
  s << "#define KILN_KEEP(x) asm volatile(\"\" : \"+" << (p.use_double ? "d" : "f") << "\"(x))\n";
  s << kPrelude;
  std::vector<DType> types;
  for (DType dt : p.source_dtypes) {
    if (std::find(types.begin(), types.end(), dt) == types.end()) types.push_back(dt);
  }
  if (std::find(types.begin(), types.end(), p.out_dtype) == types.end()) types.push_back(p.out_dtype);
  for (DType dt : types) s << type_helpers(dt);

  // The chain.
  s << "KILN_INLINE T chain(";
  for (size_t k = 0; k < ns; ++k) s << (k ? ", " : "") << "T s" << k;
  s << ") {\n";
  for (size_t i = 0; i < p.instr.size(); ++i) {
    const PwInstr& in = p.instr[i];
    std::string a = operand(in.a), b = operand(in.b), c = operand(in.c), e;
    switch (in.kind) {
      case kPwElementwise:
        e = elementwise_expr(in.op, p.integral, a, b);
        s << "  // " << elementwise_op_name(static_cast<ElementwiseOp>(in.op)) << "\n";
        break;
      case kPwActivation:
        e = std::string(activation_function(in.op)) + "(" + a + ", " + float_literal(in.alpha) + ", " +
            float_literal(in.beta) + ")";
        s << "  // " << activation_kind_name(static_cast<ActivationKind>(in.op)) << " alpha=" << in.alpha
          << " beta=" << in.beta << "\n";
        break;
      case kPwUnary:
        e = unary_expr(in.op, a);
        s << "  // " << unary_op_name(static_cast<UnaryOp>(in.op)) << "\n";
        break;
      case kPwSelect: e = "(" + a + " != T(0) ? " + b + " : " + c + ")"; break;
      case kPwScaleAdd: e = "(" + a + " + " + float_literal(in.alpha) + " * " + b + ")"; break;
      default: e = a; break;
    }
    s << "  T t" << i << " = " << e << ";\n  KILN_KEEP(t" << i << ");\n";
  }
  s << "  return " << (p.instr.empty() ? std::string("T(0)") : "t" + std::to_string(p.instr.size() - 1))
    << ";\n}\n";

  auto tag = [&](size_t k) { return std::string(type_names(p.source_dtypes[k]).tag); };
  const std::string out_tag = type_names(p.out_dtype).tag;
  auto lit = [](int64_t v) { return "(I)" + std::to_string(v) + "ll"; };
  std::string n_expr = index_static ? lit(numel(spec.static_out)) : "(I)a.n";
  std::string chain_args;
  for (size_t k = 0; k < ns; ++k) chain_args += (k ? ", s" : "s") + std::to_string(k);
  const char* loop_head =
      "  for (I i = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; i < n; "
      "i += (I)gridDim.x * (I)blockDim.x) {\n";

  // General: per-dim index math.
  s << "extern \"C\" __global__ void __launch_bounds__(256) kiln_pw_general(const Args a) {\n";
  s << "  const I n = " << n_expr << ";\n" << loop_head << "    I rem = i;\n";
  for (size_t k = 0; k < ns; ++k) s << "    I o" << k << " = 0;\n";
  for (int k = spec.rank - 1; k >= 0; --k) {
    std::string dim = index_static ? lit(spec.static_out[k]) : "(I)a.d[" + std::to_string(k) + "]";
    s << "    {\n";
    if (k > 0) {
      s << "      const I x = rem % " << dim << ";\n      rem /= " << dim << ";\n";
    } else {
      s << "      const I x = rem;\n";
    }
    for (size_t j = 0; j < ns; ++j) {
      if (index_static && !spec.static_src[j].empty()) {
        int64_t st[kMaxRank];
        broadcast_strides(spec.static_src[j], spec.static_out, st);
        if (st[k]) s << "      o" << j << " += x * " << lit(st[k]) << ";\n";
      } else {
        s << "      o" << j << " += x * (I)a.st[" << j << "][" << k << "];\n";
      }
    }
    s << "    }\n";
  }
  for (size_t k = 0; k < ns; ++k)
    s << "    const T s" << k << " = ld_" << tag(k) << "(a.src[" << k << "], o" << k << ");\n";
  s << "    st_" << out_tag << "(a.out, i, chain(" << chain_args << "));\n  }\n}\n";

  if (spec.fast) {
    auto src_static = [&](size_t k) { return index_static && !spec.static_src[k].empty(); };
    auto fast_index = [&](size_t k, const std::string& i) -> std::string {
      const PwIndex& f = spec.fast_index[k];
      std::string div = src_static(k) ? lit(f.div) : "(I)a.div[" + std::to_string(k) + "]";
      std::string len = src_static(k) ? lit(f.len) : "(I)a.len[" + std::to_string(k) + "]";
      switch (f.mode) {
        case PwIndexMode::Full: return i;
        case PwIndexMode::Inner: return i + " % " + len;
        case PwIndexMode::Outer: return i + " / " + div;
        case PwIndexMode::OuterInner: return "(" + i + " / " + div + ") * " + len + " + " + i + " % " + len;
        default: return "(" + i + " / " + div + ") % " + len;
      }
    };
    auto scalars = [&]() {
      std::string r;
      for (size_t k = 0; k < ns; ++k) {
        if (spec.fast_index[k].mode != PwIndexMode::Scalar) continue;
        r += "  const T s" + std::to_string(k) + " = ld_" + tag(k) + "(a.src[" + std::to_string(k) +
             "], 0);\n";
      }
      return r;
    };
    s << "extern \"C\" __global__ void __launch_bounds__(256) kiln_pw_fast(const Args a) {\n";
    s << "  const I n = " << n_expr << ";\n" << scalars() << loop_head;
    for (size_t k = 0; k < ns; ++k) {
      if (spec.fast_index[k].mode == PwIndexMode::Scalar) continue;
      s << "    const T s" << k << " = ld_" << tag(k) << "(a.src[" << k << "], " << fast_index(k, "i")
        << ");\n";
    }
    s << "    st_" << out_tag << "(a.out, i, chain(" << chain_args << "));\n  }\n}\n";

    if (spec.vec) {
      s << "extern \"C\" __global__ void __launch_bounds__(256) kiln_pw_vec(const Args a) {\n";
      s << "  const I n = " << n_expr << ";\n  const I groups = (n + 3) / 4;\n" << scalars();
      s << "  for (I g = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x; g < groups; "
           "g += (I)gridDim.x * (I)blockDim.x) {\n";
      s << "    const I base = g * 4;\n    if (base + 4 <= n) {\n";
      for (size_t k = 0; k < ns; ++k) {
        if (spec.fast_index[k].mode == PwIndexMode::Scalar) continue;
        s << "      const v4_" << tag(k) << " v" << k << " = *(const v4_" << tag(k) << "*)((const "
          << type_names(p.source_dtypes[k]).storage << "*)a.src[" << k << "] + base);\n";
      }
      s << "      v4_" << out_tag << " r;\n#pragma unroll\n      for (int j = 0; j < 4; ++j) {\n";
      for (size_t k = 0; k < ns; ++k) {
        if (spec.fast_index[k].mode == PwIndexMode::Scalar) continue;
        s << "        const T s" << k << " = cv_" << tag(k) << "(v" << k << ".v[j]);\n";
      }
      s << "        r.v[j] = to_" << out_tag << "(chain(" << chain_args << "));\n      }\n";
      s << "      *(v4_" << out_tag << "*)((" << type_names(p.out_dtype).storage << "*)a.out + base) = r;\n";
      s << "    } else {\n      for (I i = base; i < n; ++i) {\n";
      for (size_t k = 0; k < ns; ++k) {
        if (spec.fast_index[k].mode == PwIndexMode::Scalar) continue;
        s << "        const T s" << k << " = ld_" << tag(k) << "(a.src[" << k << "], i);\n";
      }
      s << "        st_" << out_tag << "(a.out, i, chain(" << chain_args << "));\n      }\n    }\n  }\n}\n";
    }
  }
  return s.str();
}

namespace {
constexpr char kPlanDataMagic[8] = {'K', 'N', 'V', 'R', 'T', 'C', '0', '1'};

void put_u64(std::vector<uint8_t>& b, uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
}  // namespace

std::vector<uint8_t> encode_nvrtc_plan_data(const NvrtcPlanData& d) {
  std::vector<uint8_t> b(kPlanDataMagic, kPlanDataMagic + 8);
  put_u64(b, static_cast<uint64_t>(d.arch));
  put_u64(b, d.source.size());
  b.insert(b.end(), d.source.begin(), d.source.end());
  put_u64(b, d.cubin.size());
  b.insert(b.end(), d.cubin.begin(), d.cubin.end());
  return b;
}

NvrtcPlanData decode_nvrtc_plan_data(const std::vector<uint8_t>& b, const std::string& layer) {
  size_t pos = 0;
  auto take = [&](size_t n, const char* what) {
    KILN_CHECK(n <= b.size() - pos, InvalidInput, "plan file: nvrtc kernel data of layer '", layer,
               "' is truncated reading ", what);
    const uint8_t* r = b.data() + pos;
    pos += n;
    return r;
  };
  auto u64 = [&](const char* what) {
    const uint8_t* p = take(8, what);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
    return v;
  };
  KILN_CHECK(b.size() >= 8 && std::memcmp(b.data(), kPlanDataMagic, 8) == 0, InvalidInput,
             "plan file: the kernel data of layer '", layer, "' is not nvrtc device code");
  pos = 8;
  NvrtcPlanData d;
  uint64_t arch = u64("architecture");
  KILN_CHECK(arch > 0 && arch < 10000, InvalidInput, "plan file: nvrtc kernel data of layer '", layer,
             "' has a bad architecture ", arch);
  d.arch = static_cast<int>(arch);
  uint64_t n = u64("source size");
  const uint8_t* src = take(n, "source");
  d.source.assign(reinterpret_cast<const char*>(src), n);
  n = u64("device code size");
  KILN_CHECK(n > 0, InvalidInput, "plan file: nvrtc kernel data of layer '", layer, "' has no device code");
  const uint8_t* code = take(n, "device code");
  d.cubin.assign(code, code + n);
  KILN_CHECK(pos == b.size(), InvalidInput, "plan file: nvrtc kernel data of layer '", layer, "' has ",
             b.size() - pos, " trailing bytes");
  return d;
}

}  // namespace kiln::engine::cuda
