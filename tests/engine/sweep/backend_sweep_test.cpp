// The backend-conformance sweep (docs/engine.md, "Backend conformance sweep"): every tactic of the backend
// under test ($KILN_TEST_BACKEND, default cpu; ctest's kiln_engine_gpu_tests runs it on cuda) on every case
// of one list, against the reference. Fails on any difference beyond the dtype's tolerance, and (unfiltered)
// when a registered kernel row is exercised by no case.

#include <gtest/gtest.h>

#include <iostream>
#include <map>

#include "engine/backends/cpu/kernel_registry.h"
#include "engine/engine_test_util.h"
#include "engine/sweep/sweep.h"
#ifdef KILN_HAVE_CUDA
#include "engine/backends/cuda/cuda_util.h"
#endif

namespace kiln::engine::sweep {
namespace {

/// The cpu backend with every kernel miswired the way kernel bugs look: output element 0 off by one, the
/// output never written, or off by one only once re-created from its plan data (a kernel that stores plan
/// data wrongly). The driver must report each tactic it runs.
class MiswiredBackend : public Backend {
 public:
  enum Fault { OffByOne, NoWrite, OffByOneWhenLoaded };
  MiswiredBackend(const Backend& base, Fault fault) : base_(base), fault_(fault) {}
  std::string name() const override { return "miswired"; }
  std::string device() const override { return base_.device(); }
  bool supports(const LayerInfo& l, std::string* why) const override { return base_.supports(l, why); }
  bool supports_precision(LayerKind k, DType d) const override { return base_.supports_precision(k, d); }
  std::vector<Tactic> tactics(const LayerInfo& l) const override { return base_.tactics(l); }
  TacticFormats formats(const LayerInfo& l, const std::string& t) const override {
    return base_.formats(l, t);
  }
  std::unique_ptr<Kernel> create_kernel(const LayerInfo& l, const std::string& t) const override {
    bool wrong = fault_ != OffByOneWhenLoaded || l.plan_data != nullptr;
    return std::make_unique<Wrong>(base_.create_kernel(l, t), wrong ? fault_ : OffByOneWhenLoaded, wrong);
  }
  ThreadPool* thread_pool() const override { return base_.thread_pool(); }
  void* allocate(size_t bytes) const override { return base_.allocate(bytes); }
  void deallocate(void* p) const override { base_.deallocate(p); }

 private:
  struct Wrong : Kernel {
    Wrong(std::unique_ptr<Kernel> k, Fault f, bool w) : inner(std::move(k)), fault(f), wrong(w) {}
    size_t workspace_size() const override { return inner->workspace_size(); }
    std::unique_ptr<KernelState> create_state() const override { return inner->create_state(); }
    void execute(KernelArgs& args) const override {
      if (wrong && fault == NoWrite) return;
      inner->execute(args);
      if (wrong) args.outputs[0].as<float>()[0] += 1.0f;
    }
    std::vector<uint8_t> plan_data() const override { return {1}; }
    std::unique_ptr<Kernel> inner;
    Fault fault;
    bool wrong;
  };
  const Backend& base_;
  Fault fault_;
};

TEST(BackendSweep, DriverReportsEveryWrongTactic) {
  std::unique_ptr<Backend> cpu = create_backend("cpu", BackendOptions{1});
  SweepCase relu{
      "relu", make_layer(LayerKind::Activation, ActivationParams{ActivationKind::Relu}), {in({3, 5})}};
  const size_t tactics = 2;  // cpu "vec" and "ref"
  for (auto fault :
       {MiswiredBackend::OffByOne, MiswiredBackend::NoWrite, MiswiredBackend::OffByOneWhenLoaded}) {
    MiswiredBackend wrong(*cpu, fault);
    SweepReport report;
    run_case(wrong, relu, SweepFilter{}, report);
    EXPECT_EQ(report.runs, static_cast<int64_t>(tactics));
    // Always wrong: the untimed, the tuned and the loaded kernel of each tactic; wrong when loaded: the last.
    size_t wrong_kernels = fault == MiswiredBackend::OffByOneWhenLoaded ? 1 : 3;
    EXPECT_EQ(report.failures.size(), tactics * wrong_kernels)
        << (report.failures.empty() ? "" : report.failures[0]);
  }
  SweepReport report;
  run_case(*cpu, relu, SweepFilter{}, report);
  EXPECT_TRUE(report.failures.empty());
  EXPECT_EQ(report.exercised.size(), tactics);
}

TEST(BackendSweep, RegisteredRowWithoutCaseFails) {
  const RowId a{LayerKind::Softmax, "ref"}, b{LayerKind::Softmax, "new_tactic"},
      c{LayerKind::Softmax, "avx512_only"};
  SweepReport report;
  report.exercised = {a};
  EXPECT_EQ(unexercised_rows({a, b, c}, report, SweepFilter{}, {{c, "needs avx512"}}), std::vector<RowId>{b});
  EXPECT_TRUE(
      unexercised_rows({a, b, c}, report, SweepFilter{"softmax", "", ""}, {}).empty());  // narrowed run
}

// A row that refuses a layer says why in a short phrase (KernelRow::applies): the reason reaches
// TableBackend::supports' message and the builder's verbose log. Every cpu row, on every sweep case of its
// kind (the f16 and bf16 variants, other formats and dims, layers without dynamic ranges for the INT8 rows).
TEST(BackendSweep, EveryRefusingCpuRowSaysWhy) {
  Refusals refusals;
  for (const SweepCase& c : sweep_cases()) collect_refusals(cpu::cpu_kernels(), c, refusals);
  EXPECT_GT(refusals.count, 0);
  for (const std::string& s : refusals.silent) ADD_FAILURE() << s << " refuses the layer without saying why";
}

// The same for every cuda row, where the backend is built: a row's predicate reads only the layer (and, for
// the flash and nvrtc rows, the device or library it finds), so no GPU is needed to ask it.
TEST(BackendSweep, EveryRefusingCudaRowSaysWhy) {
#ifndef KILN_HAVE_CUDA
  GTEST_SKIP() << "built without the cuda backend";
#else
  Refusals refusals;
  for (const SweepCase& c : sweep_cases()) collect_refusals(cuda::cuda_kernels(), c, refusals);
  EXPECT_GT(refusals.count, 0);
  for (const std::string& s : refusals.silent) ADD_FAILURE() << s << " refuses the layer without saying why";
#endif
}

TEST(BackendSweep, CaseNamesAreUnique) {
  std::map<std::string, int> seen;
  for (const SweepCase& c : sweep_cases()) {
    EXPECT_EQ(seen[std::string(layer_kind_name(c.layer.kind)) + "/" + c.name]++, 0)
        << "duplicate case " << c.name;
  }
}

TEST(BackendSweep, EveryTacticAgainstReference) {
  const std::string name = testing::test_backend();
  std::string why;
  const Backend* backend = testing::shared_backend(name, &why);
  if (!backend) GTEST_SKIP() << "backend " << name << " unavailable here: " << why;
  // KILN_SWEEP_THREADS=16: the CPU kernels split their work for another thread count (oneDNN picks its split
  // by it); the default is the shared test backend's 2.
  std::unique_ptr<Backend> own;
  if (const char* threads = std::getenv("KILN_SWEEP_THREADS")) {
    own = create_backend(name, BackendOptions{std::atoi(threads)});
    backend = own.get();
  }
  const SweepFilter filter = SweepFilter::from_environment();
  SweepReport report;
  for (const SweepCase& c : sweep_cases()) run_case(*backend, c, filter, report);
  for (const std::string& f : report.failures) ADD_FAILURE() << f;

  const std::vector<RowId> rows = registered_rows(name);
  const auto hardware = hardware_dependent_rows(name);
  for (const RowId& row : unexercised_rows(rows, report, filter, hardware)) {
    ADD_FAILURE() << name << " kernel row " << layer_kind_name(row.first) << " '" << row.second
                  << "' is registered but no sweep case exercises it: add a case it applies to "
                     "(tests/engine/sweep/sweep_cases_*.cpp)";
  }
  for (const auto& [row, reason] : hardware) {
    if (!report.exercised.count(row) && !filter.active()) {
      std::cout << "[sweep] " << name << " row " << layer_kind_name(row.first) << " '" << row.second
                << "' applied to no case on this machine: " << reason << "\n";
    }
  }
  size_t exercised = 0;
  for (const RowId& row : rows) exercised += report.exercised.count(row);
  std::string coverage = std::to_string(exercised) + "/" + std::to_string(rows.size()) + " rows exercised, " +
                         std::to_string(report.runs) + " (tactic, case) runs";
  std::cout << "[sweep] " << name << " coverage: " << coverage << (filter.active() ? " (filtered)" : "")
            << "\n";
  RecordProperty("coverage", coverage);
  if (std::getenv("KILN_SWEEP_VERBOSE")) {
    for (const std::string& n : report.log) std::cout << "[sweep] " << n << "\n";
    for (const auto& [row, dtypes] : report.dtypes) {
      std::cout << "[sweep] row " << layer_kind_name(row.first) << " '" << row.second << "' computed";
      for (const std::string& d : dtypes) std::cout << " " << d;
      std::cout << "\n";
    }
    for (const std::string& n : report.notes) std::cout << "[sweep] " << n << "\n";
  }
}

}  // namespace
}  // namespace kiln::engine::sweep
