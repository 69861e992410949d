#include "engine/ops/reference.h"

#include "engine/ops/common.h"

namespace kiln::engine::ops {

std::vector<HostTensor> evaluate(const Layer& layer, const std::vector<HostTensor>& inputs) {
  std::vector<ShapeIn> shape_in;
  for (const auto& t : inputs) shape_in.push_back({t.dtype(), t.sizes(), &t});
  std::vector<ShapeOut> outs = infer_shapes(layer, shape_in);
  KernelArgs args;
  for (const auto& t : inputs) args.inputs.push_back({const_cast<uint8_t*>(t.data()), t.dtype(), t.sizes()});
  std::vector<HostTensor> results;
  for (const auto& o : outs) {
    Dims d = o.dims;
    if (o.data_dependent) d = {inputs.at(0).numel(), static_cast<int64_t>(inputs.at(0).dim())};
    for (int64_t x : d) KILN_CHECK(x >= 0, Internal, "host evaluation of a layer with unknown output dims");
    results.emplace_back(o.dtype, d);
  }
  for (auto& r : results) args.outputs.push_back({r.mutable_data(), r.dtype(), r.sizes()});
  execute(layer, args);
  for (size_t i = 0; i < results.size(); ++i) {
    if (args.outputs[i].dims != results[i].sizes()) {
      HostTensor t(results[i].dtype(), args.outputs[i].dims);
      if (t.nbytes()) std::memcpy(t.mutable_data(), results[i].data(), t.nbytes());
      results[i] = t;
    }
  }
  return results;
}

}  // namespace kiln::engine::ops
