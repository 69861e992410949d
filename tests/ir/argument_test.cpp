// Argument: constructors, typed accessors (compatible kinds and clear mismatch errors), values, replace,
// text.

#include <gtest/gtest.h>

#include <cmath>

#include "kiln/ir/graph.h"
#include "kiln/support/error.h"

namespace kiln::ir {
namespace {

struct Fixture {
  Graph g;
  Value* a = g.add_input("a", ValueKind::Tensor, TensorMeta::make(DType::Float32, {2}));
  Value* b = g.add_input("b", ValueKind::Tensor, TensorMeta::make(DType::Float32, {2}));
  Value* n = g.add_input("n", ValueKind::SymInt);
  Value* f = g.add_input("f", ValueKind::SymFloat);
  Value* t = g.add_input("t", ValueKind::SymBool);
};

void expect_mismatch(const std::function<void()>& fn, const std::string& expected,
                     const std::string& actual) {
  try {
    fn();
    FAIL() << "expected a kind mismatch";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    std::string msg = e.what();
    EXPECT_NE(msg.find("expected " + expected), std::string::npos) << msg;
    EXPECT_NE(msg.find("got " + actual), std::string::npos) << msg;
  }
}

TEST(Argument, AccessorsAndCompatibleKinds) {
  Fixture x;
  EXPECT_TRUE(Argument().is_none());
  EXPECT_EQ(Argument::tensor(x.a).as_tensor(), x.a);
  EXPECT_EQ(Argument::tensors({x.a, x.b}).as_tensors().size(), 2u);
  EXPECT_EQ(Argument::optional_tensors({x.a, nullptr}).as_tensors()[1], nullptr);
  EXPECT_EQ(Argument::int_(-3).as_int(), -3);
  EXPECT_EQ(Argument::int_(-3).as_float(), -3.0);
  EXPECT_EQ(Argument::int_(5).as_sym_int().constant, 5);
  EXPECT_EQ(Argument::sym_int({nullptr, 7}).as_int(), 7);
  EXPECT_EQ(Argument::sym_int({x.n, 0}).as_sym_int().value, x.n);
  EXPECT_EQ(Argument::ints({1, 2}).as_sym_ints()[1].constant, 2);
  EXPECT_EQ(Argument::sym_ints({{nullptr, 4}, {nullptr, 5}}).as_ints(), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(Argument::floats({0.5}).as_floats()[0], 0.5);
  EXPECT_EQ(Argument::bools({true, false}).as_bools(), (std::vector<bool>{true, false}));
  EXPECT_EQ(Argument::string("tanh").as_string(), "tanh");
  EXPECT_EQ(Argument::strings({"a"}).as_strings()[0], "a");
  EXPECT_EQ(Argument::sym_float(x.f).as_sym_value(), x.f);
  EXPECT_EQ(Argument::sym_bool(x.t).as_sym_value(), x.t);
  EXPECT_EQ(Argument::scalar_type(DType::BFloat16).as_scalar_type(), DType::BFloat16);
  EXPECT_EQ(Argument::layout(Layout::Strided).as_layout(), Layout::Strided);
  EXPECT_EQ(Argument::memory_format(MemoryFormat::Preserve).as_memory_format(), MemoryFormat::Preserve);
  EXPECT_EQ(Argument::device(Device{"cuda", 1}).as_device(), (Device{"cuda", 1}));
}

TEST(Argument, MismatchesNameBothKinds) {
  Fixture x;
  expect_mismatch([] { Argument::int_(1).as_tensor(); }, "Tensor", "Int");
  expect_mismatch([] { Argument::float_(1.5).as_int(); }, "Int", "Float");
  expect_mismatch([&] { Argument::sym_int({x.n, 0}).as_int(); }, "Int", "SymInt");
  expect_mismatch([&] { Argument::tensor(x.a).as_ints(); }, "Ints", "Tensor");
  expect_mismatch([&] { Argument::sym_ints({{x.n, 0}, {nullptr, 2}}).as_ints(); }, "Ints", "SymInts");
  expect_mismatch([] { Argument::bool_(true).as_float(); }, "Float", "Bool");
  expect_mismatch([] { Argument::ints({1}).as_floats(); }, "Floats", "Ints");
  expect_mismatch([] { Argument::int_(1).as_bool(); }, "Bool", "Int");
  expect_mismatch([] { Argument::bool_(true).as_bools(); }, "Bools", "Bool");
  expect_mismatch([] { Argument().as_string(); }, "String", "None");
  expect_mismatch([] { Argument::string("x").as_strings(); }, "Strings", "String");
  expect_mismatch([] { Argument::float_(1).as_sym_int(); }, "SymInt", "Float");
  expect_mismatch([] { Argument::floats({}).as_sym_ints(); }, "SymInts", "Floats");
  expect_mismatch([&] { Argument::tensor(x.a).as_sym_value(); }, "SymFloat or SymBool", "Tensor");
  expect_mismatch([] { Argument::int_(7).as_scalar_type(); }, "ScalarType", "Int");
  expect_mismatch([] { Argument::int_(7).as_layout(); }, "Layout", "Int");
  expect_mismatch([] { Argument::int_(7).as_memory_format(); }, "MemoryFormat", "Int");
  expect_mismatch([] { Argument::string("cpu").as_device(); }, "Device", "String");
  expect_mismatch([] { Argument::int_(1).as_tensors(); }, "Tensors", "Int");
}

TEST(Argument, ValuesReplaceAndEquality) {
  Fixture x;
  Argument sym = Argument::sym_ints({{x.n, 0}, {nullptr, 3}, {x.n, 0}});
  EXPECT_EQ(sym.values(), (std::vector<Value*>{x.n, x.n}));
  Argument opt = Argument::optional_tensors({nullptr, x.a, x.b});
  EXPECT_EQ(opt.values(), (std::vector<Value*>{x.a, x.b}));
  EXPECT_TRUE(opt.replace_value(x.a, x.b));
  EXPECT_EQ(opt.values(), (std::vector<Value*>{x.b, x.b}));
  EXPECT_FALSE(opt.replace_value(x.a, x.b));
  EXPECT_TRUE(Argument::int_(1).values().empty());
  EXPECT_EQ(Argument::float_(NAN), Argument::float_(NAN));
  EXPECT_NE(Argument::int_(1), Argument::float_(1.0));
  EXPECT_NE(Argument::ints({1, 2}), Argument::ints({1, 3}));
  EXPECT_EQ(Argument::tensors({x.a}), Argument::tensors({x.a}));
}

TEST(Argument, TextSpellings) {
  Fixture x;
  EXPECT_EQ(Argument().to_string(), "None");
  EXPECT_EQ(Argument::tensor(x.a).to_string(), "%a");
  EXPECT_EQ(Argument::ints({1, -2}).to_string(), "[1, -2]");
  EXPECT_EQ(Argument::float_(1.0).to_string(), "1.0");
  EXPECT_EQ(Argument::float_(1e-5).to_string(), "1e-05");
  EXPECT_EQ(Argument::float_(-INFINITY).to_string(), "-inf");
  EXPECT_EQ(Argument::bool_(true).to_string(), "True");
  EXPECT_EQ(Argument::string("ta\"nh").to_string(), "\"ta\\\"nh\"");
  EXPECT_EQ(Argument::scalar_type(DType::Float32).to_string(), "dtype.f32");
  EXPECT_EQ(Argument::layout(Layout::Strided).to_string(), "layout.strided");
  EXPECT_EQ(Argument::memory_format(MemoryFormat::ChannelsLast).to_string(), "memory_format.channels_last");
  EXPECT_EQ(Argument::device(Device{"cuda", 0}).to_string(), "device(\"cuda:0\")");
  EXPECT_EQ(Argument::sym_int({nullptr, 4}).to_string(), "sym(4)");
  EXPECT_EQ(Argument::sym_ints({{x.n, 0}, {nullptr, 4}}).to_string(), "[%n, 4]");
  EXPECT_EQ(Argument::sym_ints({{nullptr, 4}}).to_string(), "sym[4]");
  EXPECT_EQ(Argument::optional_tensors({x.a, nullptr}).to_string(), "?[%a, None]");
  EXPECT_EQ(Argument::floats({}).to_string(), "float[]");
}

}  // namespace
}  // namespace kiln::ir
