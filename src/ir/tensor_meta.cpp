// Device and TensorMeta.

#include "kiln/ir/tensor_meta.h"

#include <cctype>

#include "kiln/support/error.h"

namespace kiln::ir {

std::string Device::to_string() const { return index < 0 ? type : type + ":" + std::to_string(index); }

Device Device::make(std::string type, int64_t index) {
  KILN_CHECK(!type.empty() && type.size() <= 64, InvalidInput, "malformed device type '", type, "'");
  for (char c : type) {
    KILN_CHECK(std::islower(static_cast<unsigned char>(c)) || c == '_', InvalidInput, "malformed device type '", type,
               "' (lower-case letters and '_')");
  }
  KILN_CHECK(index >= -1 && index <= kMaxIndex, InvalidInput, "device index ", index, " of '", type,
             "' is out of range [-1, ", kMaxIndex, "]");
  Device d;
  d.type = std::move(type);
  d.index = static_cast<int>(index);
  return d;
}

Device Device::parse(const std::string& text) {
  auto colon = text.find(':');
  if (colon == std::string::npos) return make(text, -1);
  std::string idx = text.substr(colon + 1);
  KILN_CHECK(!idx.empty() && idx.size() <= 6, InvalidInput, "malformed device index in '", text, "'");
  for (char c : idx) {
    KILN_CHECK(std::isdigit(static_cast<unsigned char>(c)), InvalidInput, "malformed device index in '", text, "'");
  }
  return make(text.substr(0, colon), std::stoi(idx));
}

bool TensorMeta::is_static() const {
  for (const auto& s : sizes) {
    if (!s.is_constant()) return false;
  }
  return true;
}

std::optional<std::vector<int64_t>> TensorMeta::static_sizes() const {
  std::vector<int64_t> out;
  for (const auto& s : sizes) {
    auto v = s.as_int();
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

std::vector<SymExpr> TensorMeta::contiguous_strides(const std::vector<SymExpr>& sizes) {
  std::vector<SymExpr> strides(sizes.size());
  SymExpr running = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = running;
    // As torch does, a zero-size dimension counts as 1 for the strides of the dimensions before it.
    auto v = sizes[i].as_int();
    if (!(v && *v == 0)) running = running * sizes[i];
  }
  return strides;
}

TensorMeta TensorMeta::make(DType dtype, const std::vector<int64_t>& sizes) {
  TensorMeta m;
  m.dtype = dtype;
  for (int64_t s : sizes) m.sizes.emplace_back(s);
  return m;
}

namespace {
bool has_default_strides(const TensorMeta& m) {
  return m.strides.empty() || m.strides == TensorMeta::contiguous_strides(m.sizes);
}
}  // namespace

std::string TensorMeta::to_string() const {
  std::string s = dtype_name(dtype);
  s += "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ", ";
    s += sizes[i].to_string();
  }
  s += "]";
  std::vector<std::string> extras;
  if (!has_default_strides(*this)) {
    std::string st = "strides=[";
    for (size_t i = 0; i < strides.size(); ++i) {
      if (i) st += ", ";
      st += strides[i].to_string();
    }
    extras.push_back(st + "]");
  }
  if (!(storage_offset == SymExpr(0))) extras.push_back("offset=" + storage_offset.to_string());
  if (requires_grad) extras.push_back("requires_grad");
  if (!extras.empty()) {
    s += "{";
    for (size_t i = 0; i < extras.size(); ++i) {
      if (i) s += ", ";
      s += extras[i];
    }
    s += "}";
  }
  if (!(device == Device{})) s += "@" + device.to_string();
  return s;
}

bool TensorMeta::operator==(const TensorMeta& other) const {
  if (dtype != other.dtype || sizes != other.sizes || storage_offset != other.storage_offset ||
      !(device == other.device) || requires_grad != other.requires_grad) {
    return false;
  }
  if (strides == other.strides) return true;
  const auto a = strides.empty() ? contiguous_strides(sizes) : strides;
  const auto b = other.strides.empty() ? contiguous_strides(other.sizes) : other.strides;
  return a == b;
}

}  // namespace kiln::ir
