// Reformat on cuda (tactic "generic"): Plain <-> ChannelsLast at ranks 3 to 5 (ncw/nwc, nchw/nhwc,
// ncdhw/ndhwc), any dtype, and a copy when both formats are the same. A change of format is a permutation of
// the buffer (NCHW -> NHWC is (0, 2, 3, 1)), so it runs as one strided copy (strided_copy_plan.h: merged
// dims, 32x32 shared-memory tiles for the transpose, 16-byte vectors where rows stay contiguous). Values are
// copied exactly. Blocked formats are not supported on cuda (applies() says so, and the builder reports it).
// Tactic "quantize_e4m3": Plain -> E4M3 (fp32, fp16 or bf16 values quantized with the tensor's dynamic range,
// fp8_quantize.h), what an FP8 matmul reads where its input's producer does not write E4M3 itself.


#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/linalg/fp8_quantize.h"
#include "engine/backends/cuda/linalg/matmul_fp8.h"
#include "engine/backends/cuda/movement/movement_launch.h"

namespace kiln::engine::cuda {

/// Element strides of each logical dim of `dims` in `format` (Plain or ChannelsLast).
std::vector<int64_t> format_strides(TensorFormat format, const Dims& dims) {
  if (format != TensorFormat::ChannelsLast) return row_strides(dims);
  // Memory order: N, spatial..., C.
  std::vector<int64_t> st(dims.size(), 1);
  int64_t s = dims[1];  // the channel dim has stride 1
  for (size_t k = dims.size(); k-- > 2;) {
    st[k] = s;
    s *= dims[k];
  }
  st[0] = s;
  return st;
}

/// The logical dims in the order `format` stores them, outermost first.
std::vector<size_t> format_order(TensorFormat format, size_t rank) {
  std::vector<size_t> order;
  order.push_back(0);
  if (format == TensorFormat::ChannelsLast) {
    for (size_t k = 2; k < rank; ++k) order.push_back(k);
    order.push_back(1);
  } else {
    for (size_t k = 1; k < rank; ++k) order.push_back(k);
  }
  return order;
}

namespace {

bool supported_format(TensorFormat f) { return f == TensorFormat::Plain || f == TensorFormat::ChannelsLast; }

class ReformatKernel : public Kernel {
 public:
  explicit ReformatKernel(const LayerInfo& info) : p_(info.params<ReformatParams>()) {}
  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    if (y.numel() == 0) return;
    Stream s = stream_of(args);
    if (p_.from == p_.to || x.dims.size() < 3) {
      if (x.data != y.data)
        KILN_CUDA_CHECK(cudaMemcpyAsync(y.data, x.data, y.nbytes(), cudaMemcpyDeviceToDevice, s));
      return;
    }
    // Walk the output's memory order; read the input through its own strides of the same logical dims.
    std::vector<int64_t> ist = format_strides(p_.from, x.dims), ost = format_strides(p_.to, y.dims);
    std::vector<size_t> order = format_order(p_.to, y.dims.size());
    Dims shape;
    std::vector<int64_t> in_st, out_st;
    for (size_t k : order) {
      shape.push_back(y.dims[k]);
      in_st.push_back(ist[k]);
      out_st.push_back(ost[k]);
    }
    launch_strided_copy(x.data, 0, in_st.data(), y.data, 0, out_st.data(), to_shape(shape),
                        static_cast<int>(dtype_size(y.dtype)), s);
    check_launch("reformat");
  }

 private:
  ReformatParams p_;
};

bool applies(const LayerInfo& layer, std::string* why) {
  const auto& p = layer.params<ReformatParams>();
  if (!supported_format(p.from) || !supported_format(p.to)) {
    return refuse(why, std::string("cuda reformats convert between plain and channels_last only (not ") +
                           tensor_format_name(supported_format(p.from) ? p.to : p.from) + ")");
  }
  size_t r = layer.inputs[0].max.size();
  if (p.from != p.to && (r < 3 || r > 5)) return refuse(why, "channels_last needs rank 3 to 5");
  if (dtype_size(layer.inputs[0].dtype) > 8) return refuse(why, "elements wider than 8 bytes");
  return true;
}

std::unique_ptr<Kernel> create(const LayerInfo& layer) { return std::make_unique<ReformatKernel>(layer); }

class QuantizeE4m3Kernel : public Kernel {
 public:
  explicit QuantizeE4m3Kernel(const LayerInfo& info)
      : inverse_scale_(1.0f / fp8_activation_scale(*info.inputs[0].range)) {}
  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    launch_quantize_e4m3(x.data, dcode(x.dtype), x.numel(), inverse_scale_, static_cast<uint8_t*>(y.data),
                         stream_of(args));
    check_launch("reformat to e4m3");
  }

 private:
  float inverse_scale_;
};

bool applies_e4m3(const LayerInfo& layer, std::string* why) {
  const auto& p = layer.params<ReformatParams>();
  if (p.from != TensorFormat::Plain || p.to != TensorFormat::E4M3) {
    return refuse(why, "it quantizes plain tensors to e4m3 only");
  }
  const TensorInfo& x = layer.inputs[0];
  if (x.dtype != DType::Float32 && x.dtype != DType::Float16 && x.dtype != DType::BFloat16) {
    return refuse(why,
                  std::string("a ") + dtype_name(x.dtype) + " tensor (e4m3 holds fp32, fp16 or bf16 values)");
  }
  if (usable_fp8_scale(x.range) == 0) {
    return refuse(why, "no usable dynamic range on tensor '" + x.name + "'");
  }
  return true;
}

std::unique_ptr<Kernel> create_e4m3(const LayerInfo& layer) {
  return std::make_unique<QuantizeE4m3Kernel>(layer);
}

}  // namespace

void register_reformat(KernelTable& rows) {
  rows.add({"generic", LayerKind::Reformat, &applies, &create});
  // (an FP8 row: it writes FP8 with the tensor's dynamic range)
  rows.add({.name = "quantize_e4m3",
            .kind = LayerKind::Reformat,
            .applies = &applies_e4m3,
            .create = &create_e4m3,
            .fp8 = true});
}

}  // namespace kiln::engine::cuda
