#pragma once
// DType: the element types Kiln knows, with their sizes, names and the codes other formats use.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln {

enum class DType : uint8_t { Float32, Float16, BFloat16, Float64, Int64, Int32, Int16, Int8, UInt8, Bool };

/// All DTypes, for iteration in tests and tables.
inline constexpr DType kAllDTypes[] = {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64,
                                       DType::Int64,   DType::Int32,   DType::Int16,    DType::Int8,
                                       DType::UInt8,   DType::Bool};

/// Bytes per element.
size_t dtype_size(DType dtype);
/// Short name used in IR text and messages: f32 f16 bf16 f64 i64 i32 i16 i8 u8 bool.
const char* dtype_name(DType dtype);
/// Parses a short name (as dtype_name prints it); std::nullopt when unknown.
std::optional<DType> dtype_from_name(std::string_view name);
bool is_floating(DType dtype);
bool is_integral(DType dtype);  // excludes Bool
/// The machine epsilon of the type PyTorch computes `dtype` in (its opmath type: fp32 for fp16, bf16 and
/// fp32; fp64 for fp64): aten.rms_norm's default eps.
double opmath_epsilon(DType dtype);

/// torch.export serialization codes (torch/_export/serde/schema.py ScalarType): FLOAT=7, HALF=6, ...
/// Throws kiln::Error(InvalidInput) naming the code when Kiln has no such type.
DType dtype_from_torch_code(int code);
int dtype_to_torch_code(DType dtype);

/// IEEE half and bfloat16 conversions (round to nearest even).
float half_to_float(uint16_t bits);
uint16_t float_to_half(float value);
float bfloat16_to_float(uint16_t bits);
uint16_t float_to_bfloat16(float value);

}  // namespace kiln
