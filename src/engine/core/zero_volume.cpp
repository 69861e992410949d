#include "engine/core/zero_volume.h"

#include <algorithm>
#include <cstring>

#include "engine/ops/reference.h"
#include "kiln/support/error.h"

namespace kiln::engine {

bool is_empty_dims(const Dims& dims) {
  return std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d == 0; });
}

bool always_empty(const Plan::Impl& plan, int64_t li) {
  if (plan.profiles.empty()) return false;
  const PlanProfile& p = plan.profiles[0];
  const Layer& l = plan.layers[li].layer;
  for (const auto* ids : {&l.inputs, &l.outputs}) {
    for (int64_t id : *ids) {
      if (static_cast<size_t>(id) < p.max.size() && is_empty_dims(p.max[id])) return true;
    }
  }
  return false;
}

bool any_empty(const std::vector<TensorView>& views) {
  return std::any_of(views.begin(), views.end(), [](const TensorView& v) { return is_empty_dims(v.dims); });
}

void run_zero_volume(const Backend& backend, const Layer& layer, KernelArgs& args) {
  if (std::all_of(args.outputs.begin(), args.outputs.end(),
                  [](const TensorView& v) { return is_empty_dims(v.dims); })) {
    return;  // nothing to write (a data-dependent output keeps the dims the context gave it: 0 rows)
  }
  for (const auto* views : {&args.inputs, &args.outputs}) {
    for (const TensorView& v : *views) {
      KILN_CHECK(is_empty_dims(v.dims) || v.format == TensorFormat::Plain, Unsupported, "layer '", layer.name,
                 "' has an empty tensor and a tensor in a blocked memory format; the reference implementation "
                 "that runs layers with empty tensors reads plain tensors only");
    }
  }
  if (backend.host_accessible()) {
    KernelArgs host = args;
    host.pool = nullptr;
    host.state = nullptr;
    ops::execute(layer, host);
    return;
  }
  // A device backend: inputs down, the reference on the host, outputs up (synchronously; rare).
  backend.synchronize(args.stream);
  std::vector<std::vector<uint8_t>> storage;
  storage.reserve(args.inputs.size() + args.outputs.size());
  KernelArgs host;
  for (const TensorView& v : args.inputs) {
    storage.emplace_back(v.nbytes());
    if (v.nbytes() > 0) backend.copy(storage.back().data(), v.data, v.nbytes(), CopyKind::DeviceToHost, args.stream);
    host.inputs.push_back({storage.back().data(), v.dtype, v.dims, v.format});
  }
  host.input_values = args.input_values;
  for (const TensorView& v : args.outputs) {
    storage.emplace_back(v.nbytes());
    host.outputs.push_back({storage.back().data(), v.dtype, v.dims, v.format});
  }
  backend.synchronize(args.stream);
  ops::execute(layer, host);
  for (size_t o = 0; o < args.outputs.size(); ++o) {
    const TensorView& v = args.outputs[o];
    if (v.nbytes() > 0) backend.copy(v.data, host.outputs[o].data, v.nbytes(), CopyKind::HostToDevice, args.stream);
  }
  backend.synchronize(args.stream);
}

}  // namespace kiln::engine
