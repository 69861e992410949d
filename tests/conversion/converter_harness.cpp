#include "conversion/converter_harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>

#include "kiln/conversion/registry.h"
#include "kiln/conversion/segment_conversion.h"
#include "kiln/engine/backend.h"
#include "kiln/engine/builder.h"
#include "kiln/engine/execution_context.h"
#include "kiln/engine/layers.h"
#include "kiln/engine/plan.h"
#include "kiln/ir/text.h"
#include "kiln/runtime/libtorch_node_executor.h"
#include "kiln/support/dtype.h"
#include "kiln/support/error.h"

namespace kiln::conversion::testing {

std::set<std::string>& tested_targets() {
  static std::set<std::string> targets;
  return targets;
}

std::map<std::string, CaseList (*)()>& case_families() {
  static std::map<std::string, CaseList (*)()> families;
  return families;
}

int register_cases(const std::string& family, CaseList (*make)()) {
  case_families()[family] = make;
  return 0;
}

std::set<std::string> case_targets(const ConverterCase& c) {
  std::set<std::string> out;
  auto g = ir::parse_graph(c.ir);
  for (const ir::Node* n : g->nodes()) out.insert(ir::canonical_op_name(n->target()));
  return out;
}

std::string one_op(const std::string& in_type, const std::string& call, const std::string& out_type,
                   const std::string& extra) {
  return "graph(%x: " + in_type + ") {\n" + extra + "  %y: " + out_type + " = " + call + "\n  return (%y)\n}\n";
}

std::vector<std::string> test_backends() {
  const char* list = std::getenv("KILN_TEST_BACKENDS");
  if (list == nullptr || *list == '\0') return {"cpu"};
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string name;
  while (std::getline(ss, name, ',')) {
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out.empty() ? std::vector<std::string>{"cpu"} : out;
}

std::string backend_unavailable(const std::string& name) {
  static std::map<std::string, std::string> why;  // backend -> "" or why it cannot be created
  auto it = why.find(name);
  if (it == why.end()) {
    std::string reason;
    try {
      engine::create_backend(name, engine::BackendOptions{2});
    } catch (const Error& e) {
      reason = e.message();
      if (reason.empty()) reason = "creating the backend failed";
    }
    it = why.emplace(name, reason).first;
  }
  return it->second;
}

bool reduced_precision(const ConverterCase& c) {
  return c.settings.enabled_precisions.count(settings::Precision::F16) != 0 ||
         c.settings.enabled_precisions.count(settings::Precision::BF16) != 0;
}

HostTensor random_input(DType dtype, const std::vector<int64_t>& sizes, const InputFill& fill, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(fill.lo, fill.hi);
  HostTensor t(dtype, sizes);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (!fill.values.empty()) {
      t.set_from_double(i, fill.values[static_cast<size_t>(i) % fill.values.size()]);
      continue;
    }
    double v = dist(rng);
    if (dtype == DType::Bool) v = v >= 0 ? 1 : 0;  // the fill range sets the share of true values
    else if (!is_floating(dtype)) v = std::floor(v);
    if (is_floating(dtype) && fill.nonfinite_every > 0 && i % fill.nonfinite_every == fill.nonfinite_at) {
      static const double kNonFinite[3] = {NAN, INFINITY, -INFINITY};
      v = kNonFinite[(i / fill.nonfinite_every) % 3];
    }
    t.set_from_double(i, v);
  }
  return t;
}

namespace {

// Gives constants parsed without data random values (weights) of their static shape.
void fill_constants(ir::Graph& g, uint32_t seed) {
  uint32_t k = 0;
  for (ir::Value* c : g.constants()) {
    if (c->data().defined()) continue;
    auto sizes = c->meta().static_sizes();
    ASSERT_TRUE(sizes.has_value()) << "constant " << c->name() << " needs a static shape";
    InputFill f{-1.0, 1.0};
    // Variances of batch norm must be positive.
    if (c->name().find("var") != std::string::npos) f = InputFill{0.5, 2.0};
    c->set_data(random_input(c->meta().dtype, *sizes, f, seed + 1000 + k++));
  }
}

void expect_close(const HostTensor& got, const HostTensor& want, double rtol, double atol, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what << ": shape";
  ASSERT_EQ(got.dtype(), want.dtype()) << what << ": dtype";
  int bad = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.get_as_double(i), w = want.get_as_double(i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (std::isinf(w) && g == w) continue;
    if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w))) {
      if (++bad <= 5) ADD_FAILURE() << what << ": element " << i << " got " << g << " want " << w;
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << want.numel() << " elements differ";
}

// The reduced-precision check: max_i |got_i - want_i| / max_i |want_i| <= kReducedPrecisionMaxRelError, the error
// relative to the reference's magnitude. Not element-wise: an output near zero that sums terms of magnitude ~1
// carries an absolute error of ~2^-9 x sum |terms| in bf16, which no element-wise relative bound can take.
void expect_max_relative_error(const HostTensor& got, const HostTensor& want, const std::string& what) {
  ASSERT_EQ(got.numel(), want.numel()) << what;
  double max_err = 0.0, max_ref = 0.0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.get_as_double(i), w = want.get_as_double(i);
    max_err = std::max(max_err, std::isnan(g) != std::isnan(w) ? INFINITY : std::isnan(w) ? 0.0 : std::fabs(g - w));
    if (!std::isnan(w)) max_ref = std::max(max_ref, std::fabs(w));
  }
  const double rel = max_ref > 0 ? max_err / max_ref : max_err;
  EXPECT_LE(rel, kReducedPrecisionMaxRelError)
      << what << ": max relative error " << rel << " (max abs error " << max_err << ", reference max |x| " << max_ref
      << ")";
}

// The outputs `got` would have if every element were `f` of the single input's element.
std::vector<HostTensor> apply_elementwise(const std::function<double(double)>& f, const HostTensor& input,
                                          const std::vector<HostTensor>& got) {
  std::vector<HostTensor> want;
  for (const HostTensor& g : got) {
    HostTensor w(g.dtype(), g.sizes());
    KILN_CHECK(w.numel() == input.numel(), InvalidInput, "elementwise reference: output of ", w.numel(),
               " elements for an input of ", input.numel());
    for (int64_t i = 0; i < w.numel(); ++i) w.set_from_double(i, f(input.get_as_double(i)));
    want.push_back(std::move(w));
  }
  return want;
}

// Collects a data-dependent output (nonzero): a buffer on the plan's backend of the size the context asks for,
// and the dims it reports.
class BufferAllocator : public engine::OutputAllocator {
 public:
  explicit BufferAllocator(std::function<void*(size_t)> allocate) : allocate_(std::move(allocate)) {}
  void* reallocate_output(const std::string&, size_t bytes) override {
    if (data_ == nullptr || bytes > bytes_) {
      data_ = allocate_(bytes);
      bytes_ = bytes;
    }
    return data_;
  }
  void notify_shape(const std::string&, const engine::Dims& dims) override { dims_ = dims; }
  void* data() const { return data_; }
  const engine::Dims& dims() const { return dims_; }

 private:
  std::function<void*(size_t)> allocate_;
  void* data_ = nullptr;
  size_t bytes_ = 0;
  engine::Dims dims_;
};

// Runs `plan` on host inputs: on a backend whose memory the host cannot address (cuda), through device buffers
// (inputs copied in, outputs copied back after the stream is done). Data-dependent outputs go through an output
// allocator.
std::vector<HostTensor> execute_on_backend(const std::shared_ptr<engine::Plan>& plan,
                                           const std::vector<std::string>& input_bindings,
                                           const std::vector<std::string>& output_bindings,
                                           const std::vector<HostTensor>& inputs) {
  static std::map<std::string, std::unique_ptr<engine::Backend>> backends;
  std::unique_ptr<engine::Backend>& device = backends[plan->backend_name()];
  if (!device) device = engine::create_backend(plan->backend_name(), engine::BackendOptions{2});
  const bool on_device = !device->host_accessible();
  std::vector<void*> buffers;
  auto device_buffer = [&](size_t bytes) {
    buffers.push_back(device->allocate(std::max<size_t>(bytes, 1)));
    return buffers.back();
  };
  std::vector<HostTensor> got;
  try {
    engine::ExecutionContext ctx(plan);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::string& name = input_bindings[i];
      ctx.set_input_shape(name, inputs[i].sizes());
      void* p = const_cast<uint8_t*>(inputs[i].data());
      if (on_device) {
        p = device_buffer(inputs[i].nbytes());
        device->copy(p, inputs[i].data(), inputs[i].nbytes(), engine::CopyKind::HostToDevice, nullptr);
      }
      ctx.set_tensor_address(name, p);
    }
    std::vector<void*> outputs;
    std::vector<std::unique_ptr<BufferAllocator>> allocators(output_bindings.size());
    for (size_t k = 0; k < output_bindings.size(); ++k) {
      const std::string& name = output_bindings[k];
      if (plan->binding(name).data_dependent) {
        allocators[k] = std::make_unique<BufferAllocator>(device_buffer);
        ctx.set_output_allocator(name, allocators[k].get());
        got.emplace_back();
        outputs.push_back(nullptr);
        continue;
      }
      engine::Dims d = ctx.tensor_shape(name);
      got.emplace_back(plan->binding(name).dtype, d);
      outputs.push_back(on_device ? device_buffer(got.back().nbytes()) : got.back().mutable_data());
      ctx.set_tensor_address(name, outputs.back());
    }
    ctx.execute();
    for (size_t k = 0; k < got.size(); ++k) {
      if (!allocators[k]) continue;
      device->synchronize(nullptr);
      got[k] = HostTensor(plan->binding(output_bindings[k]).dtype, allocators[k]->dims());
      outputs[k] = allocators[k]->data();
      if (!on_device && got[k].nbytes() > 0) std::memcpy(got[k].mutable_data(), outputs[k], got[k].nbytes());
    }
    if (on_device) {
      for (size_t k = 0; k < got.size(); ++k) {
        if (got[k].nbytes() == 0) continue;
        device->copy(got[k].mutable_data(), outputs[k], got[k].nbytes(), engine::CopyKind::DeviceToHost, nullptr);
      }
      device->synchronize(nullptr);
    }
  } catch (...) {
    for (void* b : buffers) device->deallocate(b);
    throw;
  }
  for (void* b : buffers) device->deallocate(b);
  return got;
}

}  // namespace

void check_converter_case(const ConverterCase& c) {
  // A backend asked for that this machine lacks (cuda without a GPU, or a build without it): skip, saying why.
  const std::vector<std::string> backends = test_backends();
  for (const std::string& backend : backends) {
    if (backend == "cpu") continue;
    const std::string why = backend_unavailable(backend);
    if (!why.empty()) GTEST_SKIP() << "backend '" << backend << "' is not available here: " << why;
  }
  const bool reduced = reduced_precision(c);
  std::unique_ptr<ir::Graph> graph;
  try {
    graph = ir::parse_graph(c.ir);
  } catch (const Error& e) {
    FAIL() << "IR does not parse: " << e.what();
  }
  fill_constants(*graph, c.seed);
  for (const ir::Node* n : graph->nodes()) tested_targets().insert(ir::canonical_op_name(n->target()));

  std::unique_ptr<ir::Graph> reference;
  if (!c.reference_ir.empty()) {
    reference = ir::parse_graph(c.reference_ir);
    for (ir::Value* v : reference->constants()) {
      const ir::Value* same = graph->find_value(v->name());
      ASSERT_TRUE(same != nullptr && same->role() == ir::ValueRole::Constant) << "reference constant " << v->name();
      v->set_data(same->data());
    }
  }

  // Shapes of each run.
  std::vector<const ir::Value*> tensor_inputs;
  for (const ir::Value* v : graph->inputs()) {
    ASSERT_TRUE(v->is_tensor()) << "harness graphs take tensor inputs only";
    tensor_inputs.push_back(v);
  }
  std::vector<std::vector<std::vector<int64_t>>> runs = c.runs;
  if (runs.empty()) {
    std::vector<std::vector<int64_t>> shapes;
    for (const ir::Value* v : tensor_inputs) {
      auto s = v->meta().static_sizes();
      ASSERT_TRUE(s.has_value()) << "a dynamic graph needs explicit run shapes";
      shapes.push_back(*s);
    }
    runs.push_back(shapes);
  }

  InterpreterResult converted;
  try {
    converted = Interpreter(*graph, c.settings, c.options).run();
  } catch (const Error& e) {
    FAIL() << "conversion failed: " << e.what();
  }

  for (const std::string& backend : backends) {
    SCOPED_TRACE("backend " + backend);
    engine::BuilderConfig config;
    config.backend = backend;
    config.precisions = builder_config_from_settings(c.settings).precisions;
    config.threads = 2;
    config.timing_iterations = 1;
    if (converted.dynamic) config.profiles.push_back(converted.profile);
    adapt_config_to_network(config, *converted.network);
    std::shared_ptr<engine::Plan> plan;
    try {
      plan = engine::Builder(config).build(*converted.network);
    } catch (const Error& e) {
      FAIL() << "build failed: " << e.what() << "\n" << converted.network->to_string();
    }
    if (reduced) {
      // Weakly typed reduced precision lowers the whole plan and casts the fp32 inputs down: without such a cast
      // the case would compare fp32 with fp32.
      const bool fp16 = c.settings.enabled_precisions.count(settings::Precision::F16) != 0;  // the builder prefers fp16
      const std::string to = dtype_name(fp16 ? DType::Float16 : DType::BFloat16);
      bool cast_down = false;
      for (const engine::PlanLayerInfo& l : plan->layers()) {
        cast_down |= l.kind == engine::LayerKind::Cast && l.detail == "to=" + to + ";";  // CastParams as text
      }
      EXPECT_TRUE(cast_down) << "no input is cast to " << to << ": the plan does not run in reduced precision";
    }
    for (size_t r = 0; r < runs.size(); ++r) {
      SCOPED_TRACE("run " + std::to_string(r));
      ASSERT_EQ(runs[r].size(), tensor_inputs.size()) << "run shapes";
      std::vector<HostTensor> inputs;
      for (size_t i = 0; i < tensor_inputs.size(); ++i) {
        auto fill = c.fills.count(i) ? c.fills.at(i) : InputFill{};
        inputs.push_back(random_input(tensor_inputs[i]->meta().dtype, runs[r][i], fill,
                                      c.seed + static_cast<uint32_t>(17 * r + i)));
      }
      std::vector<HostTensor> got;
      try {
        got = execute_on_backend(plan, converted.input_bindings, converted.output_bindings, inputs);
      } catch (const Error& e) {
        FAIL() << "execution failed: " << e.what();
      }
      std::vector<HostTensor> want;
      try {
        want = c.elementwise_reference ? apply_elementwise(c.elementwise_reference, inputs.at(0), got)
                                       : runtime::run_in_libtorch(reference ? *reference : *graph, inputs);
      } catch (const Error& e) {
        FAIL() << "reference failed: " << e.what();
      }
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < got.size(); ++k) {
        HostTensor w = want[k];
        // SymInt outputs come back from the reference as 0-d, from the engine as [1].
        if (w.dim() == 0 && got[k].dim() == 1) w = w.reshaped({1});
        if (w.dtype() != got[k].dtype()) w = w.to(got[k].dtype());
        if (got[k].sizes() != w.sizes() && w.dim() > 0) {
          ADD_FAILURE() << "output " << k << ": shape " << got[k].describe() << ", torch " << w.describe();
          continue;
        }
        if (reduced) {
          expect_max_relative_error(got[k], w, "output " + std::to_string(k));
        } else {
          expect_close(got[k], w, c.rtol, c.atol, "output " + std::to_string(k));
        }
      }
    }
  }
}

}  // namespace kiln::conversion::testing
