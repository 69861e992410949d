// Vectorized pointwise kernels: FusedPointwise programs, and single Activation / Elementwise / Unary / Select
// / Cast layers run as one-instruction programs, over Float32, Bool, Int64 and Int32 tensors (a Bool held as
// 0.0f or 1.0f in between, so masks, comparisons and selects fuse with the float math around them; integers
// in int64 lanes, exact). The output is
// processed in blocks of about kBlock elements; each instruction (instructions.h) runs as one vectorizable
// loop over the block, so a chain of N operations reads its inputs once and never writes intermediates to
// memory. A broadcast operand is filled per run of equal values ([N, C, 1, 1] over [N, C, H, W], scalars),
// read tiled over a block or copied per period ([C] over [.., C], a squeeze-excite scale of a channels-last
// tensor), one period per run ([N, C / 8, 1, 1, 8] over [N, C / 8, H, W, 8]: a squeeze-excite scale of a
// blocked tensor) or else gathered through offsets cached per output shape. Layers follow a ChannelsLast or
// blocked input (follow_channels_last.h) and then address every operand in that storage order.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>

#include "engine/backends/cpu/fast_kernels.h"
#include "engine/backends/cpu/pointwise/instructions.h"
#include "engine/backends/cpu/vec_math.h"
#include "engine/backends/follow_channels_last.h"
#include "engine/ops/common.h"
#include "engine/ops/scalar_ops.h"
#include "kiln/support/error.h"
#include "kiln/support/host_tensor.h"

namespace kiln::engine::cpu::fast {
namespace {

constexpr int64_t kBlock = 512;
/// Bytes of one value in a tiled copy (any lane type; the temps and gathered operands of a program without
/// integers take 4: their float blocks stay as compact in cache as before integers came).
constexpr size_t kLaneBytes = 8;

/// A value as the kernels hold it: a float as it is, a Bool byte as 0.0f or 1.0f, an integer as int64.
inline float value_of(float v) { return v; }
inline float value_of(uint8_t b) { return b != 0 ? 1.0f : 0.0f; }
inline int64_t value_of(int64_t v) { return v; }
inline int64_t value_of(int32_t v) { return v; }
/// The lane type of element type T.
template <class T>
using Lane = decltype(value_of(T{}));

/// n values of src as lanes.
template <class T>
void convert(const T* src, Lane<T>* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = value_of(src[i]);
}

/// Gathers n values at offsets.
template <class T>
inline void gather_values(const T* src, const int64_t* off, Lane<T>* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = value_of(src[off[i]]);
}
KILN_SIMD_CLONES
void gather(const float* src, const int64_t* off, float* dst, int64_t n) { gather_values(src, off, dst, n); }
KILN_SIMD_CLONES
void gather(const uint8_t* src, const int64_t* off, float* dst, int64_t n) {
  gather_values(src, off, dst, n);
}
KILN_SIMD_CLONES
void gather(const int64_t* src, const int64_t* off, int64_t* dst, int64_t n) {
  gather_values(src, off, dst, n);
}
KILN_SIMD_CLONES
void gather(const int32_t* src, const int64_t* off, int64_t* dst, int64_t n) {
  gather_values(src, off, dst, n);
}

/// Calls fn(static_cast<const T*>(data)) with T the element type of `dtype` (one the kernels take).
template <class Fn>
decltype(auto) with_type(DType dtype, const void* data, Fn&& fn) {
  switch (dtype) {
    case DType::Bool: return fn(static_cast<const uint8_t*>(data));
    case DType::Int64: return fn(static_cast<const int64_t*>(data));
    case DType::Int32: return fn(static_cast<const int32_t*>(data));
    default: return fn(static_cast<const float*>(data));
  }
}

/// How one operand maps onto the output's elements (flat index f): the same index (kSame); f / step (kRuns:
/// each operand value repeats over a run of `step` output elements, e.g. a [N, C, 1, 1] squeeze-excite scale
/// of [N, C, H, W], or a scalar); f % step (kCycle: the whole operand repeats, e.g. a [C] bias of [.., C]);
/// (f / run) * step + f % step (kCycleRuns: a period of `step` values repeats over a run of `run` elements,
/// then the next period, e.g. a squeeze-excite scale [N, C / 8, 1, 1, 8] of a blocked [N, C / 8, H, W, 8]);
/// or a gathered offset per element (any other broadcast).
struct Broadcast {
  enum Kind { kSame, kRuns, kCycle, kCycleRuns, kGather } kind = kSame;
  int64_t step = 1;
  int64_t run = 0;               // kCycleRuns
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
  const bool one_broadcast_run = pattern.find('m', first_b) > last_b;  // matched dims only around the b's
  if (in_n > 0 && (last_m == npos || last_m < first_b)) {
    b.kind = Broadcast::kRuns;
    b.step = out_n / in_n;
  } else if (in_n > 0 && last_b < first_m) {
    b.kind = Broadcast::kCycle;
    b.step = in_n;
  } else if (in_n > 0 && one_broadcast_run) {
    // matched, broadcast, matched: the trailing matched dims form the period, repeated over the broadcast
    // ones.
    int64_t period = 1, broadcast = 1;
    size_t k = 0;
    for (size_t d = 0; d < out.size(); ++d) {
      if (out[d] == 1) continue;
      if (k > last_b)
        period *= out[d];
      else if (k >= first_b)
        broadcast *= out[d];
      ++k;
    }
    b.kind = Broadcast::kCycleRuns;
    b.step = period;
    b.run = period * broadcast;
  } else {
    b.kind = Broadcast::kGather;
    b.offsets = ops::broadcast_offsets(in, out);
  }
  return b;
}

/// dst[j] = period[(phase + j) % step] for j < n, as lanes: the first period converted, then copied in
/// doubling spans (a period of 8 or 16 values over a block of 512: a few copies, not one per period).
template <class T>
void fill_cycle(const T* period, int64_t step, int64_t phase, Lane<T>* dst, int64_t n) {
  const int64_t head = std::min(n, (step - phase) % step);
  convert(period + phase, dst, head);
  const int64_t first = std::min(n - head, step);
  convert(period, dst + head, first);
  for (int64_t filled = head + first; filled < n;) {
    const int64_t len = std::min(filled - head, n - filled);  // whole periods from dst + head
    std::copy_n(dst + head, len, dst + filled);
    filled += len;
  }
}

/// Output elements [start, start + n) of an operand `src` broadcast by `bc`, as lanes: a pointer into src
/// where they are contiguous there and src holds lanes (Float32, Int64), `tiled` (the period repeated over a
/// whole block, when blocks start on a period) for a period shorter than the block, else written to buf.
template <class T>
const Lane<T>* load_operand(const T* src, const Broadcast& bc, int64_t start, int64_t n, Lane<T>* buf,
                            const Lane<T>* tiled) {
  constexpr bool kFloat = std::is_same_v<T, Lane<T>>;
  switch (bc.kind) {
    case Broadcast::kSame:
      if constexpr (kFloat) return src + start;
      convert(src + start, buf, n);
      return buf;
    case Broadcast::kRuns:
      for (int64_t i = 0; i < n;) {
        const int64_t f = start + i, len = std::min(n - i, bc.step - f % bc.step);
        std::fill(buf + i, buf + i + len, value_of(src[f / bc.step]));
        i += len;
      }
      return buf;
    case Broadcast::kCycle:
      if (start % bc.step + n <= bc.step) {
        if constexpr (kFloat) return src + start % bc.step;
        convert(src + start % bc.step, buf, n);
        return buf;
      }
      if (tiled != nullptr) return tiled;
      for (int64_t i = 0; i < n;) {
        const int64_t f = (start + i) % bc.step, len = std::min(n - i, bc.step - f);
        convert(src + f, buf + i, len);
        i += len;
      }
      return buf;
    case Broadcast::kCycleRuns:
      for (int64_t i = 0; i < n;) {
        const int64_t f = start + i, len = std::min(n - i, bc.run - f % bc.run);
        fill_cycle(src + f / bc.run * bc.step, bc.step, f % bc.step, buf + i, len);
        i += len;
      }
      return buf;
    case Broadcast::kGather: gather(src, bc.offsets.data() + start, buf, n); return buf;
  }
  return buf;
}

/// load_operand for an operand of `dtype` at `src`.
const void* load_any(DType dtype, const void* src, const Broadcast& bc, int64_t start, int64_t n, void* buf,
                     const void* tiled) {
  return with_type(dtype, src, [&](const auto* typed) -> const void* {
    using L = Lane<std::remove_cv_t<std::remove_pointer_t<decltype(typed)>>>;
    return load_operand(typed, bc, start, n, static_cast<L*>(buf), static_cast<const L*>(tiled));
  });
}

/// A block buffer of lanes (kLaneBytes per value, whichever lane type it holds).
using LaneBuffer = std::vector<int64_t>;

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
  std::vector<LaneBuffer> tiled_weights;
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

/// `src` (of `dtype`)'s period of `step` values repeated over `n` elements, as lanes.
void tile_into(DType dtype, const void* src, int64_t step, int64_t n, LaneBuffer& t) {
  t.resize(static_cast<size_t>(n));
  with_type(dtype, src, [&](const auto* typed) {
    using L = Lane<std::remove_cv_t<std::remove_pointer_t<decltype(typed)>>>;
    auto* dst = reinterpret_cast<L*>(t.data());
    for (int64_t i = 0; i < n; i += step) convert(typed, dst + i, std::min(step, n - i));
  });
}

/// This thread's scratch of at least `n` block values (a chunk's temps and gather buffers), kept between
/// calls: per chunk allocations were a quarter of the samples of tiny_convnet's calls (malloc, free and
/// consolidation of buffers of steps x block floats).
std::byte* thread_scratch(size_t n) {
  thread_local LaneBuffer buffer;
  if (buffer.size() < n) buffer.resize(n);
  return reinterpret_cast<std::byte*>(buffer.data());
}

struct PointwiseState : KernelState {
  std::map<std::vector<Dims>, Offsets> by_shape;
  const std::vector<Dims>* last_key = nullptr;  // the entry of the previous call (shapes rarely change)
  Offsets* last = nullptr;
  std::vector<LaneBuffer> tiled_inputs;  // per input: its tiled copy (refilled each call)
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

/// A Bool output's bytes from the held 0.0f / 1.0f values.
KILN_SIMD_CLONES
void store_bools(const float* x, uint8_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] != 0.0f ? 1 : 0;
}

/// An Int32 output from int64 lanes, wrapping as the reference's store does.
KILN_SIMD_CLONES
void store_int32s(const int64_t* x, int32_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<int32_t>(x[i]);
}

/// Whether a tensor of `dtype` holds its values as the kernels' lanes do (an output written in place).
bool holds_lanes(DType dtype) { return dtype == DType::Float32 || dtype == DType::Int64; }

/// Which file's instructions run a step.
enum class Runner : uint8_t { kArithmetic, kLogic, kInteger };

/// The dtypes of a program's inputs, weights and results, and the runner of each step.
struct ProgramTypes {
  std::vector<DType> inputs, weights, results, sources;
  std::vector<Runner> runners;
};

ProgramTypes types_of(const std::vector<PointwiseInstr>& program, const LayerInfo& info) {
  ProgramTypes t;
  for (const auto& in : info.inputs) t.inputs.push_back(in.dtype);
  for (const auto& w : info.layer->weights) t.weights.push_back(w.value.dtype());
  t.results = ops::instruction_dtypes(program, t.inputs, t.weights);
  for (size_t s = 0; s < program.size(); ++s) {
    const PointwiseInstr& in = program[s];
    const int64_t r = in.operands.at(in.kind == LayerKind::Select ? 1 : 0);
    const DType source =
        r >= PointwiseInstr::kTemp     ? t.results[static_cast<size_t>(r - PointwiseInstr::kTemp)]
        : r >= PointwiseInstr::kWeight ? t.weights[static_cast<size_t>(r - PointwiseInstr::kWeight)]
                                       : t.inputs[static_cast<size_t>(r)];
    t.sources.push_back(source);
    t.runners.push_back(is_integer(in, source, t.results[s]) ? Runner::kInteger
                        : is_logic(in)                       ? Runner::kLogic
                                                             : Runner::kArithmetic);
  }
  return t;
}

class PointwiseKernel : public Kernel {
 public:
  PointwiseKernel(std::vector<PointwiseInstr> program, const LayerInfo& info)
      : program_(std::move(program)), types_(types_of(program_, info)) {
    for (const auto& w : info.layer->weights) {
      weight_dims_.push_back(w.value.sizes());
      weights_.push_back(w.value);
    }
    const auto integral = [](const std::vector<DType>& d) {
      return std::any_of(d.begin(), d.end(), is_integral);
    };
    if (integral(types_.inputs) || integral(types_.weights) || integral(types_.results)) lane_bytes_ = 8;
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
      const TensorView& t = args.inputs[k];
      if (!tiles(off.inputs[k], block)) {
        state->tiled_inputs[k].clear();
      } else {
        tile_into(t.dtype, t.data, off.inputs[k].step, block, state->tiled_inputs[k]);
      }
    }
    const size_t steps = program_.size();
    const bool in_place = holds_lanes(y.dtype);  // the last step writes y, else its temp is stored
    // Tasks of about 20 us: a squeeze-excite multiply of 225K elements took 33 us on one thread, so smaller
    // tasks pay more in waking threads than they save (onednn_common.h, threads_for_macs).
    const int64_t grain_elements =
        kBlock * std::max<int64_t>(4, 256 / static_cast<int64_t>(std::max<size_t>(steps, 1)));
    const int64_t grain = std::max<int64_t>(1, grain_elements / block);
    ops::parallel(args.pool, (y.numel() + block - 1) / block, grain, [&](int64_t b, int64_t e) {
      // Temps per instruction plus gather buffers per operand slot (3 per instruction: a select's).
      const size_t slot_bytes = static_cast<size_t>(block) * lane_bytes_;
      std::byte* temps = thread_scratch(4 * steps * slot_bytes / kLaneBytes);
      std::byte* gathered = temps + steps * slot_bytes;
      const auto slot = [&](std::byte* base, size_t k) { return base + k * slot_bytes; };
      for (int64_t blk = b; blk < e; ++blk) {
        const int64_t start = blk * block, n = std::min<int64_t>(block, y.numel() - start);
        for (size_t s = 0; s < steps; ++s) {
          const PointwiseInstr& in = program_[s];
          const void* x[3] = {nullptr, nullptr, nullptr};
          const float* scalar1 = nullptr;  // a one-element Float32 second operand's value
          for (size_t k = 0; k < in.operands.size() && k < 3; ++k) {
            const int64_t r = in.operands[k];
            if (r >= PointwiseInstr::kTemp) {
              x[k] = slot(temps, static_cast<size_t>(r - PointwiseInstr::kTemp));
              continue;
            }
            void* buf = slot(gathered, 3 * s + k);
            if (r >= PointwiseInstr::kWeight) {
              const size_t w = static_cast<size_t>(r - PointwiseInstr::kWeight);
              const HostTensor& weight = weights_[w];
              const LaneBuffer& tiled = off.tiled_weights[w];
              x[k] = load_any(weight.dtype(), weight.data(), off.weights[w], start, n, buf,
                              tiled.empty() ? nullptr : tiled.data());
              if (k == 1 && weight.numel() == 1 && weight.dtype() == DType::Float32)
                scalar1 = weight.data_as<float>();
              continue;
            }
            const TensorView& t = args.inputs[static_cast<size_t>(r)];
            const LaneBuffer& tiled = state->tiled_inputs[static_cast<size_t>(r)];
            x[k] = load_any(t.dtype, t.data, off.inputs[r], start, n, buf,
                            tiled.empty() ? nullptr : tiled.data());
            if (k == 1 && t.numel() == 1 && t.dtype == DType::Float32) scalar1 = t.as<float>();
          }
          void* dst = s + 1 == steps && in_place
                          ? static_cast<std::byte*>(y.data) + start * dtype_size(y.dtype)
                          : slot(temps, s);
          switch (types_.runners[s]) {
            case Runner::kInteger: run_integer(in, types_.sources[s], types_.results[s], x, dst, n); break;
            case Runner::kLogic:
              run_logic(in, reinterpret_cast<const float* const*>(x), static_cast<float*>(dst), n);
              break;
            case Runner::kArithmetic:
              run_arithmetic(in, reinterpret_cast<const float* const*>(x), scalar1, static_cast<float*>(dst),
                             n);
              break;
          }
        }
        const void* last = slot(temps, steps - 1);
        if (y.dtype == DType::Bool) {
          store_bools(static_cast<const float*>(last), y.as<uint8_t>() + start, n);
        } else if (y.dtype == DType::Int32) {
          store_int32s(static_cast<const int64_t*>(last), y.as<int32_t>() + start, n);
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
    // In ChannelsLast or a blocked format every operand is addressed in its storage order ([N, spatial...,
    // C], [N, C / L, spatial..., L]; operands in Plain are ones that lie the same in both orders:
    // follow_channels_last.h).
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
        tile_into(weights_[w].dtype(), weights_[w].data(), o.weights[w].step, o.block, o.tiled_weights[w]);
    }
    return o;
  }

  std::vector<PointwiseInstr> program_;
  ProgramTypes types_;
  /// Bytes per value of the temps and gathered operands: 8 when the program holds integers.
  size_t lane_bytes_ = 4;
  std::vector<Dims> weight_dims_;
  std::vector<HostTensor> weights_;  // shared with the layer
};

/// Whether `dtype` is one the kernels read and write: Float32, Bool (held as 0.0f / 1.0f), Int64 or Int32
/// (held as int64).
bool dtype_ok(DType dtype, std::string* why) {
  return dtype == DType::Float32 || dtype == DType::Bool || dtype == DType::Int64 || dtype == DType::Int32 ||
         refuse(why, std::string(dtype_name(dtype)) + " (vec pointwise takes f32, bool, i64 and i32)");
}

bool dtypes_ok(const LayerInfo& info, std::string* why) {
  for (const auto& t : info.inputs)
    if (!dtype_ok(t.dtype, why)) return false;
  for (const auto& w : info.layer->weights) {
    if (!w.defined()) return refuse(why, "an undefined weight");
    if (!dtype_ok(w.value.dtype(), why)) return false;
  }
  return dtype_ok(info.outputs[0].dtype, why);
}

bool program_ok(const std::vector<PointwiseInstr>& program, const LayerInfo& info, std::string* why) {
  if (program.empty()) return refuse(why, "an empty program");
  const ProgramTypes types = types_of(program, info);
  for (size_t s = 0; s < program.size(); ++s) {
    const PointwiseInstr& in = program[s];
    bool ok = false;
    switch (types.runners[s]) {
      case Runner::kInteger: ok = integer_ok(in, types.sources[s], types.results[s], why); break;
      case Runner::kLogic: ok = logic_ok(in, why); break;
      case Runner::kArithmetic: ok = arithmetic_ok(in, why); break;
    }
    if (!ok) return false;
  }
  return true;
}

/// The program a layer runs: its own for FusedPointwise, one instruction otherwise.
std::vector<PointwiseInstr> program_of(const Layer& layer) {
  if (layer.kind == LayerKind::FusedPointwise) return layer.get<FusedPointwiseParams>().program;
  PointwiseInstr in;
  in.kind = layer.kind;
  int64_t arity = 1;
  switch (layer.kind) {
    case LayerKind::Elementwise:
      in.op = static_cast<int64_t>(layer.get<ElementwiseParams>().op);
      arity = 2;
      break;
    case LayerKind::Activation: in.activation = layer.get<ActivationParams>(); break;
    case LayerKind::Unary: in.op = static_cast<int64_t>(layer.get<UnaryParams>().op); break;
    case LayerKind::Cast: in.op = static_cast<int64_t>(layer.get<CastParams>().to); break;
    default: arity = 3; break;  // Select: condition, then, else
  }
  for (int64_t k = 0; k < arity; ++k) in.operands.push_back(PointwiseInstr::kInput + k);
  return {in};
}

bool applies(const LayerInfo& info, std::string* why) {
  return dtypes_ok(info, why) && program_ok(program_of(*info.layer), info, why);
}

std::unique_ptr<Kernel> create(const LayerInfo& info) {
  // The formats pointwise_formats_following_blocked gives (the kernel checks each operand's dims per shape).
  const TensorFormat out = info.outputs[0].format;
  const bool ok = std::all_of(info.inputs.begin(), info.inputs.end(), [&](const TensorInfo& t) {
    return t.format == TensorFormat::Plain || t.format == out;
  });
  KILN_CHECK(ok, Unsupported, "pointwise '", info.layer->name,
             "': inputs in formats other than Plain or the output's");
  return std::make_unique<PointwiseKernel>(program_of(*info.layer), info);
}

}  // namespace

void register_pointwise(KernelTable& registry) {
  for (LayerKind k : {LayerKind::FusedPointwise, LayerKind::Activation, LayerKind::Elementwise,
                      LayerKind::Unary, LayerKind::Select, LayerKind::Cast}) {
    registry.add(KernelRow{"vec", k, applies, create, pointwise_formats_following_blocked});
  }
}

}  // namespace kiln::engine::cpu::fast
