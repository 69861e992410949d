#pragma once
// Helpers for the vec pointwise kernel tests that compare with the reference kernel byte for byte: layer
// inputs of any dtype, a single layer, running a tactic or the reference, expect_exact.

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/backends/cpu/kernels/kernel_test_util.h"

namespace kiln::engine::cpu::testing {

/// One layer input: its dtype, dims and bytes.
struct Operand {
  DType dtype = DType::Float32;
  Dims dims;
  std::vector<uint8_t> bytes;
};

inline Operand floats(const Dims& dims, const std::vector<float>& v) {
  Operand o{DType::Float32, dims, std::vector<uint8_t>(v.size() * 4)};
  std::memcpy(o.bytes.data(), v.data(), o.bytes.size());
  return o;
}

inline Operand random_bools(const Dims& dims, uint32_t seed) {
  std::mt19937 gen(seed);
  Operand o{DType::Bool, dims, std::vector<uint8_t>(static_cast<size_t>(numel(dims)))};
  for (uint8_t& b : o.bytes) b = static_cast<uint8_t>(gen() & 1u);
  return o;
}

template <class P>
Layer single(LayerKind kind, P params) {
  Layer l;
  l.name = "single";
  l.kind = kind;
  l.params = params;
  return l;
}

inline LayerInfo info_of(const Layer& layer, const std::vector<Operand>& in) {
  LayerInfo li;
  li.layer = &layer;
  std::vector<ShapeIn> shapes;
  for (const Operand& o : in) {
    li.inputs.push_back(TensorInfo{"in", o.dtype, o.dims, o.dims, o.dims});
    shapes.push_back(ShapeIn{o.dtype, o.dims, nullptr});
  }
  ShapeOut y = infer_shapes(layer, shapes).at(0);
  li.outputs.push_back(TensorInfo{"out", y.dtype, y.dims, y.dims, y.dims});
  return li;
}

/// The output bytes of `tactic` ("vec", or "ref" for the reference kernel) on `in`, with `threads` threads.
inline std::vector<uint8_t> run_layer(const Layer& layer, const std::string& tactic,
                                      const std::vector<Operand>& in, int threads) {
  const LayerInfo li = info_of(layer, in);
  const TensorInfo& out = li.outputs[0];
  std::vector<uint8_t> y(static_cast<size_t>(numel(out.opt)) * dtype_size(out.dtype), 0xAB);
  std::vector<Operand> inputs = in;  // the views are mutable
  KernelArgs args;
  for (Operand& o : inputs) args.inputs.push_back(TensorView{o.bytes.data(), o.dtype, o.dims});
  args.outputs.push_back(TensorView{y.data(), out.dtype, out.opt});
  if (tactic == "ref") {
    ops::execute(layer, args);
    return y;
  }
  const KernelRow& r = row(layer.kind, tactic);
  std::string why;
  EXPECT_TRUE(r.runs(li, &why)) << tactic << " refuses: " << why;
  auto kernel = r.create(li);
  auto state = kernel->create_state();
  ThreadPool pool(threads);
  args.pool = &pool;
  args.state = state.get();
  kernel->execute(args);
  return y;
}

/// vec's output is the reference's, byte for byte, with 1 and 2 threads.
inline void expect_exact(const Layer& layer, const std::vector<Operand>& in, const std::string& what) {
  const std::vector<uint8_t> want = run_layer(layer, "ref", in, 1);
  for (int threads : {1, 2}) {
    const std::vector<uint8_t> got = run_layer(layer, "vec", in, threads);
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != want[i]) {
        ADD_FAILURE() << what << " (" << threads << " threads): byte " << i << " got " << int(got[i])
                      << " want " << int(want[i]);
        break;
      }
    }
  }
}

}  // namespace kiln::engine::cpu::testing
