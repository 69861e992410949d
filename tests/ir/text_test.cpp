// IR text: printing, parsing, the round trip print(parse(print(g))) == print(g), and parser errors.

#include "kiln/ir/text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "kiln/ir/verifier.h"
#include "kiln/support/error.h"

namespace kiln::ir {
namespace {

// Parses, prints, parses again and prints again: both prints must match the first.
std::string round_trip(const std::string& text, const PrintOptions& opt = {}) {
  auto g = parse_graph(text);
  verify(*g);
  std::string printed = print_graph(*g, opt);
  auto g2 = parse_graph(printed);
  verify(*g2);
  EXPECT_EQ(print_graph(*g2, opt), printed);
  return printed;
}

const char* kEveryKind =
    R"(graph(%x: f32[s0, 3, 16, 16], %n: sym_int, %f: sym_float, %b: sym_bool, %o: opaque) {
  symbol s0 in [1, 64] hint 2
  symbol s1 in [-inf, inf]
  symbol s2 hint 7
  %w: f32[8, 3, 3, 3] = parameter("conv.weight")
  %rm: f32[8] = buffer("bn.running_mean")
  %c: i64[2] = constant("_tensor_constant0")
  %conv: f32[s0, 8, 16, 16] = aten.conv2d.default(input=%x, weight=%w, bias=None, stride=[1, 1], padding=[0, 0], dilation=sym[1, 1], groups=1)
  %sz: sym_int(s0) = aten.sym_size.int(self=%x, dim=0)
  %v: f32[s0, 2048]{strides=[1, s0], offset=4} = aten.view.default(self=%conv, size=[%sz, 2048])
  %m: f32[2], %i: i64[2] = aten.max.dim(self=%v, dim=-1, keepdim=False)
  %t: f32[s0, 8, 16, 16]@cuda:0 = aten._to_copy.default(self=%conv, *, dtype=dtype.bf16, layout=layout.strided, device=device("cuda:0"), memory_format=memory_format.channels_last, non_blocking=True)
  %k: f32[4] = custom.op.default(a=1.0, b=1e-05, c=-inf, d=nan, e=[0.5, 2.0], f=[True, False], g="say \"hi\"\n\tok\x01", h=["a", "b"], i=?[%m, None], j=[%m, %i], k=sym(3), l=%n, m=%f, n=%b, o=float[], p=bool[], q=str[], r=tensor[], s=?[], t=sym[], u=[], v=%o, w=inf, x=-2.5e+300, y=[%n, 4])
  node assert_0: = aten._assert_scalar.default(self=%b, assert_msg="fail")
  return (%k, %t, %sz)
}
)";

TEST(IrText, EveryArgumentKindRoundTrips) {
  std::string printed = round_trip(kEveryKind);
  auto g = parse_graph(printed);
  Node* k = g->find_node("k");
  ASSERT_NE(k, nullptr);
  using AK = Argument::Kind;
  std::map<std::string, AK> want = {
      {"a", AK::Float},           {"b", AK::Float},   {"c", AK::Float},
      {"d", AK::Float},           {"e", AK::Floats},  {"f", AK::Bools},
      {"g", AK::String},          {"h", AK::Strings}, {"i", AK::OptionalTensors},
      {"j", AK::Tensors},         {"k", AK::SymInt},  {"l", AK::SymInt},
      {"m", AK::SymFloat},        {"n", AK::SymBool}, {"o", AK::Floats},
      {"p", AK::Bools},           {"q", AK::Strings}, {"r", AK::Tensors},
      {"s", AK::OptionalTensors}, {"t", AK::SymInts}, {"u", AK::Ints},
      {"v", AK::Tensor},          {"w", AK::Float},   {"x", AK::Float},
      {"y", AK::SymInts}};
  for (const auto& [name, kind] : want) EXPECT_EQ(k->arg(name).kind(), kind) << name;
  EXPECT_EQ(k->arg("b").as_float(), 1e-05);
  EXPECT_TRUE(std::isnan(k->arg("d").as_float()));
  EXPECT_EQ(k->arg("c").as_float(), -INFINITY);
  EXPECT_EQ(k->arg("x").as_float(), -2.5e300);
  EXPECT_EQ(k->arg("g").as_string(), "say \"hi\"\n\tok\x01");
  EXPECT_EQ(k->arg("i").as_tensors()[1], nullptr);
  EXPECT_EQ(k->arg("k").as_int(), 3);
  EXPECT_EQ(k->arg("y").as_sym_ints()[0].value, g->find_value("n"));
  Node* conv = g->find_node("conv");
  EXPECT_EQ(conv->arg("dilation").kind(), AK::SymInts);
  EXPECT_EQ(conv->arg("stride").kind(), AK::Ints);
  EXPECT_EQ(conv->arg("groups").kind(), AK::Int);
  EXPECT_TRUE(conv->arg("bias").is_none());
  Node* to = g->find_node("t");
  EXPECT_FALSE(to->args()[0].kwarg_only);
  EXPECT_TRUE(to->args()[1].kwarg_only);
  EXPECT_EQ(to->arg("dtype").as_scalar_type(), DType::BFloat16);
  EXPECT_EQ(to->arg("layout").as_layout(), Layout::Strided);
  EXPECT_EQ(to->arg("memory_format").as_memory_format(), MemoryFormat::ChannelsLast);
  EXPECT_EQ(to->arg("device").as_device(), (Device{"cuda", 0}));
  EXPECT_EQ(to->output()->meta().device, (Device{"cuda", 0}));
  Value* v = g->find_value("v");
  EXPECT_EQ(v->meta().strides[1], SymExpr::symbol("s0"));
  EXPECT_EQ(v->meta().storage_offset, SymExpr(4));
  EXPECT_EQ(g->find_value("sz")->sym_value(), SymExpr::symbol("s0"));
  EXPECT_EQ(g->symbol_ranges().at("s0"), (SymRange{1, 64}));
  EXPECT_EQ(g->symbol_ranges().at("s1"), (SymRange{SymRange::kNegUnbounded, SymRange::kUnbounded}));
  EXPECT_EQ(g->symbol_hints().at("s2"), 7);
  EXPECT_EQ(g->find_value("rm")->constant_kind(), ConstantKind::Buffer);
  EXPECT_EQ(g->find_value("w")->fqn(), "conv.weight");
  EXPECT_FALSE(g->find_value("w")->data().defined());
  Node* m = g->find_node("m");
  ASSERT_EQ(m->outputs().size(), 2u);
  EXPECT_EQ(m->output(1)->meta().dtype, DType::Int64);
  Node* a = g->find_node("assert_0");
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->outputs().empty());
  ASSERT_EQ(g->outputs().size(), 3u);
  EXPECT_EQ(g->outputs()[2]->kind(), ValueKind::SymInt);
}

TEST(IrText, PrintedFormIsStable) {
  const char* text = R"(graph(%x: f32[s77, 3]) {
  symbol s77 in [1, 64] hint 2
  %relu: f32[s77, 3] = aten.relu.default(self=%x)
  %add: f32[s77, 3] = aten.add.Tensor(self=%relu, other=%x, alpha=1)
  return (%add)
}
)";
  EXPECT_EQ(round_trip(text), text);
  // Blank lines, comments and spacing are not significant.
  const char* loose =
      "\n# leading comment\ngraph( %x : f32[s77,3] ) {   # c\n\n  symbol s77 in [1, 64] hint 2\n"
      "  %relu: f32[s77, 3] = aten.relu.default( self = %x )\n"
      "  %add: f32[s77,3] = aten.add.Tensor(self=%relu, other=%x, alpha=1)  # trailing\n"
      "  return (%add)\n}\n\n";
  EXPECT_EQ(print_graph(*parse_graph(loose)), text);
}

TEST(IrText, ConstantsWithData) {
  const char* text = R"(graph() {
  %a: f32[2, 2] = constant("a", data=[1.5, -0.0, 3.0e+38, 1e-45])
  %b: i64[3] = constant("b", data=[-9223372036854775808, 0, 9223372036854775807])
  %c: bool[2] = buffer("c", data=[True, False])
  %d: f16[2] = parameter("d", data=[0.1, 65504.0])
  %e: bf16[1] = parameter("e", data=[3.14])
  %f: f64[1] = parameter("f", data=[0.1])
  %g: i8[2] = constant("g", data=[-128, 127])
  return (%a, %b, %c, %d, %e, %f, %g)
}
)";
  PrintOptions opt;
  opt.constant_values = true;
  std::string printed = round_trip(text, opt);
  auto g = parse_graph(printed);
  const HostTensor& a = g->find_value("a")->data();
  ASSERT_TRUE(a.defined());
  EXPECT_EQ(a.sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a.data_as<float>()[0], 1.5f);
  EXPECT_TRUE(std::signbit(a.data_as<float>()[1]));
  EXPECT_EQ(a.data_as<float>()[2], 3.0e38f);
  EXPECT_EQ(a.data_as<float>()[3], 1e-45f);
  EXPECT_EQ(g->find_value("b")->data().data_as<int64_t>()[0], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(g->find_value("b")->data().data_as<int64_t>()[2], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(g->find_value("c")->data().data()[0], 1);
  EXPECT_EQ(g->find_value("d")->data().data_as<uint16_t>()[0], float_to_half(0.1f));
  EXPECT_EQ(g->find_value("e")->data().data_as<uint16_t>()[0], float_to_bfloat16(3.14f));
  EXPECT_EQ(g->find_value("f")->data().data_as<double>()[0], 0.1);
  EXPECT_EQ(g->find_value("g")->data().get_as_double(0), -128);
  // Without constant_values the data is left out, and the parsed constants have none.
  auto plain = parse_graph(print_graph(*g));
  EXPECT_FALSE(plain->find_value("a")->data().defined());
  EXPECT_EQ(plain->find_value("a")->meta(), TensorMeta::make(DType::Float32, {2, 2}));
}

TEST(IrText, RandomConstantDataRoundTripsExactly) {
  std::mt19937 rng(42);
  std::normal_distribution<float> dist(0.f, 100.f);
  Graph g;
  std::vector<float> values(24);
  for (float& v : values) v = dist(rng);
  g.add_constant("w", "layer.weight", ConstantKind::Parameter, HostTensor::from_floats(values, {2, 3, 4}));
  g.set_outputs({g.find_value("w")});
  PrintOptions opt;
  opt.constant_values = true;
  auto back = parse_graph(print_graph(g, opt));
  const HostTensor& t = back->find_value("w")->data();
  ASSERT_TRUE(t.defined());
  // Shortest round-trip float formatting: every value comes back bit-exact (tolerance 0).
  EXPECT_EQ(std::memcmp(t.data(), values.data(), values.size() * sizeof(float)), 0);
  opt.max_constant_elements = 10;
  EXPECT_EQ(print_graph(g, opt).find("data="), std::string::npos);
}

TEST(IrText, SubgraphsNest) {
  const char* text = R"(graph(%x: f32[4]) {
  %seg: f32[4], %seg_1: f32[4] = kiln.engine_segment.default(inputs=[%x], name="seg0") graph(%i: f32[4]) {
    symbol s0 in [1, 8]
    %r: f32[4] = aten.relu.default(self=%i)
    %inner: f32[4] = kiln.nested.default(x=%r) graph(%q: f32[4]) {
      return (%q)
    }
    return (%r, %inner)
  }
  %out: f32[4] = aten.add.Tensor(self=%seg, other=%seg_1)
  return (%out)
}
)";
  EXPECT_EQ(round_trip(text), text);
  auto g = parse_graph(text);
  Node* seg = g->find_node("seg");
  ASSERT_NE(seg->subgraph(), nullptr);
  EXPECT_EQ(seg->subgraph()->num_nodes(), 2u);
  EXPECT_EQ(seg->subgraph()->symbol_ranges().at("s0"), (SymRange{1, 8}));
  EXPECT_NE(seg->subgraph()->find_node("inner")->subgraph(), nullptr);
  // The subgraph's values are its own.
  EXPECT_EQ(g->find_value("r"), nullptr);
}

TEST(IrText, GraphArgumentsNestAndRoundTrip) {
  // A higher-order node takes its branches as graph arguments; each has its own values, nested at any depth.
  const char* text = R"(graph(%p: bool[], %x: f32[4]) {
  %out: f32[4] = higher_order.cond.default(pred=%p, true_fn=graph(%a: f32[4]) {
    %r: f32[4] = aten.relu.default(self=%a)
    return (%r)
  }, false_fn=graph(%b: f32[4]) {
    %n: f32[4] = higher_order.invoke_subgraph.default(g=graph(%c: f32[4]) {
      %t: f32[4] = aten.tanh.default(self=%c)
      return (%t)
    }, id="sub", x=%b)
    return (%n)
  }, operands=[%x])
  return (%out)
}
)";
  EXPECT_EQ(round_trip(text), text);
  auto g = parse_graph(text);
  const Node* cond = g->find_node("out");
  const Argument& on_false = cond->arg("false_fn");
  ASSERT_EQ(on_false.kind(), Argument::Kind::Graph);
  EXPECT_EQ(on_false.as_graph()->num_nodes(), 1u);
  EXPECT_EQ(g->find_value("r"), nullptr);  // the branches' values are their own
  EXPECT_EQ(cond->inputs().size(), 2u);    // %p and %x; nothing of the branches
  EXPECT_THROW(cond->arg("pred").as_graph(), Error);
}

TEST(IrText, VerifierChecksGraphArguments) {
  auto g = parse_graph(R"(graph(%x: f32[4]) {
  %y: f32[4] = higher_order.invoke_subgraph.default(g=graph(%a: f32[4]) {
    return (%a)
  }, x=%x)
  return (%y)
}
)");
  EXPECT_NO_THROW(verify(*g));
  auto broken = std::make_shared<Graph>();
  Value* in = broken->add_input("a", ValueKind::Tensor, g->find_value("x")->meta());
  broken->set_outputs({in, nullptr});
  g->find_node("y")->set_arg("g", Argument::graph(broken));
  EXPECT_THROW(verify(*g), Error);
}

TEST(IrText, MetadataCommentsAreIgnoredByTheParser) {
  auto g = parse_graph("graph(%x: f32[2]) {\n  %y: f32[2] = aten.relu.default(self=%x)\n  return (%y)\n}\n");
  g->find_node("y")->mutable_metadata()["nn_module_stack"] = "L['self'].fc: Linear # not a comment";
  g->find_node("y")->mutable_metadata()["stack_trace"] = "File x.py\n  line 3";
  PrintOptions opt;
  opt.metadata = true;
  std::string text = print_graph(*g, opt);
  EXPECT_NE(text.find("# nn_module_stack=\"L['self'].fc: Linear # not a comment\""), std::string::npos)
      << text;
  EXPECT_EQ(text.find("stack_trace"), std::string::npos);
  EXPECT_EQ(print_graph(*parse_graph(text)), print_graph(*g));
}

TEST(IrText, ForwardReferencesParse) {
  // A graph that is not topologically sorted prints uses before definitions; the parser accepts them and the
  // verifier reports them.
  const char* text = R"(graph(%x: f32[2]) {
  %b: f32[2] = aten.relu.default(self=%a)
  %a: f32[2] = aten.neg.default(self=%x)
  return (%b)
}
)";
  auto g = parse_graph(text);
  EXPECT_EQ(print_graph(*g), text);
  EXPECT_THROW(verify(*g), Error);
  g->topological_sort();
  verify(*g);
  EXPECT_EQ(g->nodes()[0]->name(), "a");
}

TEST(IrText, QuotedNames) {
  Graph g;
  Value* x = g.add_input("x y", ValueKind::Tensor, TensorMeta::make(DType::Float32, {2}));
  Node* n = g.create_node(OpName::parse("aten.relu.default"), {{"self", Argument::tensor(x)}},
                          {{"out\"1", ValueKind::Tensor, TensorMeta::make(DType::Float32, {2})}});
  g.set_outputs({n->output()});
  std::string text = print_graph(g);
  EXPECT_NE(text.find("%\"x y\""), std::string::npos) << text;
  auto back = parse_graph(text);
  EXPECT_NE(back->find_value("out\"1"), nullptr);
  EXPECT_EQ(print_graph(*back), text);
}

void expect_parse_error(const std::string& text, const std::string& where, const std::string& what) {
  try {
    parse_graph(text);
    ADD_FAILURE() << "expected a parse error for:\n" << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    std::string msg = e.what();
    EXPECT_NE(msg.find(where), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

TEST(IrText, ParserErrorsNameLineAndColumn) {
  expect_parse_error("grph() {\n}\n", "line 1, column 1", "expected 'graph('");
  expect_parse_error("graph(%x: f32[2]) {\n  %y: f32[2] = aten.relu.default(self=%z)\n  return (%y)\n}\n",
                     "line 2, column 39", "unknown value %z");
  expect_parse_error("graph(%x: f32[2]) {\n  %y: q32[2] = aten.relu.default(self=%x)\n  return (%y)\n}\n",
                     "line 2, column 7", "unknown type 'q32'");
  expect_parse_error("graph(%x: f32[2]) {\n  %y: f32[2] = aten.relu.default(self=%x\n  return (%y)\n}\n",
                     "line 2, column 41", "expected ',' or ')'");
  expect_parse_error("graph(%x: f32[2 +]) {\n  return (%x)\n}\n", "line 1, column 15",
                     "bad symbolic expression");
  expect_parse_error("graph(%x: f32[2]) {\n  %y: f32[2] = aten.relu.default(self=%x)\n", "line 3",
                     "expected 'return");
  expect_parse_error("graph(%x: f32[2]) {\n  return (%x)\n}\nextra\n", "line 4, column 1",
                     "expected end of text");
  expect_parse_error(
      "graph(%x: f32[2]) {\n  %y: f32[2] = aten.f.default(a=[1, 2.0, \"s\"])\n  return (%y)\n}\n", "line 2",
      "list mixes");
  expect_parse_error("graph(%x: f32[2]) {\n  %y: f32[2] = aten.f.default(a=\"abc)\n  return (%y)\n}\n",
                     "line 2, column 33", "unterminated string");
  expect_parse_error("graph(%x: f32[2], %x: f32[2]) {\n  return (%x)\n}\n", "line 1, column 19",
                     "duplicate value name");
  expect_parse_error(
      "graph(%x: f32[2]) {\n  %c: f32[3] = constant(\"c\", data=[1.0, 2.0])\n  return (%c)\n}\n", "line 2",
      "data has 2 values");
  expect_parse_error("graph(%x: f32[2]) {\n  %y: f32[2] = aten.f.default(a=dtype.f99)\n  return (%y)\n}\n",
                     "line 2, column 33", "unknown dtype 'f99'");
  expect_parse_error("graph(%x: f32[2]) {\n  %y: f32[2] = aten.f.default(a=[%x, None])\n  return (%y)\n}\n",
                     "line 2", "?[...]");
  expect_parse_error("graph(%x: f32[2]) {\n  %y: f32[2] = aten.f.default(a=sym[%x])\n  return (%y)\n}\n",
                     "line 2", "not a SymInt");
  expect_parse_error("graph(%x: f32[2]) {\n  %y: f32[2] = aten.f.default(a=1, a=2)\n  return (%y)\n}\n",
                     "line 2", "duplicate argument 'a'");
  expect_parse_error("graph(%x: f32[2]) {\n  symbol s0 in [5, 1]\n  return (%x)\n}\n", "line 2",
                     "empty range");
  expect_parse_error(
      "graph(%x: f32[2]) {\n  %y: f32[2] = aten.f.default(a=99999999999999999999)\n  return (%y)\n}\n",
      "line 2, column 33", "does not fit");
}

TEST(IrText, TruncatedAndMutatedTextNeverCrashes) {
  std::string text = kEveryKind;
  for (size_t n = 0; n < text.size(); n += 3) {
    try {
      parse_graph(text.substr(0, n));
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    }
  }
  std::mt19937 rng(7);
  const std::string junk = "%[](){},=:\"?*@#-.0aZ \n";
  for (int i = 0; i < 2000; ++i) {
    std::string t = text;
    t[rng() % t.size()] = junk[rng() % junk.size()];
    try {
      auto g = parse_graph(t);
      print_graph(*g);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidInput) << e.what();
    }
  }
}

}  // namespace
}  // namespace kiln::ir
