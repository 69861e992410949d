// Host side of the data-movement kernels (movement.cu, strided_copy.cu): Shuffle, Concat, Slice, Gather,
// Padding. Tactic "generic". Exact copies, any dtype. A Shuffle that only reshapes passes E4M3 codes on (its
// formats follow an E4M3 input): the attention's output reshaped for the FP8 projection after it.

#include "engine/backends/cuda/cuda_util.h"
#include "engine/backends/cuda/movement/movement_launch.h"

namespace kiln::engine::cuda {
namespace {

int esize(DType dt) { return static_cast<int>(dtype_size(dt)); }

/// Copies a contiguous tensor of dims `d` read through `perm` (out dim k = in dim perm[k]) into a contiguous
/// output.
void permute_copy(const void* in, const Dims& d, const std::vector<int64_t>& perm, void* out, DType dt,
                  Stream s) {
  auto ist = row_strides(d);
  Dims od;
  std::vector<int64_t> st;
  for (int64_t p : perm) {
    od.push_back(d[p]);
    st.push_back(ist[p]);
  }
  auto ost = row_strides(od);
  launch_strided_copy(in, 0, st.data(), out, 0, ost.data(), to_shape(od), esize(dt), s);
}

bool is_identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

class ShuffleKernel : public Kernel {
 public:
  explicit ShuffleKernel(const LayerInfo& info) : p_(info.params<ShuffleParams>()) {
    p1_ = !p_.first_perm.empty() && !is_identity(p_.first_perm);
    p2_ = !p_.second_perm.empty() && !is_identity(p_.second_perm);
    if (p1_ && p2_)
      workspace_ = static_cast<size_t>(numel(info.inputs[0].max)) * dtype_size(info.inputs[0].dtype);
  }
  size_t workspace_size() const override { return workspace_; }
  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    Stream s = stream_of(args);
    if (!p1_ && !p2_) {
      if (x.data != y.data && y.nbytes()) {
        KILN_CUDA_CHECK(cudaMemcpyAsync(y.data, x.data, y.nbytes(), cudaMemcpyDeviceToDevice, s));
      }
      return;
    }
    // Stage 1: the first transpose (into the output when nothing follows, else into the workspace).
    const void* r = x.data;
    if (p1_) {
      void* dst = p2_ ? args.workspace : y.data;
      permute_copy(x.data, x.dims, p_.first_perm, dst, x.dtype, s);
      check_launch("shuffle");
      r = dst;
    }
    if (p2_) {
      // The reshaped tensor R has dims with R[second_perm[k]] = y.dims[k].
      Dims rd(y.dims.size());
      for (size_t k = 0; k < y.dims.size(); ++k) rd[p_.second_perm[k]] = y.dims[k];
      permute_copy(r, rd, p_.second_perm, y.data, y.dtype, s);
      check_launch("shuffle");
    }
  }

 private:
  ShuffleParams p_;
  bool p1_ = false, p2_ = false;
  size_t workspace_ = 0;
};

class ConcatKernel : public Kernel {
 public:
  explicit ConcatKernel(const LayerInfo& info) : axis_(info.params<ConcatParams>().axis) {}
  void execute(KernelArgs& args) const override {
    const TensorView& y = args.outputs[0];
    auto ost = row_strides(y.dims);
    int64_t at = 0;
    for (const auto& x : args.inputs) {
      auto ist = row_strides(x.dims);
      launch_strided_copy(x.data, 0, ist.data(), y.data, at * ost[axis_], ost.data(), to_shape(x.dims),
                          esize(y.dtype), stream_of(args));
      check_launch("concat");
      at += x.dims[axis_];
    }
  }

 private:
  int64_t axis_;
};

class SliceKernel : public Kernel {
 public:
  explicit SliceKernel(const LayerInfo& info) : p_(info.params<SliceParams>()) {}
  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    auto host = [&](size_t k, const std::vector<int64_t>& fallback) {
      if (args.input_values.size() <= k || !args.input_values[k]) return fallback;
      const HostTensor& v = *args.input_values[k];
      std::vector<int64_t> out(static_cast<size_t>(v.numel()));
      for (int64_t i = 0; i < v.numel(); ++i) out[i] = static_cast<int64_t>(v.get_as_double(i));
      return out;
    };
    KILN_CHECK(args.inputs.size() < 2 || (args.input_values.size() > 1 && args.input_values[1]), Internal,
               "cuda slice: start is not a host value");
    std::vector<int64_t> start = host(1, p_.start), stride = host(3, p_.stride);
    auto ist = row_strides(x.dims), ost = row_strides(y.dims);
    std::vector<int64_t> st(x.dims.size());
    int64_t base = 0;
    for (size_t k = 0; k < x.dims.size(); ++k) {
      int64_t sv = k < stride.size() ? stride[k] : 1, b = k < start.size() ? start[k] : 0;
      if (b < 0) b += x.dims[k];
      st[k] = sv * ist[k];
      base += b * ist[k];
    }
    launch_strided_copy(x.data, base, st.data(), y.data, 0, ost.data(), to_shape(y.dims), esize(y.dtype),
                        stream_of(args));
    check_launch("slice");
  }

 private:
  SliceParams p_;
};

class GatherKernel : public Kernel {
 public:
  explicit GatherKernel(const LayerInfo& info) : p_(info.params<GatherParams>()) {}
  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &idx = args.inputs[1], &y = args.outputs[0];
    if (p_.mode == GatherParams::Elements) {
      launch_gather_elements(x.data, to_shape(x.dims), idx.data, dcode(idx.dtype), to_shape(idx.dims),
                             static_cast<int>(p_.axis), y.data, esize(y.dtype), stream_of(args));
    } else {
      int64_t outer = 1, inner = 1;
      for (int64_t k = 0; k < p_.axis; ++k) outer *= x.dims[k];
      for (size_t k = p_.axis + 1; k < x.dims.size(); ++k) inner *= x.dims[k];
      launch_gather(x.data, idx.data, dcode(idx.dtype), y.data, outer, x.dims[p_.axis], inner, idx.numel(),
                    esize(y.dtype), stream_of(args));
    }
    check_launch("gather");
  }

 private:
  GatherParams p_;
};

class PaddingKernel : public Kernel {
 public:
  explicit PaddingKernel(const LayerInfo& info) : p_(info.params<PaddingParams>()) {
    HostTensor v(info.outputs[0].dtype, {1});
    v.set_from_double(0, p_.value);
    std::memcpy(&fill_, v.data(), v.nbytes());
  }
  void execute(KernelArgs& args) const override {
    const TensorView &x = args.inputs[0], &y = args.outputs[0];
    int mode = p_.mode == PaddingParams::Constant    ? 0
               : p_.mode == PaddingParams::Reflect   ? 1
               : p_.mode == PaddingParams::Replicate ? 2
                                                     : 3;
    std::vector<int64_t> pre(x.dims.size(), 0);
    for (size_t k = 0; k < pre.size() && k < p_.pre.size(); ++k) pre[k] = p_.pre[k];
    launch_pad(x.data, to_shape(x.dims), y.data, to_shape(y.dims), pre.data(), mode, fill_, esize(y.dtype),
               stream_of(args));
    check_launch("padding");
  }

 private:
  PaddingParams p_;
  uint64_t fill_ = 0;
};

bool applies(const LayerInfo& layer, std::string* why) { return ranks_fit(layer, why); }

/// The Shuffle's formats: E4M3 in and out where it only reshapes an E4M3 input (the codes keep their order,
/// so the plan makes it a view, and else the kernel copies its bytes); Plain otherwise.
TacticFormats shuffle_formats(const LayerInfo& layer) {
  const auto& p = layer.params<ShuffleParams>();
  if (layer.inputs.empty() || layer.inputs[0].format != TensorFormat::E4M3 || !is_identity(p.first_perm) ||
      !is_identity(p.second_perm))
    return {};
  TacticFormats f;
  f.inputs.assign(layer.inputs.size(), TensorFormat::Plain);
  f.inputs[0] = TensorFormat::E4M3;
  f.outputs.assign(layer.outputs.size(), TensorFormat::E4M3);
  return f;
}

template <typename K>
std::unique_ptr<Kernel> make(const LayerInfo& layer) {
  return std::make_unique<K>(layer);
}

}  // namespace

void register_movement(KernelTable& rows) {
  rows.add({.name = "generic",
            .kind = LayerKind::Shuffle,
            .applies = &applies,
            .create = &make<ShuffleKernel>,
            .formats = &shuffle_formats});
  rows.add({"generic", LayerKind::Concat, &applies, &make<ConcatKernel>});
  rows.add({"generic", LayerKind::Slice, &applies, &make<SliceKernel>});
  rows.add({"generic", LayerKind::Gather, &applies, &make<GatherKernel>});
  rows.add({"generic", LayerKind::Padding, &applies, &make<PaddingKernel>});
}

}  // namespace kiln::engine::cuda
