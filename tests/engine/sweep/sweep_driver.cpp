// The sweep's driver: builds each case's layer, runs the reference and every tactic the backend offers,
// compares.

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>

#include "engine/core/zero_volume.h"
#include "engine/ops/reference.h"
#include "engine/ops/shape_inference.h"
#include "engine/sweep/sweep.h"
#include "engine/sweep/sweep_values.h"
#include "kiln/support/error.h"

namespace kiln::engine::sweep {
namespace {

/// The dims of one run: per input, and per output the dims its buffer is allocated with (a data-dependent
/// output: its maximum row count).
struct RunShape {
  std::vector<Dims> inputs, outputs;
};

/// The layer built in a one-layer network (validated, output dtypes and dims inferred), its LayerInfo over
/// the range of the case's runs, and the runs.
struct BuiltCase {
  Network net;
  const Layer* layer = nullptr;
  LayerInfo info;
  std::vector<RunShape> runs;
};

RunShape run_shape(const Layer& layer, const std::vector<InputSpec>& specs, const std::vector<Dims>& dims) {
  KILN_CHECK(dims.size() == specs.size(), InvalidInput, "also_run lists ", dims.size(),
             " inputs, the case has ", specs.size());
  std::vector<ShapeIn> in;
  for (size_t i = 0; i < dims.size(); ++i) {
    KILN_CHECK(dims[i].size() == specs[i].dims.size(), InvalidInput, "also_run changes the rank of input ",
               i);
    in.push_back(ShapeIn{specs[i].dtype, dims[i], nullptr});
  }
  RunShape r{dims, {}};
  for (const ShapeOut& o : infer_shapes(layer, in)) {
    Dims d = o.dims;
    if (o.data_dependent) {  // nonzero: [count, rank], count known after execution
      d[0] = 1;
      for (int64_t x : dims.at(0)) d[0] *= x;
    }
    r.outputs.push_back(d);
  }
  return r;
}

/// Elementwise min (or max) of `a` and `b`.
Dims bound(const Dims& a, const Dims& b, bool lower) {
  Dims out = a;
  for (size_t k = 0; k < a.size(); ++k) out[k] = lower ? std::min(a[k], b[k]) : std::max(a[k], b[k]);
  return out;
}

void build(const SweepCase& c, BuiltCase& b) {
  Layer layer = c.layer;
  layer.name = c.name;
  layer.inputs.clear();
  std::vector<Dims> opt;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    layer.inputs.push_back(
        b.net.add_input("in" + std::to_string(i), c.inputs[i].dtype, c.inputs[i].dims)->id());
    opt.push_back(c.inputs[i].dims);
  }
  int64_t index = b.net.add_layer(std::move(layer));
  b.layer = b.net.layers()[static_cast<size_t>(index)].get();
  b.info.layer = b.layer;
  b.runs.push_back(run_shape(*b.layer, c.inputs, opt));
  for (const auto& dims : c.also_run) b.runs.push_back(run_shape(*b.layer, c.inputs, dims));
  if (b.runs.size() > 1) b.runs.push_back(b.runs[0]);
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const InputSpec& s = c.inputs[i];
    TensorInfo t{"in" + std::to_string(i), s.dtype, s.dims, s.dims, s.dims, s.offered};
    for (const RunShape& r : b.runs) {
      t.min = bound(t.min, r.inputs[i], true);
      t.max = bound(t.max, r.inputs[i], false);
    }
    b.info.inputs.push_back(t);
  }
  for (size_t o = 0; o < b.layer->outputs.size(); ++o) {
    const Tensor* t = b.net.tensor(b.layer->outputs[o]);
    const Dims& d = b.runs[0].outputs[o];
    TensorInfo ti{t->name(), t->dtype(), d, d, d};
    for (const RunShape& r : b.runs) {
      ti.min = bound(ti.min, r.outputs[o], true);
      ti.max = bound(ti.max, r.outputs[o], false);
    }
    if (!t->dims().empty() && t->dims()[0] < 0) ti.min[0] = 0;  // data-dependent rows: none at least
    b.info.outputs.push_back(ti);
  }
}

/// The formats the reference reads and writes: those a Reformat converts between, else all Plain.
TacticFormats reference_formats(const Layer& layer) {
  if (layer.kind != LayerKind::Reformat) return {};
  const auto& p = layer.get<ReformatParams>();
  return {{p.from}, {p.to}};
}

TensorFormat format_at(const std::vector<TensorFormat>& f, size_t i) {
  return i < f.size() ? f[i] : TensorFormat::Plain;
}

/// Runs the layer on `backend` with `run` (a kernel, the reference, ...), inputs and outputs in `formats`;
/// returns the outputs, dense.
std::vector<HostTensor> execute(const Backend& backend, const BuiltCase& b, const RunShape& shape,
                                const std::vector<HostTensor>& inputs, const TacticFormats& formats,
                                const std::function<void(KernelArgs&)>& run, int64_t output_in_input = -1) {
  std::vector<std::shared_ptr<void>> buffers;  // device (or host) allocations, freed on return
  auto allocate = [&](size_t bytes) {
    void* p = backend.allocate(bytes ? bytes : 1);
    buffers.emplace_back(p, [&backend](void* q) { backend.deallocate(q); });
    return p;
  };
  KernelArgs args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    TensorFormat f = format_at(formats.inputs, i);
    std::vector<uint8_t> bytes = to_format(inputs[i], f);
    void* p = allocate(bytes.size());
    backend.copy(p, bytes.data(), bytes.size(), CopyKind::HostToDevice, nullptr);
    args.inputs.push_back(TensorView{p, inputs[i].dtype(), inputs[i].sizes(), f});
    args.input_values.push_back(nullptr);
  }
  for (size_t o = 0; o < b.info.outputs.size(); ++o) {
    const TensorInfo& t = b.info.outputs[o];
    TensorView v{nullptr, t.dtype, shape.outputs.at(o), format_at(formats.outputs, o)};
    // Unwritten elements show as NaN (0xff bytes) in floating outputs.
    std::vector<uint8_t> fill(v.nbytes(), 0xff);
    v.data = allocate(fill.size());
    backend.copy(v.data, fill.data(), fill.size(), CopyKind::HostToDevice, nullptr);
    args.outputs.push_back(v);
  }
  if (output_in_input >= 0) args.outputs[0].data = args.inputs[static_cast<size_t>(output_in_input)].data;
  run(args);
  backend.synchronize(nullptr);
  std::vector<HostTensor> out;
  for (const TensorView& v : args.outputs) {
    std::vector<uint8_t> bytes(v.nbytes());
    backend.copy(bytes.data(), v.data, bytes.size(), CopyKind::DeviceToHost, nullptr);
    out.push_back(from_format(bytes, v.dtype, v.dims, v.format));
  }
  return out;
}

std::string formats_text(const LayerInfo& info) {
  std::string s;
  for (const auto* list : {&info.inputs, &info.outputs}) {
    s += list == &info.inputs ? "in:" : " out:";
    for (const TensorInfo& t : *list) s += std::string(" ") + tensor_format_name(t.format);
  }
  return s;
}

/// The input whose buffer the memory plan may give the output (engine/core/plan_common.cpp, "In place"): the
/// residual of a convolution or matrix multiply with one Sum post-op, in the output's format, dtype and dims,
/// on a host backend; else -1.
int64_t in_place_input(const Backend& backend, const Layer& layer, const LayerInfo& info) {
  const std::vector<PostOp>* post_ops = nullptr;
  if (layer.kind == LayerKind::Convolution) post_ops = &layer.get<ConvolutionParams>().post_ops;
  if (layer.kind == LayerKind::MatrixMultiply) post_ops = &layer.get<MatrixMultiplyParams>().post_ops;
  if (!backend.host_accessible() || !post_ops || count_sum_post_ops(*post_ops) != 1) return -1;
  int64_t r = first_residual_input(layer);
  const TensorInfo &x = info.inputs.at(static_cast<size_t>(r)), &y = info.outputs.at(0);
  bool same = x.format == y.format && x.dtype == y.dtype && x.min == y.min && x.max == y.max;
  return same ? r : -1;
}

bool has_nonfinite_input(const SweepCase& c) {
  return std::any_of(c.inputs.begin(), c.inputs.end(),
                     [](const InputSpec& s) { return s.nonfinite_every > 0; });
}

/// Why `tactic` is not checked on non-finite inputs of `info` (empty: it is): the documented exceptions to
/// "every kernel propagates NaN and infinity as torch does" (docs/engine.md, "NaN and infinity").
std::string nonfinite_exception(const std::string& backend, const Tactic& tactic, const LayerInfo& info) {
  // Winograd mixes each input tile through its transforms: one NaN or infinity spreads over the tile; such
  // tactics run only where the build allows reduced precision.
  if (tactic.reduced_precision) return "reduced-precision tactic";
  // Measured on an H100 (cuDNN 9): the NHWC fp16 convolution (IMPLICIT_PRECOMP_GEMM on tensor cores, fused
  // bias or not) gives 0 or a finite value where the result is -inf (48 of 256 outputs of nonfinite_none, 3
  // and 8 input channels alike); bf16 and the NCHW tactic propagate.
  // The graph API tactic (cudnn_graph, cuDNN 9.19's engines for the same convolutions) does the same: 48 of
  // 256 outputs of nonfinite_none@f16, 82 of 512 with 8 channels.
  if (backend == "cuda" && (tactic.name == "cudnn_nhwc" || tactic.name == "cudnn_graph") &&
      !info.inputs.empty() && info.inputs[0].dtype == DType::Float16)
    return "cuDNN's NHWC fp16 convolution turns infinite results finite";
  return "";
}

bool has_empty_tensor(const BuiltCase& b) {
  for (const RunShape& r : b.runs) {
    for (const auto* list : {&r.inputs, &r.outputs}) {
      for (const Dims& d : *list) {
        if (std::find(d.begin(), d.end(), 0) != d.end()) return true;
      }
    }
  }
  return false;
}

void report_differences(const std::string& at, const std::vector<HostTensor>& got,
                        const std::vector<HostTensor>& want, Tolerance tol, SweepReport& report) {
  for (size_t o = 0; o < want.size(); ++o) {
    std::string diff = compare(got.at(o), want[o], tol);
    if (!diff.empty()) report.failures.push_back(at + " output " + std::to_string(o) + ": " + diff);
  }
}

}  // namespace

SweepFilter SweepFilter::from_environment() {
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v ? v : "");
  };
  return {env("KILN_SWEEP_KIND"), env("KILN_SWEEP_TACTIC"), env("KILN_SWEEP_CASE")};
}

void collect_refusals(const KernelTable& table, const SweepCase& c, Refusals& refusals) {
  BuiltCase b;
  try {
    build(c, b);
  } catch (const Error&) {
    return;
  }
  for (const KernelRow& row : table.rows()) {
    std::string why;
    if (row.kind != c.layer.kind || row.runs(b.info, &why)) continue;
    ++refusals.count;
    const std::string where = layer_kind_name(c.layer.kind) + ("/" + c.name);
    if (why.empty()) refusals.silent.push_back(where + " [" + row.name + "]");
  }
}

void run_case(const Backend& backend, const SweepCase& c, const SweepFilter& filter, SweepReport& report) {
  std::string kind = layer_kind_name(c.layer.kind);
  std::string where = kind + "/" + c.name;
  if (!filter.kind.empty() && filter.kind != kind) return;
  if (!filter.case_name.empty() && where.find(filter.case_name) == std::string::npos) return;
  BuiltCase b;
  std::vector<std::vector<HostTensor>> inputs, want;  // per run
  try {
    build(c, b);
    for (size_t r = 0; r < b.runs.size(); ++r) {
      inputs.emplace_back();
      for (size_t i = 0; i < c.inputs.size(); ++i) {
        InputSpec s = c.inputs[i];
        s.dims = b.runs[r].inputs[i];
        inputs.back().push_back(generate(s, seed_of(where) + static_cast<uint32_t>(r * 64 + i)));
      }
      // The reference runs on the host, whatever the backend.
      static const std::unique_ptr<Backend> host = create_backend("cpu", BackendOptions{1});
      want.push_back(execute(*host, b, b.runs[r], inputs.back(), reference_formats(*b.layer),
                             [&](KernelArgs& a) { ops::execute(*b.layer, a); }));
    }
  } catch (const Error& e) {
    if (c.derived) {
      report.notes.push_back(where + ": not a valid layer: " + e.message());
    } else {
      report.failures.push_back(where + ": invalid case: " + e.message());
    }
    return;
  }
  std::string why;
  if (!backend.supports(b.info, &why)) {
    report.notes.push_back(where + ": not supported on " + backend.name() + ": " + why);
    return;
  }
  // The name of run r in messages: the case, and the input dims when the case has several runs.
  auto run_name = [&](const std::string& at, size_t r) {
    if (b.runs.size() == 1) return at;
    std::string s = at + " at";
    for (const Dims& d : b.runs[r].inputs) s += " " + dims_text(d);
    return s;
  };
  if (has_empty_tensor(b)) {
    // Kernels never see empty tensors (engine/core/zero_volume.h): the engine runs such a layer this way.
    std::string at = where + " [" + backend.name() + " zero-volume]";
    for (size_t r = 0; r < b.runs.size(); ++r) {
      ++report.runs;
      try {
        auto got = execute(backend, b, b.runs[r], inputs[r], {},
                           [&](KernelArgs& a) { run_zero_volume(backend, *b.layer, a); });
        report_differences(run_name(at, r), got, want[r], layer_tolerance(b.info, {}), report);
      } catch (const Error& e) {
        report.failures.push_back(run_name(at, r) + ": " + e.message());
      }
    }
    return;
  }
  for (const Tactic& tactic : backend.tactics(b.info)) {
    if (!filter.tactic.empty() && filter.tactic != tactic.name) continue;
    std::string at = where + " [" + backend.name() + " " + tactic.name + "]";
    if (const std::string why = nonfinite_exception(backend.name(), tactic, b.info);
        !why.empty() && has_nonfinite_input(c)) {
      report.notes.push_back(at + ": " + why + ", not checked on non-finite inputs");
      continue;
    }
    ++report.runs;
    try {
      LayerInfo info = b.info;
      TacticFormats formats = backend.formats(info, tactic.name);
      for (size_t i = 0; i < info.inputs.size(); ++i) info.inputs[i].format = format_at(formats.inputs, i);
      for (size_t o = 0; o < info.outputs.size(); ++o) info.outputs[o].format = format_at(formats.outputs, o);
      // Runs `kernel` at every run of the case (and in place where the memory plan may put it), one workspace
      // and one state for all, as one execution context has.
      auto check = [&](const Kernel& kernel, const std::string& label) {
        size_t workspace_size = kernel.workspace_size();
        std::shared_ptr<void> workspace(backend.allocate(workspace_size ? workspace_size : 1),
                                        [&](void* p) { backend.deallocate(p); });
        std::unique_ptr<KernelState> state = kernel.create_state();
        auto run_kernel = [&](KernelArgs& a) {
          a.workspace = workspace.get();
          a.workspace_size = workspace_size;
          a.pool = backend.thread_pool();
          a.state = state.get();
          kernel.execute(a);
        };
        for (size_t r = 0; r < b.runs.size(); ++r) {
          auto got = execute(backend, b, b.runs[r], inputs[r], formats, run_kernel);
          report_differences(run_name(label, r), got, want[r], layer_tolerance(info, tactic), report);
        }
        if (int64_t alias = in_place_input(backend, *b.layer, info); alias >= 0) {
          for (size_t r = 0; r < b.runs.size(); ++r) {
            auto got = execute(backend, b, b.runs[r], inputs[r], formats, run_kernel, alias);
            report_differences(run_name(label + " in place", r), got, want[r], layer_tolerance(info, tactic),
                               report);
          }
          report.log.push_back(label + " also in place (output in input " + std::to_string(alias) + ")");
        }
      };
      // As an untimed build (or a loaded plan without plan data) creates it: it must build and run.
      check(*backend.create_kernel(info, tactic.name), at);
      // As a timed build creates it (LayerInfo::tune: cuda kernels may time alternatives of their own) and as
      // a loaded plan re-creates it from what it stored (Kernel::plan_data), when it stores anything. A
      // timing candidate may refuse at creation (Unsupported) where it has nothing better than reference code
      // for the case (a oneDNN primitive resolving to oneDNN's reference implementation: onednn_common.h,
      // require_optimized): the builder drops it and takes another tactic, so the sweep notes it.
      LayerInfo tuned = info;
      tuned.tune = true;
      std::unique_ptr<Kernel> timed;
      try {
        timed = backend.create_kernel(tuned, tactic.name);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::Unsupported) throw;
        report.notes.push_back(at + ": refused as a timing candidate: " + e.message());
        report.exercised.insert({c.layer.kind, tactic.name});
        continue;
      }
      std::vector<uint8_t> plan_data = timed->plan_data();
      if (!plan_data.empty()) {
        check(*timed, at + " tuned");
        LayerInfo loaded = info;
        loaded.plan_data = &plan_data;
        check(*backend.create_kernel(loaded, tactic.name), at + " loaded");
        report.log.push_back(at + " also tuned and loaded from " + std::to_string(plan_data.size()) +
                             " bytes of plan data");
      }
      report.log.push_back(at + " formats " + formats_text(info));
      report.exercised.insert({c.layer.kind, tactic.name});
      for (const TensorInfo& t : info.outputs)
        report.dtypes[{c.layer.kind, tactic.name}].insert(dtype_name(t.dtype));
    } catch (const Error& e) {
      report.failures.push_back(at + ": " + e.message());
    }
  }
}

std::vector<RowId> unexercised_rows(const std::vector<RowId>& rows, const SweepReport& report,
                                    const SweepFilter& filter,
                                    const std::vector<std::pair<RowId, std::string>>& hardware_dependent) {
  std::vector<RowId> out;
  if (filter.active()) return out;  // a narrowed run covers what it asked for only
  for (const RowId& row : rows) {
    bool excused = false;
    for (const auto& h : hardware_dependent) excused = excused || h.first == row;
    if (!report.exercised.count(row) && !excused) out.push_back(row);
  }
  return out;
}

}  // namespace kiln::engine::sweep
