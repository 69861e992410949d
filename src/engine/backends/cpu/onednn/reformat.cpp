// oneDNN reorder as the CPU kernel of Reformat layers (fp32): converts an activation between Plain and the
// blocked / channels-last formats the builder assigns around oneDNN convolutions. Reorder primitives are
// cached per shape in the per-context state.

#include <map>
#include <memory>

#include "engine/backends/cpu/onednn/onednn_common.h"
#include "engine/backends/cpu/onednn/register.h"
#include "kiln/support/error.h"

namespace kiln::engine::cpu::onednn {
namespace {

using dnnl::memory;

struct ReorderEntry {
  memory::desc src_md, dst_md;
  dnnl::reorder reorder;
  memory scratchpad;
};

struct ReorderState : KernelState {
  std::map<Dims, std::unique_ptr<ReorderEntry>> entries;
  dnnl::stream stream{cpu_engine()};
};

class ReformatKernel : public Kernel {
 public:
  explicit ReformatKernel(const LayerInfo& info) : p_(info.params<ReformatParams>()) {}

  std::unique_ptr<KernelState> create_state() const override { return std::make_unique<ReorderState>(); }

  void execute(KernelArgs& args) const override {
    auto* state = static_cast<ReorderState*>(args.state);
    KILN_CHECK(state != nullptr, Internal, "oneDNN reformat executed without its state");
    const TensorView& x = args.inputs[0];
    const TensorView& y = args.outputs[0];
    KILN_CHECK(x.format == p_.from && y.format == p_.to, Internal, "oneDNN reformat got formats ",
               tensor_format_name(x.format), " -> ", tensor_format_name(y.format));
    if (x.numel() == 0) return;
    auto& slot = state->entries[x.dims];
    if (!slot) {
      auto e = std::make_unique<ReorderEntry>();
      e->src_md = activation_md(x.dims, DT::f32, p_.from);
      e->dst_md = activation_md(y.dims, DT::f32, p_.to);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // contexts never share a scratchpad
      dnnl::reorder::primitive_desc pd(cpu_engine(), e->src_md, cpu_engine(), e->dst_md, attr);
      e->scratchpad = memory(pd.scratchpad_desc(), cpu_engine());
      e->reorder = dnnl::reorder(pd);
      slot = std::move(e);
    }
    use_threads(threads_for_bytes(args.pool, static_cast<double>(x.nbytes() + y.nbytes())));
    memory src(slot->src_md, cpu_engine(), x.data), dst(slot->dst_md, cpu_engine(), y.data);
    slot->reorder.execute(state->stream, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}, {DNNL_ARG_SCRATCHPAD, slot->scratchpad}});
    state->stream.wait();
  }

 private:
  ReformatParams p_;
};

bool reformat_applies(const LayerInfo& info, std::string* why) {
  if (info.inputs.size() != 1) return refuse(why, "not one input");
  if (!onednn_dtype_ok(info.inputs[0].dtype, why)) return false;
  const auto& p = info.params<ReformatParams>();
  if (p.from == TensorFormat::E4M3 || p.to == TensorFormat::E4M3) return refuse(why, "oneDNN has no e4m3 layout");
  const size_t rank = info.inputs[0].min.size();
  return (rank >= 3 && rank <= 5) || refuse(why, "rank " + std::to_string(rank) + " (onednn takes 3 to 5)");
}

}  // namespace

void register_onednn_reformat(KernelTable& registry) {
  registry.add(KernelRow{"onednn", LayerKind::Reformat, reformat_applies, [](const LayerInfo& info) {
                           return std::unique_ptr<Kernel>(std::make_unique<ReformatKernel>(info));
                         }});
}

}  // namespace kiln::engine::cpu::onednn
