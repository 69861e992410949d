#pragma once
// Node metadata that carries the INT8 scales a Q/DQ program stored a weight with (its dequantize_per_channel
// of int8 values, folded by lowering into an fp32 constant) to the converters, which hand them to the engine
// (engine::Weights::int8_scales): key kInt8WeightScalesKeyPrefix + the constant's name, on each node that
// reads the constant; value the scales, one per output channel (dim 0), as text.

#include <charconv>
#include <optional>
#include <string>
#include <vector>

namespace kiln::ir {

inline constexpr const char* kInt8WeightScalesKeyPrefix = "kiln.int8_weight_scales:";

/// "s0 s1 ..." with every float exactly (shortest round-trip form).
inline std::string format_int8_weight_scales(const std::vector<float>& scales) {
  std::string out;
  char buf[32];
  for (float s : scales) {
    if (!out.empty()) out += ' ';
    auto r = std::to_chars(buf, buf + sizeof(buf), s);
    out.append(buf, r.ptr);
  }
  return out;
}

/// The scales of a format_int8_weight_scales text; nullopt when it is not one.
inline std::optional<std::vector<float>> parse_int8_weight_scales(const std::string& text) {
  std::vector<float> out;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    float v = 0.0f;
    auto r = std::from_chars(p, end, v);
    if (r.ec != std::errc()) return std::nullopt;
    out.push_back(v);
    p = r.ptr;
    if (p < end && *p == ' ') ++p;
  }
  return out;
}

}  // namespace kiln::ir
