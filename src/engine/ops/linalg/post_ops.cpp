#include "engine/ops/linalg/post_ops.h"

#include "engine/ops/scalar_ops.h"
#include "engine/ops/shape_inference.h"

namespace kiln::engine::ops {

void finish_linalg(const Layer& layer, const std::vector<PostOp>& post_ops, KernelArgs& args,
                   std::vector<float>& acc, const std::function<int64_t(int64_t)>& channel_of) {
  const Weights* bias = layer.weights.size() > 1 && layer.weights[1].defined() ? &layer.weights[1] : nullptr;
  if (bias) {
    std::vector<float> b = host_floats(bias->value);
    for (size_t i = 0; i < acc.size(); ++i) acc[i] += b[channel_of(static_cast<int64_t>(i))];
  }
  int64_t next = first_residual_input(layer);
  for (const PostOp& op : post_ops) {
    if (op.kind == PostOp::Sum) {
      std::vector<float> r = load_floats(args.inputs[next++]);
      for (size_t i = 0; i < acc.size(); ++i) acc[i] += static_cast<float>(op.scale) * r[i];
    } else {
      for (float& v : acc) v = static_cast<float>(apply_activation(op.activation, v));
    }
  }
  store_floats(args.outputs[0], acc);
}

}  // namespace kiln::engine::ops
