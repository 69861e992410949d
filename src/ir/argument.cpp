// Argument: construction, typed accessors with kind checks, value references and text.

#include <cmath>

#include "kiln/ir/graph.h"
#include "kiln/support/error.h"
#include "text_format.h"

namespace kiln::ir {

const char* to_string(Argument::Kind kind) {
  using K = Argument::Kind;
  switch (kind) {
    case K::None: return "None";
    case K::Tensor: return "Tensor";
    case K::Tensors: return "Tensors";
    case K::OptionalTensors: return "OptionalTensors";
    case K::Int: return "Int";
    case K::Ints: return "Ints";
    case K::Float: return "Float";
    case K::Floats: return "Floats";
    case K::Bool: return "Bool";
    case K::Bools: return "Bools";
    case K::String: return "String";
    case K::Strings: return "Strings";
    case K::SymInt: return "SymInt";
    case K::SymInts: return "SymInts";
    case K::SymFloat: return "SymFloat";
    case K::SymBool: return "SymBool";
    case K::ScalarType: return "ScalarType";
    case K::Layout: return "Layout";
    case K::MemoryFormat: return "MemoryFormat";
    case K::Device: return "Device";
    case K::Graph: return "Graph";
  }
  return "Unknown";
}

namespace {
[[noreturn]] void mismatch(const char* expected, Argument::Kind actual, const Argument& arg) {
  KILN_FAIL(InvalidInput, "argument kind mismatch: expected ", expected, ", got ", to_string(actual), " (",
            arg.to_string(), ")");
}
}  // namespace

Argument Argument::tensor(Value* v) {
  KILN_CHECK(v != nullptr, Internal, "Argument::tensor given a null value");
  Argument a;
  a.kind_ = Kind::Tensor;
  a.values_ = {v};
  return a;
}
Argument Argument::tensors(std::vector<Value*> vs) {
  for (Value* v : vs) KILN_CHECK(v != nullptr, Internal, "Argument::tensors given a null value");
  Argument a;
  a.kind_ = Kind::Tensors;
  a.values_ = std::move(vs);
  return a;
}
Argument Argument::optional_tensors(std::vector<Value*> vs) {
  Argument a;
  a.kind_ = Kind::OptionalTensors;
  a.values_ = std::move(vs);
  return a;
}
Argument Argument::int_(int64_t v) {
  Argument a;
  a.kind_ = Kind::Int;
  a.ints_ = {v};
  return a;
}
Argument Argument::ints(std::vector<int64_t> vs) {
  Argument a;
  a.kind_ = Kind::Ints;
  a.ints_ = std::move(vs);
  return a;
}
Argument Argument::float_(double v) {
  Argument a;
  a.kind_ = Kind::Float;
  a.floats_ = {v};
  return a;
}
Argument Argument::floats(std::vector<double> vs) {
  Argument a;
  a.kind_ = Kind::Floats;
  a.floats_ = std::move(vs);
  return a;
}
Argument Argument::bool_(bool v) {
  Argument a;
  a.kind_ = Kind::Bool;
  a.bools_ = {v};
  return a;
}
Argument Argument::bools(std::vector<bool> vs) {
  Argument a;
  a.kind_ = Kind::Bools;
  a.bools_ = std::move(vs);
  return a;
}
Argument Argument::string(std::string v) {
  Argument a;
  a.kind_ = Kind::String;
  a.strings_ = {std::move(v)};
  return a;
}
Argument Argument::strings(std::vector<std::string> vs) {
  Argument a;
  a.kind_ = Kind::Strings;
  a.strings_ = std::move(vs);
  return a;
}
Argument Argument::sym_int(SymIntArg v) {
  Argument a;
  a.kind_ = Kind::SymInt;
  a.sym_ints_ = {v};
  return a;
}
Argument Argument::sym_ints(std::vector<SymIntArg> vs) {
  Argument a;
  a.kind_ = Kind::SymInts;
  a.sym_ints_ = std::move(vs);
  return a;
}
Argument Argument::sym_float(Value* v) {
  KILN_CHECK(v != nullptr, Internal, "Argument::sym_float given a null value");
  Argument a;
  a.kind_ = Kind::SymFloat;
  a.values_ = {v};
  return a;
}
Argument Argument::sym_bool(Value* v) {
  KILN_CHECK(v != nullptr, Internal, "Argument::sym_bool given a null value");
  Argument a;
  a.kind_ = Kind::SymBool;
  a.values_ = {v};
  return a;
}
Argument Argument::scalar_type(DType d) {
  Argument a;
  a.kind_ = Kind::ScalarType;
  a.ints_ = {static_cast<int64_t>(d)};
  return a;
}
Argument Argument::layout(Layout l) {
  Argument a;
  a.kind_ = Kind::Layout;
  a.ints_ = {static_cast<int64_t>(l)};
  return a;
}
Argument Argument::memory_format(MemoryFormat m) {
  Argument a;
  a.kind_ = Kind::MemoryFormat;
  a.ints_ = {static_cast<int64_t>(m)};
  return a;
}
Argument Argument::device(Device d) {
  Argument a;
  a.kind_ = Kind::Device;
  a.strings_ = {d.type};
  a.ints_ = {d.index};
  return a;
}

Argument Argument::graph(std::shared_ptr<const Graph> g) {
  KILN_CHECK(g != nullptr, Internal, "Argument::graph given a null graph");
  Argument a;
  a.kind_ = Kind::Graph;
  a.graph_ = std::move(g);
  return a;
}

Value* Argument::as_tensor() const {
  if (kind_ != Kind::Tensor) mismatch("Tensor", kind_, *this);
  return values_[0];
}
const std::vector<Value*>& Argument::as_tensors() const {
  if (kind_ != Kind::Tensors && kind_ != Kind::OptionalTensors) mismatch("Tensors", kind_, *this);
  return values_;
}
int64_t Argument::as_int() const {
  if (kind_ == Kind::Int) return ints_[0];
  if (kind_ == Kind::SymInt && !sym_ints_[0].is_value()) return sym_ints_[0].constant;
  mismatch("Int", kind_, *this);
}
std::vector<int64_t> Argument::as_ints() const {
  if (kind_ == Kind::Ints) return ints_;
  if (kind_ == Kind::SymInts) {
    std::vector<int64_t> out;
    for (const auto& s : sym_ints_) {
      KILN_CHECK(!s.is_value(), InvalidInput,
                 "argument kind mismatch: expected Ints, got SymInts with the symbolic entry %",
                 s.value->name(), " (", to_string(), ")");
      out.push_back(s.constant);
    }
    return out;
  }
  mismatch("Ints", kind_, *this);
}
double Argument::as_float() const {
  if (kind_ == Kind::Float) return floats_[0];
  if (kind_ == Kind::Int) return static_cast<double>(ints_[0]);
  mismatch("Float", kind_, *this);
}
const std::vector<double>& Argument::as_floats() const {
  if (kind_ != Kind::Floats) mismatch("Floats", kind_, *this);
  return floats_;
}
bool Argument::as_bool() const {
  if (kind_ != Kind::Bool) mismatch("Bool", kind_, *this);
  return bools_[0];
}
const std::vector<bool>& Argument::as_bools() const {
  if (kind_ != Kind::Bools) mismatch("Bools", kind_, *this);
  return bools_;
}
const std::string& Argument::as_string() const {
  if (kind_ != Kind::String) mismatch("String", kind_, *this);
  return strings_[0];
}
const std::vector<std::string>& Argument::as_strings() const {
  if (kind_ != Kind::Strings) mismatch("Strings", kind_, *this);
  return strings_;
}
SymIntArg Argument::as_sym_int() const {
  if (kind_ == Kind::SymInt) return sym_ints_[0];
  if (kind_ == Kind::Int) return SymIntArg{nullptr, ints_[0]};
  mismatch("SymInt", kind_, *this);
}
std::vector<SymIntArg> Argument::as_sym_ints() const {
  if (kind_ == Kind::SymInts) return sym_ints_;
  if (kind_ == Kind::Ints) {
    std::vector<SymIntArg> out;
    for (int64_t v : ints_) out.push_back(SymIntArg{nullptr, v});
    return out;
  }
  mismatch("SymInts", kind_, *this);
}
Value* Argument::as_sym_value() const {
  if (kind_ != Kind::SymFloat && kind_ != Kind::SymBool) mismatch("SymFloat or SymBool", kind_, *this);
  return values_[0];
}
DType Argument::as_scalar_type() const {
  if (kind_ != Kind::ScalarType) mismatch("ScalarType", kind_, *this);
  return static_cast<DType>(ints_[0]);
}
Layout Argument::as_layout() const {
  if (kind_ != Kind::Layout) mismatch("Layout", kind_, *this);
  return static_cast<Layout>(ints_[0]);
}
MemoryFormat Argument::as_memory_format() const {
  if (kind_ != Kind::MemoryFormat) mismatch("MemoryFormat", kind_, *this);
  return static_cast<MemoryFormat>(ints_[0]);
}
Device Argument::as_device() const {
  if (kind_ != Kind::Device) mismatch("Device", kind_, *this);
  return Device{strings_[0], static_cast<int>(ints_[0])};
}

const std::shared_ptr<const Graph>& Argument::as_graph() const {
  if (kind_ != Kind::Graph) mismatch("Graph", kind_, *this);
  return graph_;
}

std::vector<Value*> Argument::values() const {
  std::vector<Value*> out;
  for (Value* v : values_) {
    if (v) out.push_back(v);
  }
  for (const auto& s : sym_ints_) {
    if (s.value) out.push_back(s.value);
  }
  return out;
}

bool Argument::replace_value(Value* from, Value* to) {
  bool changed = false;
  for (Value*& v : values_) {
    if (v == from) {
      v = to;
      changed = true;
    }
  }
  for (auto& s : sym_ints_) {
    if (s.value == from) {
      s.value = to;
      changed = true;
    }
  }
  return changed;
}

std::string Argument::to_string() const { return textfmt::format_argument(*this); }

bool Argument::operator==(const Argument& other) const {
  if (kind_ != other.kind_ || values_ != other.values_ || ints_ != other.ints_ || bools_ != other.bools_ ||
      strings_ != other.strings_ || sym_ints_ != other.sym_ints_ || graph_ != other.graph_ ||
      floats_.size() != other.floats_.size()) {
    return false;
  }
  for (size_t i = 0; i < floats_.size(); ++i) {
    double a = floats_[i], b = other.floats_[i];
    if (!(a == b || (std::isnan(a) && std::isnan(b)))) return false;
  }
  return true;
}

}  // namespace kiln::ir
