// Vectorized fp32 pointwise kernels: FusedPointwise programs, and single Activation / Elementwise layers
// run as one-instruction programs. The output is processed in blocks of about kBlock elements; each
// instruction runs as one vectorizable loop over the block, so a chain of N operations reads its inputs once
// and never writes intermediates to memory. A broadcast operand is filled per run of equal values
// ([N, C, 1, 1] over [N, C, H, W], scalars), read tiled over a block or copied per period ([C] over [.., C],
// a squeeze-excite scale of a channels-last tensor) or else gathered through offsets cached per output
// shape; pow by a scalar 2, 3, 0.5, -1 or 1 runs as multiplies (GPT-2's tanh GELU cubes its input: std::pow
// per element took half of GPT-2's time).

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <string>

#include "engine/backends/cpu/fast_kernels.h"
#include "engine/backends/cpu/vec_math.h"
#include "engine/backends/follow_channels_last.h"
#include "engine/ops/common.h"
#include "kiln/support/error.h"
#include "kiln/support/host_tensor.h"

namespace kiln::engine::cpu::fast {
namespace {

constexpr int64_t kBlock = 512;

bool activation_ok(ActivationKind) { return true; }

bool unary_ok(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp:
    case UnaryOp::Log:
    case UnaryOp::Sqrt:
    case UnaryOp::Rsqrt:
    case UnaryOp::Abs:
    case UnaryOp::Neg:
    case UnaryOp::Recip:
    case UnaryOp::Erf:
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Expm1:
    case UnaryOp::Log1p:
    case UnaryOp::Sin:
    case UnaryOp::Cos: return true;
    default: return false;
  }
}

bool elementwise_ok(ElementwiseOp op) {
  switch (op) {
    case ElementwiseOp::Add:
    case ElementwiseOp::Sub:
    case ElementwiseOp::Mul:
    case ElementwiseOp::Div:
    case ElementwiseOp::Pow:
    case ElementwiseOp::Max:
    case ElementwiseOp::Min: return true;
    default: return false;
  }
}

KILN_SIMD_CLONES
void run_activation(const ActivationParams& p, const float* x, float* y, int64_t n) {
  float alpha = static_cast<float>(p.alpha), beta = static_cast<float>(p.beta);
  switch (p.kind) {
    case ActivationKind::Relu:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] < 0 ? 0.0f : x[i];  // NaN propagates, as torch.relu
      return;
    case ActivationKind::Sigmoid:
      for (int64_t i = 0; i < n; ++i) y[i] = vec::sigmoid(x[i]);
      return;
    case ActivationKind::Tanh:
      for (int64_t i = 0; i < n; ++i) y[i] = vec::tanh(x[i]);
      return;
    case ActivationKind::GeluErf:
      for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + vec::erf(x[i] * 0.70710678118654752f));
      return;
    case ActivationKind::GeluTanh:
      for (int64_t i = 0; i < n; ++i) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + vec::tanh(0.79788456080286536f * (v + 0.044715f * v * v * v)));
      }
      return;
    case ActivationKind::Silu:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] * vec::sigmoid(x[i]);
      return;
    case ActivationKind::HardSwish:
      for (int64_t i = 0; i < n; ++i) {
        float t = x[i] + 3.0f;
        t = t < 0 ? 0.0f : (t > 6.0f ? 6.0f : t);
        y[i] = x[i] * t / 6.0f;
      }
      return;
    case ActivationKind::HardSigmoid:
      for (int64_t i = 0; i < n; ++i) {
        float t = alpha * x[i] + beta;
        y[i] = t < 0 ? 0.0f : (t > 1.0f ? 1.0f : t);
      }
      return;
    case ActivationKind::LeakyRelu:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] >= 0 ? x[i] : alpha * x[i];
      return;
    case ActivationKind::Elu:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : alpha * (vec::exp(x[i]) - 1.0f);
      return;
    case ActivationKind::Selu:
      for (int64_t i = 0; i < n; ++i)
        y[i] = 1.0507009873554805f * (x[i] > 0 ? x[i] : 1.6732632423543772f * (vec::exp(x[i]) - 1.0f));
      return;
    case ActivationKind::Clip:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] < alpha ? alpha : (x[i] > beta ? beta : x[i]);
      return;
    case ActivationKind::Softsign:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::fabs(x[i]));
      return;
    case ActivationKind::Softplus: {
      float b = p.beta == 0 ? 1.0f : beta, th = p.alpha == 0 ? 20.0f : alpha;
      for (int64_t i = 0; i < n; ++i) y[i] = b * x[i] > th ? x[i] : std::log1p(std::exp(b * x[i])) / b;
      return;
    }
    case ActivationKind::Mish:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] * std::tanh(std::log1p(std::exp(x[i])));
      return;
  }
}

KILN_SIMD_CLONES
void run_unary(UnaryOp op, const float* x, float* y, int64_t n) {
  switch (op) {
    case UnaryOp::Exp:
      for (int64_t i = 0; i < n; ++i) y[i] = vec::exp(x[i]);
      return;
    case UnaryOp::Sqrt:
      for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(x[i]);
      return;
    case UnaryOp::Rsqrt:
      for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / std::sqrt(x[i]);
      return;
    case UnaryOp::Abs:
      for (int64_t i = 0; i < n; ++i) y[i] = std::fabs(x[i]);
      return;
    case UnaryOp::Neg:
      for (int64_t i = 0; i < n; ++i) y[i] = -x[i];
      return;
    case UnaryOp::Recip:
      for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / x[i];
      return;
    case UnaryOp::Erf:
      for (int64_t i = 0; i < n; ++i) y[i] = vec::erf(x[i]);
      return;
    case UnaryOp::Floor:
      for (int64_t i = 0; i < n; ++i) y[i] = std::floor(x[i]);
      return;
    case UnaryOp::Ceil:
      for (int64_t i = 0; i < n; ++i) y[i] = std::ceil(x[i]);
      return;
    case UnaryOp::Log:
      for (int64_t i = 0; i < n; ++i) y[i] = std::log(x[i]);
      return;
    case UnaryOp::Expm1:
      for (int64_t i = 0; i < n; ++i) y[i] = std::expm1(x[i]);
      return;
    case UnaryOp::Log1p:
      for (int64_t i = 0; i < n; ++i) y[i] = std::log1p(x[i]);
      return;
    case UnaryOp::Sin:
      for (int64_t i = 0; i < n; ++i) y[i] = std::sin(x[i]);
      return;
    case UnaryOp::Cos:
      for (int64_t i = 0; i < n; ++i) y[i] = std::cos(x[i]);
      return;
    default: return;
  }
}

KILN_SIMD_CLONES
void run_binary(ElementwiseOp op, const float* a, const float* b, float* y, int64_t n) {
  switch (op) {
    case ElementwiseOp::Add:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
      return;
    case ElementwiseOp::Sub:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] - b[i];
      return;
    case ElementwiseOp::Mul:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
      return;
    case ElementwiseOp::Div:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] / b[i];
      return;
    case ElementwiseOp::Pow:
      for (int64_t i = 0; i < n; ++i) y[i] = std::pow(a[i], b[i]);
      return;
    case ElementwiseOp::Max:
      for (int64_t i = 0; i < n; ++i)
        y[i] = (a[i] != a[i] || b[i] != b[i]) ? NAN : (a[i] > b[i] ? a[i] : b[i]);
      return;
    case ElementwiseOp::Min:
      for (int64_t i = 0; i < n; ++i)
        y[i] = (a[i] != a[i] || b[i] != b[i]) ? NAN : (a[i] < b[i] ? a[i] : b[i]);
      return;
    default: return;
  }
}

/// y = a ** e for the exponents torch also computes without pow; false for any other e.
KILN_SIMD_CLONES
bool run_pow_scalar(const float* a, float e, float* y, int64_t n) {
  if (e == 2.0f) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] * a[i];
  } else if (e == 3.0f) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] * a[i] * a[i];
  } else if (e == 0.5f) {
    for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(a[i]);
  } else if (e == -1.0f) {
    for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / a[i];
  } else if (e == 1.0f) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i];
  } else {
    return false;
  }
  return true;
}

/// Gathers n values at offsets.
KILN_SIMD_CLONES
void gather(const float* src, const int64_t* off, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[off[i]];
}

/// How one operand maps onto the output's elements (flat index f): the same index (kSame); f / step (kRuns:
/// each operand value repeats over a run of `step` output elements, e.g. a [N, C, 1, 1] squeeze-excite scale
/// of [N, C, H, W], or a scalar); f % step (kCycle: the whole operand repeats, e.g. a [C] bias of [.., C]);
/// or a gathered offset per element (any other broadcast).
struct Broadcast {
  enum Kind { kSame, kRuns, kCycle, kGather } kind = kSame;
  int64_t step = 1;
  std::vector<int64_t> offsets;  // kGather
};

Broadcast broadcast_of(const Dims& in, const Dims& out) {
  Broadcast b;
  if (in == out) return b;
  // The output dims above 1, each matched by the (left-padded) operand or broadcast from its 1.
  const size_t pad = out.size() - in.size();
  std::string pattern;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] != 1) pattern += (d >= pad && in[d - pad] == out[d]) ? 'm' : 'b';
  }
  const int64_t in_n = checked_numel(in), out_n = checked_numel(out);
  const size_t npos = std::string::npos, first_b = pattern.find('b'), last_b = pattern.rfind('b');
  const size_t first_m = pattern.find('m'), last_m = pattern.rfind('m');
  if (first_b == npos) return b;  // only unit dims differ: the same elements in the same order
  if (in_n > 0 && (last_m == npos || last_m < first_b)) {
    b.kind = Broadcast::kRuns;
    b.step = out_n / in_n;
  } else if (in_n > 0 && last_b < first_m) {
    b.kind = Broadcast::kCycle;
    b.step = in_n;
  } else {
    b.kind = Broadcast::kGather;
    b.offsets = ops::broadcast_offsets(in, out);
  }
  return b;
}

/// Output elements [start, start + n) of an operand `src` broadcast by `bc`: a pointer into src where they
/// are contiguous there, `tiled` (the period repeated over a whole block, when blocks start on a period) for
/// a period shorter than the block, else written to buf.
const float* load_operand(const float* src, const Broadcast& bc, int64_t start, int64_t n, float* buf,
                          const float* tiled) {
  switch (bc.kind) {
    case Broadcast::kSame: return src + start;
    case Broadcast::kRuns:
      for (int64_t i = 0; i < n;) {
        const int64_t f = start + i, len = std::min(n - i, bc.step - f % bc.step);
        std::fill(buf + i, buf + i + len, src[f / bc.step]);
        i += len;
      }
      return buf;
    case Broadcast::kCycle:
      if (start % bc.step + n <= bc.step) return src + start % bc.step;
      if (tiled != nullptr) return tiled;
      for (int64_t i = 0; i < n;) {
        const int64_t f = (start + i) % bc.step, len = std::min(n - i, bc.step - f);
        std::copy(src + f, src + f + len, buf + i);
        i += len;
      }
      return buf;
    case Broadcast::kGather: gather(src, bc.offsets.data() + start, buf, n); return buf;
  }
  return buf;
}

/// How each operand broadcasts to one output shape (shared by the kernel's users; built once per shape).
struct Offsets {
  std::vector<Broadcast> inputs, weights;
  /// Elements per block: kBlock, or a whole number of periods where every operand repeating with a period
  /// (kCycle) has the same one, up to kMaxTiledPeriod. Then each block starts on a period and such an operand
  /// reads one tiled copy of it for every block (a squeeze-excite scale [N, C, 1, 1] of a channels-last
  /// [N, C, H, W]: copying its C values per period and block cost more than the multiply, 0.39 ns per
  /// element for efficientnet_b0's first one, C = 32).
  int64_t block = kBlock;
  /// The tiled copies of the constant operands that tile (empty for the others).
  std::vector<std::vector<float>> tiled_weights;
};

constexpr int64_t kMaxTiledPeriod = 4096;

/// The block size for the operands' broadcasts (see Offsets::block).
int64_t block_for(const Offsets& o) {
  int64_t period = 0;
  for (const auto* list : {&o.inputs, &o.weights}) {
    for (const Broadcast& b : *list) {
      if (b.kind != Broadcast::kCycle) continue;
      if (period != 0 && period != b.step) return kBlock;
      period = b.step;
    }
  }
  if (period == 0 || period > kMaxTiledPeriod) return kBlock;
  return period * std::max<int64_t>(1, kBlock / period);
}

/// `src`'s period of `step` values repeated over `n` elements.
void tile_into(const float* src, int64_t step, int64_t n, std::vector<float>& t) {
  t.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i += step) std::copy(src, src + std::min(step, n - i), t.begin() + i);
}

/// This thread's scratch of at least `n` floats (a chunk's temps and gather buffers), kept between calls: per
/// chunk allocations were a quarter of the samples of tiny_convnet's calls (malloc, free and consolidation of
/// buffers of steps x block floats).
float* thread_scratch(size_t n) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

struct PointwiseState : KernelState {
  std::map<std::vector<Dims>, Offsets> by_shape;
  const std::vector<Dims>* last_key = nullptr;  // the entry of the previous call (shapes rarely change)
  Offsets* last = nullptr;
  std::vector<std::vector<float>> tiled_inputs;  // per input: its tiled copy (refilled each call)
};

/// Whether an operand repeating with a period that divides `block` is read from one tiled copy.
bool tiles(const Broadcast& b, int64_t block) {
  return b.kind == Broadcast::kCycle && b.step < block && block % b.step == 0;
}

/// Whether `key` holds the dims of args' inputs and then of its output.
bool same_shapes(const std::vector<Dims>& key, const KernelArgs& args) {
  if (key.size() != args.inputs.size() + 1) return false;
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    if (key[i] != args.inputs[i].dims) return false;
  }
  return key.back() == args.outputs[0].dims;
}

class PointwiseKernel : public Kernel {
 public:
  PointwiseKernel(std::vector<PointwiseInstr> program, const Layer& layer) : program_(std::move(program)) {
    for (const auto& w : layer.weights) {
      weight_dims_.push_back(w.value.sizes());
      weights_.push_back(ops::host_floats(w.value));
    }
  }

  std::unique_ptr<KernelState> create_state() const override { return std::make_unique<PointwiseState>(); }

  void execute(KernelArgs& args) const override {
    const TensorView& y = args.outputs[0];
    auto* state = static_cast<PointwiseState*>(args.state);
    if (!state->last || !same_shapes(*state->last_key, args)) {
      std::vector<Dims> key;
      for (const auto& in : args.inputs) key.push_back(in.dims);
      key.push_back(y.dims);
      auto it = state->by_shape.find(key);
      if (it == state->by_shape.end()) it = state->by_shape.emplace(key, offsets_for(args)).first;
      state->last_key = &it->first;
      state->last = &it->second;
    }
    const Offsets& off = *state->last;
    const int64_t block = off.block;
    // The periodic inputs whose period divides the block, tiled over one block: every block starts on a
    // period, so they read the same values in every block (the constant ones were tiled with the offsets).
    state->tiled_inputs.resize(args.inputs.size());
    for (size_t k = 0; k < args.inputs.size(); ++k) {
      if (tiles(off.inputs[k], block)) {
        tile_into(args.inputs[k].as<float>(), off.inputs[k].step, block, state->tiled_inputs[k]);
      } else {
        state->tiled_inputs[k].clear();
      }
    }
    const std::vector<std::vector<float>>& tiled_inputs = state->tiled_inputs;
    const std::vector<std::vector<float>>& tiled_weights = off.tiled_weights;
    float* out = y.as<float>();
    size_t steps = program_.size();
    // Tasks of about 20 us: a squeeze-excite multiply of 225K elements took 33 us on one thread, so smaller
    // tasks pay more in waking threads than they save (onednn_common.h, threads_for_macs).
    const int64_t grain_elements =
        kBlock * std::max<int64_t>(4, 256 / static_cast<int64_t>(std::max<size_t>(steps, 1)));
    const int64_t grain = std::max<int64_t>(1, grain_elements / block);
    ops::parallel(args.pool, (y.numel() + block - 1) / block, grain, [&](int64_t b, int64_t e) {
      // Temps per instruction plus gather buffers per operand slot.
      float* temps = thread_scratch(3 * steps * static_cast<size_t>(block));
      float* gathered = temps + steps * static_cast<size_t>(block);
      for (int64_t blk = b; blk < e; ++blk) {
        int64_t start = blk * block, n = std::min<int64_t>(block, y.numel() - start);
        for (size_t s = 0; s < steps; ++s) {
          const PointwiseInstr& in = program_[s];
          const float* ops[2] = {nullptr, nullptr};
          const float* scalar[2] = {nullptr, nullptr};  // a one-element operand's value
          for (size_t k = 0; k < in.operands.size() && k < 2; ++k) {
            int64_t r = in.operands[k];
            float* buf = &gathered[(2 * s + k) * block];
            const float* src = nullptr;
            const Broadcast* bc = nullptr;
            if (r >= PointwiseInstr::kTemp) {
              ops[k] = &temps[static_cast<size_t>(r - PointwiseInstr::kTemp) * block];
              continue;
            }
            const std::vector<float>* tiled = nullptr;
            if (r >= PointwiseInstr::kWeight) {
              size_t w = static_cast<size_t>(r - PointwiseInstr::kWeight);
              src = weights_[w].data();
              bc = &off.weights[w];
              tiled = &tiled_weights[w];
              if (weights_[w].size() == 1) scalar[k] = src;
            } else {
              const TensorView& t = args.inputs[static_cast<size_t>(r)];
              src = t.as<float>();
              bc = &off.inputs[r];
              tiled = &tiled_inputs[static_cast<size_t>(r)];
              if (t.numel() == 1) scalar[k] = src;
            }
            ops[k] = load_operand(src, *bc, start, n, buf, tiled->empty() ? nullptr : tiled->data());
          }
          float* dst = s + 1 == steps ? out + start : &temps[s * block];
          const auto op = static_cast<ElementwiseOp>(in.op);
          switch (in.kind) {
            case LayerKind::Elementwise:
              if (op == ElementwiseOp::Pow && scalar[1] != nullptr &&
                  run_pow_scalar(ops[0], *scalar[1], dst, n))
                break;
              run_binary(op, ops[0], ops[1], dst, n);
              break;
            case LayerKind::Activation: run_activation(in.activation, ops[0], dst, n); break;
            case LayerKind::Unary: run_unary(static_cast<UnaryOp>(in.op), ops[0], dst, n); break;
            default:
              if (dst != ops[0]) std::copy(ops[0], ops[0] + n, dst);
              break;
          }
        }
      }
    });
  }

 private:
  /// Each operand's broadcast into the output for args' shapes and formats, the block, and the tiled copies
  /// of the constant operands that tile.
  Offsets offsets_for(const KernelArgs& args) const {
    const TensorView& y = args.outputs[0];
    Offsets o;
    // In ChannelsLast every operand is addressed in its storage order, [N, spatial..., C] (operands in
    // Plain are ones that lie the same in both orders: follow_channels_last.h).
    const size_t r = y.dims.size();
    const auto order = [&](const Dims& d, TensorFormat f) {
      return pointwise_operand_dims(d, f, y.format, r);
    };
    const Dims out = order(y.dims, y.format);
    for (const auto& in : args.inputs) o.inputs.push_back(broadcast_of(order(in.dims, in.format), out));
    for (const auto& wd : weight_dims_)
      o.weights.push_back(broadcast_of(order(wd, TensorFormat::Plain), out));
    o.block = block_for(o);
    o.tiled_weights.resize(weights_.size());
    for (size_t w = 0; w < weights_.size(); ++w) {
      if (tiles(o.weights[w], o.block))
        tile_into(weights_[w].data(), o.weights[w].step, o.block, o.tiled_weights[w]);
    }
    return o;
  }

  std::vector<PointwiseInstr> program_;
  std::vector<Dims> weight_dims_;
  std::vector<std::vector<float>> weights_;
};

bool all_fp32(const LayerInfo& info, std::string* why) {
  for (const auto& t : info.inputs)
    if (!vec_dtype_ok(t.dtype, why)) return false;
  for (const auto& w : info.layer->weights) {
    if (!w.defined()) return refuse(why, "an undefined weight");
    if (!vec_dtype_ok(w.value.dtype(), why)) return false;
  }
  return vec_dtype_ok(info.outputs[0].dtype, why);
}

bool program_ok(const std::vector<PointwiseInstr>& program, std::string* why) {
  if (program.empty()) return refuse(why, "an empty program");
  for (const auto& in : program) {
    switch (in.kind) {
      case LayerKind::Elementwise:
        if (!elementwise_ok(static_cast<ElementwiseOp>(in.op))) {
          return refuse(why, std::string("elementwise ") + elementwise_op_name(ElementwiseOp(in.op)));
        }
        if (in.operands.size() != 2) return refuse(why, "an elementwise step without 2 operands");
        break;
      case LayerKind::Activation:
        if (!activation_ok(in.activation.kind)) {
          return refuse(why, std::string("activation ") + activation_kind_name(in.activation.kind));
        }
        if (in.operands.size() != 1) return refuse(why, "an activation step without 1 operand");
        break;
      case LayerKind::Unary:
        if (!unary_ok(static_cast<UnaryOp>(in.op))) {
          return refuse(why, std::string("unary ") + unary_op_name(static_cast<UnaryOp>(in.op)));
        }
        if (in.operands.size() != 1) return refuse(why, "a unary step without 1 operand");
        break;
      case LayerKind::Cast:
        if (in.operands.size() != 1) return refuse(why, "a cast step without 1 operand");
        break;
      default: return refuse(why, std::string("a ") + layer_kind_name(in.kind) + " step");
    }
  }
  return true;
}

/// The program a layer runs: its own for FusedPointwise, one instruction otherwise.
std::vector<PointwiseInstr> program_of(const Layer& layer) {
  if (layer.kind == LayerKind::FusedPointwise) return layer.get<FusedPointwiseParams>().program;
  PointwiseInstr in;
  in.kind = layer.kind;
  if (layer.kind == LayerKind::Elementwise) {
    in.op = static_cast<int64_t>(layer.get<ElementwiseParams>().op);
    in.operands = {PointwiseInstr::kInput, PointwiseInstr::kInput + 1};
  } else if (layer.kind == LayerKind::Activation) {
    in.activation = layer.get<ActivationParams>();
    in.operands = {PointwiseInstr::kInput};
  } else {
    in.op = static_cast<int64_t>(layer.get<UnaryParams>().op);
    in.operands = {PointwiseInstr::kInput};
  }
  return {in};
}

bool applies(const LayerInfo& info, std::string* why) {
  return all_fp32(info, why) && program_ok(program_of(*info.layer), why);
}

std::unique_ptr<Kernel> create(const LayerInfo& info) {
  const TensorFormat out = info.outputs[0].format;
  const bool ok = (out == TensorFormat::Plain || out == TensorFormat::ChannelsLast) &&
                  std::all_of(info.inputs.begin(), info.inputs.end(), [&](const TensorInfo& t) {
                    return t.format == TensorFormat::Plain || t.format == out;
                  });
  KILN_CHECK(ok, Unsupported, "pointwise '", info.layer->name,
             "': formats other than Plain or all ChannelsLast");
  return std::make_unique<PointwiseKernel>(program_of(*info.layer), *info.layer);
}

}  // namespace

void register_pointwise(KernelTable& registry) {
  for (LayerKind k :
       {LayerKind::FusedPointwise, LayerKind::Activation, LayerKind::Elementwise, LayerKind::Unary}) {
    registry.add(KernelRow{"vec", k, applies, create, pointwise_formats});
  }
}

}  // namespace kiln::engine::cpu::fast
