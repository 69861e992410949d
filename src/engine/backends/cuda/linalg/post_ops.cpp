// The post-op pass of convolution and matrix multiply (see post_ops.h).

#include "engine/backends/cuda/linalg/post_ops.h"

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/linalg/epilogue.h"
#include "engine/backends/cuda/linalg/fp8_quantize.h"
#include "engine/backends/cuda/pointwise/pointwise_launch.h"
#include "engine/backends/cuda/pointwise/pointwise_program.h"

namespace kiln::engine::cuda {

PostOpPass::PostOpPass(const std::vector<PostOp>& post_ops, size_t first, const void* bias, int channel_dim,
                       int first_residual_input, DType dtype, bool channels_last)
    : bias_(bias), channel_dim_(channel_dim), dtype_(dtype), channels_last_(channels_last) {
  KILN_CHECK(!channels_last || channel_dim == 1, Internal,
             "cuda post-op pass: channels-last with channel dim ", channel_dim);
  // Sources: 0 the output, then the bias, then the residuals. Each instruction reads the previous result.
  int next_source = 1;
  auto chain = [&](PwInstr in) {
    in.a = static_cast<int16_t>(instr_.empty() ? 0 : kPwTemp + static_cast<int>(instr_.size()) - 1);
    instr_.push_back(in);
  };
  if (bias_) {
    PwInstr in;
    in.kind = kPwScaleAdd;
    in.b = static_cast<int16_t>(next_source++);
    in.alpha = 1.0f;
    chain(in);
  }
  for (size_t i = first; i < post_ops.size(); ++i) {
    const PostOp& op = post_ops[i];
    PwInstr in;
    if (op.kind == PostOp::Activation) {
      in.kind = kPwActivation;
      in.op = static_cast<uint8_t>(op.activation.kind);
      in.alpha = static_cast<float>(op.activation.alpha);
      in.beta = static_cast<float>(op.activation.beta);
    } else {
      in.kind = kPwScaleAdd;
      in.b = static_cast<int16_t>(next_source++);
      in.alpha = static_cast<float>(op.scale);
      residual_inputs_.push_back(first_residual_input + static_cast<int>(residual_inputs_.size()));
    }
    chain(in);
  }
  KILN_CHECK(instr_.size() <= static_cast<size_t>(kMaxPwInstrs) && next_source <= kMaxPwSources, Unsupported,
             "cuda post-op pass: ", instr_.size(), " instructions over ", next_source, " sources");
}

bool PostOpPass::fits(size_t post_ops, bool bias, size_t residuals, std::string* why) {
  if (post_ops + (bias ? 1 : 0) > static_cast<size_t>(kMaxPwInstrs) ||
      1 + (bias ? 1 : 0) + residuals > static_cast<size_t>(kMaxPwSources))
    return refuse(why, "too many post-ops");
  return true;
}

bool PostOpPass::uses_epilogue(const KernelArgs& args) const {
  const TensorView& y = args.outputs[0];
  if (y.numel() > kMaxEpilogueElements || y.dtype != dtype_) return false;
  if (bias_ && (channel_dim_ < 0 || static_cast<size_t>(channel_dim_) >= y.dims.size())) return false;
  for (int r : residual_inputs_) {
    const TensorView& t = args.inputs[r];
    if (t.dims != y.dims || t.dtype != dtype_ || t.format != y.format) return false;
  }
  return true;
}

bool PostOpPass::epilogue_params(const KernelArgs& args, EpilogueParams* p) const {
  if (!uses_epilogue(args)) return false;
  const TensorView& y = args.outputs[0];
  *p = EpilogueParams{};
  p->out = y.data;
  p->dtype = dcode(dtype_);
  p->n = y.numel();
  p->src[0].data = y.data;
  int s = 1;
  if (bias_) {
    p->src[s].data = bias_;
    p->src[s].len = y.dims[channel_dim_];
    p->src[s].div = 1;  // channels-last: the channel is the innermost dim in memory
    if (!channels_last_) {
      for (size_t k = channel_dim_ + 1; k < y.dims.size(); ++k) p->src[s].div *= y.dims[k];
    }
    ++s;
  }
  for (int r : residual_inputs_) p->src[s++].data = args.inputs[r].data;
  p->n_sources = s;
  p->n_instr = static_cast<int>(instr_.size());
  for (size_t i = 0; i < instr_.size(); ++i) p->instr[i] = instr_[i];
  return true;
}

void PostOpPass::run(const KernelArgs& args, const char* what) const {
  const TensorView& y = args.outputs[0];
  if (instr_.empty() || y.numel() == 0) return;
  EpilogueParams p;
  if (epilogue_params(args, &p)) {
    launch_epilogue(p, stream_of(args));
  } else {
    run_generic(args);
  }
  check_launch(what);
}

void PostOpPass::run_to_e4m3(const KernelArgs& args, void* e4m3, float inverse_scale,
                             const char* what) const {
  const TensorView& y = args.outputs[0];
  if (y.numel() == 0) return;
  EpilogueParams p;
  if (!instr_.empty() && epilogue_params(args, &p)) {
    p.e4m3_out = e4m3;
    p.e4m3_inverse_scale = inverse_scale;
    launch_epilogue(p, stream_of(args));
  } else {
    if (!instr_.empty()) run_generic(args);
    launch_quantize_e4m3(y.data, dcode(y.dtype), y.numel(), inverse_scale, static_cast<uint8_t*>(e4m3),
                         stream_of(args));
  }
  check_launch(what);
}

namespace {

/// `d` in the memory order of a channels-last tensor (N, spatial..., C); unchanged when `channels_last` is
/// false.
Dims memory_dims(const Dims& d, bool channels_last) {
  if (!channels_last) return d;
  Dims m;
  for (size_t k : format_order(TensorFormat::ChannelsLast, d.size())) m.push_back(d[k]);
  return m;
}

}  // namespace

void PostOpPass::run_generic(const KernelArgs& args) const {
  const TensorView& y = args.outputs[0];
  // Channels-last: the interpreter runs over the buffer's memory order, where the channel is the last dim.
  const Dims yd = memory_dims(y.dims, channels_last_);
  const size_t cdim = channels_last_ ? yd.size() - 1 : static_cast<size_t>(channel_dim_);
  PwProgram p;
  auto source = [&](int s, const void* data, DType dtype, const Dims& dims) {
    p.src[s].data = data;
    p.src[s].dtype = dcode(dtype);
    broadcast_strides(dims, yd, p.src[s].st);
  };
  source(0, y.data, y.dtype, yd);
  int s = 1;
  if (bias_) {
    KILN_CHECK(cdim < yd.size(), Internal, "cuda post-op pass: channel dim ", channel_dim_, " of a rank ",
               y.dims.size(), " output");
    // One value per index of the channel dim: dims [C, 1, ...] aligned to the output's trailing dims.
    Dims bd(yd.size() - cdim, 1);
    bd[0] = yd[cdim];
    source(s++, bias_, dtype_, bd);
  }
  for (int r : residual_inputs_) {
    const TensorView& t = args.inputs[r];
    KILN_CHECK(!channels_last_ || (t.dims.size() == y.dims.size() && t.format == y.format), Internal,
               "cuda post-op pass: a channels-last output's residual must have its rank and format");
    source(s++, t.data, t.dtype, memory_dims(t.dims, channels_last_));
  }
  p.n_sources = s;
  p.n_instr = static_cast<int>(instr_.size());
  for (size_t i = 0; i < instr_.size(); ++i) p.instr[i] = instr_[i];
  launch_pointwise(p, to_shape(yd), y.data, dcode(y.dtype), false, stream_of(args));
}

}  // namespace kiln::engine::cuda
