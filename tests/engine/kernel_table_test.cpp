// The shared kernel-row table and the table-driven backend base (engine/core/kernel_table.h) on a made-up
// table: tactic order, reasons, formats checks, duplicate rows; and the backends' optional capabilities.

#include <gtest/gtest.h>

#include "engine/core/kernel_table.h"
#include "kiln/support/error.h"

namespace kiln::engine {
namespace {

class NoopKernel : public Kernel {
 public:
  void execute(KernelArgs&) const override {}
};

std::unique_ptr<Kernel> make_noop(const LayerInfo&) { return std::make_unique<NoopKernel>(); }

bool only_f32(const LayerInfo& layer, std::string* why) {
  if (layer.outputs[0].dtype == DType::Float32) return true;
  if (why) *why = "f32 only";
  return false;
}

TacticFormats channels_last(const LayerInfo&) {
  return {{TensorFormat::ChannelsLast}, {TensorFormat::ChannelsLast}};
}

KernelTable table() {
  KernelTable t;
  t.add({"first", LayerKind::Activation, nullptr, &make_noop});
  t.add({.name = "second",
         .kind = LayerKind::Activation,
         .applies = &only_f32,
         .create = &make_noop,
         .tf32 = true});
  t.add({.name = "nhwc",
         .kind = LayerKind::Activation,
         .applies = &only_f32,
         .create = &make_noop,
         .formats = &channels_last});
  t.add({.name = "any",
         .kind = LayerKind::Activation,
         .applies = &only_f32,
         .create = &make_noop,
         .formats = &channels_last,
         .any_format = true});
  t.add({"picky", LayerKind::Softmax, &only_f32, &make_noop});
  return t;
}

class TestBackend : public TableBackend {
 public:
  TestBackend(const KernelTable& t, TacticOrder order) : TableBackend(t, order) {}
  std::string name() const override { return "test"; }
  std::string device() const override { return "test"; }
  bool supports_precision(LayerKind, DType) const override { return true; }
  ThreadPool* thread_pool() const override { return nullptr; }
  void* allocate(size_t) const override { return nullptr; }
  void deallocate(void*) const override {}
};

/// A one-input, one-output layer of `kind` with tensors of `dtype` in `format`.
struct OneLayer {
  Layer layer;
  LayerInfo info;
  OneLayer(LayerKind kind, DType dtype, TensorFormat format = TensorFormat::Plain) {
    layer.name = "l";
    layer.kind = kind;
    layer.params =
        kind == LayerKind::Softmax ? LayerParams(SoftmaxParams{}) : LayerParams(ActivationParams{});
    info.layer = &layer;
    info.inputs = {TensorInfo{"x", dtype, {2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}, format}};
    info.outputs = {TensorInfo{"y", dtype, {2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}, format}};
  }
};

std::vector<std::string> names(const std::vector<Tactic>& tactics) {
  std::vector<std::string> out;
  for (const Tactic& t : tactics) out.push_back(t.name);
  return out;
}

TEST(KernelTable, TacticsInTheBackendsOrderWithTheirFlags) {
  const KernelTable t = table();
  OneLayer f32(LayerKind::Activation, DType::Float32);
  EXPECT_EQ(names(TestBackend(t, TacticOrder::Registration).tactics(f32.info)),
            (std::vector<std::string>{"first", "second", "nhwc", "any"}));
  std::vector<Tactic> last_first = TestBackend(t, TacticOrder::LastRegisteredFirst).tactics(f32.info);
  EXPECT_EQ(names(last_first), (std::vector<std::string>{"any", "nhwc", "second", "first"}));
  EXPECT_TRUE(last_first[2].tf32);
  EXPECT_FALSE(last_first[3].tf32);
  OneLayer f16(LayerKind::Activation, DType::Float16);
  EXPECT_EQ(names(TestBackend(t, TacticOrder::Registration).tactics(f16.info)),
            (std::vector<std::string>{"first"}));
}

TEST(KernelTable, SupportsSaysEachRowsReason) {
  const KernelTable t = table();
  TestBackend b(t, TacticOrder::Registration);
  std::string why;
  EXPECT_FALSE(b.supports(OneLayer(LayerKind::Softmax, DType::Float16).info, &why));
  EXPECT_EQ(why, "picky: f32 only");
  EXPECT_FALSE(b.supports(OneLayer(LayerKind::Reduce, DType::Float32).info, &why));
  EXPECT_EQ(why, "the test backend has no kernel for reduce yet");
  EXPECT_TRUE(b.supports(OneLayer(LayerKind::Softmax, DType::Float32).info, &why));
}

TEST(KernelTable, RefusalsNameEachOtherRowsReason) {
  // An f16 activation: only "first" (the stand-in for the reference kernel here) runs it; the build log says
  // why the others do not.
  const KernelTable t = table();
  TestBackend b(t, TacticOrder::Registration);
  EXPECT_EQ(b.refusals(OneLayer(LayerKind::Activation, DType::Float16).info, "first"),
            "second: f32 only; nhwc: f32 only; any: f32 only");
  EXPECT_EQ(b.refusals(OneLayer(LayerKind::Activation, DType::Float32).info, "first"), "");
  EXPECT_EQ(b.refusals(OneLayer(LayerKind::Softmax, DType::Float16).info, "picky"),
            "the test backend has no other kernel for softmax");
}

TEST(KernelTable, CreateKernelChecksRowApplicabilityAndFormats) {
  const KernelTable t = table();
  TestBackend b(t, TacticOrder::Registration);
  OneLayer plain(LayerKind::Activation, DType::Float32);
  OneLayer nhwc(LayerKind::Activation, DType::Float32, TensorFormat::ChannelsLast);
  EXPECT_NE(b.create_kernel(plain.info, "first"), nullptr);
  EXPECT_NE(b.create_kernel(nhwc.info, "nhwc"), nullptr);
  EXPECT_EQ(b.formats(plain.info, "nhwc").inputs, (std::vector<TensorFormat>{TensorFormat::ChannelsLast}));
  EXPECT_TRUE(b.formats(plain.info, "first").inputs.empty());
  // An exact row takes only its formats; a row without formats only Plain; an any_format row whatever it
  // gets.
  EXPECT_THROW(b.create_kernel(plain.info, "nhwc"), kiln::Error);
  EXPECT_THROW(b.create_kernel(nhwc.info, "first"), kiln::Error);
  EXPECT_NE(b.create_kernel(plain.info, "any"), nullptr);
  EXPECT_NE(b.create_kernel(nhwc.info, "any"), nullptr);
  try {
    b.create_kernel(OneLayer(LayerKind::Activation, DType::Float16).info, "second");
    ADD_FAILURE() << "a row that does not apply made a kernel";
  } catch (const kiln::Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("f32 only"), std::string::npos) << e.what();
  }
  EXPECT_THROW(b.create_kernel(plain.info, "missing"), kiln::Error);
}

// Format copies (Layer::format_copies): the last outputs, each in a format the row says it copies to; the
// row's own outputs keep their formats.
TEST(KernelTable, RowsThatWriteFormatCopiesTakeThemAsTheirLastOutputs) {
  KernelTable t;
  t.add({.name = "copies_e4m3",
         .kind = LayerKind::Activation,
         .applies = &only_f32,
         .create = &make_noop,
         .copies = [](const LayerInfo&, TensorFormat f) { return f == TensorFormat::E4M3; }});
  t.add({.name = "plain", .kind = LayerKind::Activation, .applies = &only_f32, .create = &make_noop});
  TestBackend b(t, TacticOrder::Registration);
  OneLayer one(LayerKind::Activation, DType::Float32);
  EXPECT_TRUE(b.writes_copy(one.info, "copies_e4m3", TensorFormat::E4M3));
  EXPECT_FALSE(b.writes_copy(one.info, "copies_e4m3", TensorFormat::ChannelsLast));
  EXPECT_FALSE(b.writes_copy(one.info, "plain", TensorFormat::E4M3));
  EXPECT_FALSE(b.writes_copy(one.info, "missing", TensorFormat::E4M3));
  OneLayer copied(LayerKind::Activation, DType::Float32);
  copied.layer.format_copies = 1;
  copied.info.outputs.push_back(copied.info.outputs[0]);
  copied.info.outputs[1].format = TensorFormat::E4M3;
  EXPECT_NE(b.create_kernel(copied.info, "copies_e4m3"), nullptr);
  EXPECT_THROW(b.create_kernel(copied.info, "plain"), kiln::Error);
  // A copy in a format the row does not copy to; the own output in the copy's format; more copies than outputs.
  copied.info.outputs[1].format = TensorFormat::ChannelsLast;
  EXPECT_THROW(b.create_kernel(copied.info, "copies_e4m3"), kiln::Error);
  copied.info.outputs[1].format = TensorFormat::E4M3;
  copied.info.outputs[0].format = TensorFormat::E4M3;
  EXPECT_THROW(b.create_kernel(copied.info, "copies_e4m3"), kiln::Error);
  copied.info.outputs[0].format = TensorFormat::Plain;
  copied.layer.format_copies = 2;
  EXPECT_THROW(b.create_kernel(copied.info, "copies_e4m3"), kiln::Error);
  // A second output that is not declared a copy is the row's own, in Plain.
  copied.layer.format_copies = 0;
  EXPECT_THROW(b.create_kernel(copied.info, "copies_e4m3"), kiln::Error);
}

TEST(KernelTable, RowsThatWriteAnotherFormatTakeItOnOutputZeroOnly) {
  KernelTable t;
  t.add({.name = "writes_e4m3",
         .kind = LayerKind::Activation,
         .applies = &only_f32,
         .create = &make_noop,
         .writes = [](const LayerInfo&, TensorFormat f) -> std::optional<size_t> {
           if (f == TensorFormat::E4M3) return size_t{4096};  // (the workspace it would need)
           return std::nullopt;
         }});
  t.add({.name = "plain", .kind = LayerKind::Activation, .applies = &only_f32, .create = &make_noop});
  TestBackend b(t, TacticOrder::Registration);
  OneLayer written(LayerKind::Activation, DType::Float32);
  written.info.outputs[0].format = TensorFormat::E4M3;
  EXPECT_EQ(b.writes_format(written.info, "writes_e4m3", TensorFormat::E4M3), std::optional<size_t>(4096));
  EXPECT_FALSE(b.writes_format(written.info, "writes_e4m3", TensorFormat::ChannelsLast));
  EXPECT_FALSE(b.writes_format(written.info, "plain", TensorFormat::E4M3));
  EXPECT_FALSE(b.writes_format(written.info, "missing", TensorFormat::E4M3));
  EXPECT_NE(b.create_kernel(written.info, "writes_e4m3"), nullptr);
  EXPECT_THROW(b.create_kernel(written.info, "plain"), kiln::Error);
  // Output 0 only: a second output in that format is refused.
  OneLayer second(LayerKind::Activation, DType::Float32);
  second.info.outputs.push_back(second.info.outputs[0]);
  second.info.outputs[1].format = TensorFormat::E4M3;
  EXPECT_THROW(b.create_kernel(second.info, "writes_e4m3"), kiln::Error);
  // An E4M3 input is another matter: the row reads Plain.
  OneLayer read(LayerKind::Activation, DType::Float32);
  read.info.inputs[0].format = TensorFormat::E4M3;
  EXPECT_THROW(b.create_kernel(read.info, "writes_e4m3"), kiln::Error);
  // A row that takes any layout takes no E4M3 (an element encoding, not a layout).
  const KernelTable with_any = table();
  TestBackend any(with_any, TacticOrder::Registration);
  EXPECT_THROW(any.create_kernel(written.info, "any"), kiln::Error);
  EXPECT_THROW(any.create_kernel(read.info, "any"), kiln::Error);
}

TEST(KernelTable, DuplicateRowIsAnInternalError) {
  KernelTable t = table();
  EXPECT_THROW(t.add({"first", LayerKind::Activation, nullptr, &make_noop}), kiln::Error);
  EXPECT_NO_THROW(t.add({"first", LayerKind::Softmax, nullptr, &make_noop}));
}

TEST(KernelTable, GraphRecordingIsAnExplicitCapability) {
  EXPECT_EQ(create_backend("cpu")->graph_recorder(), nullptr);
  EXPECT_EQ(TestBackend(table(), TacticOrder::Registration).graph_recorder(), nullptr);
}

}  // namespace
}  // namespace kiln::engine
