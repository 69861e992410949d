#pragma once
// .npy / .npz reading and writing (numpy's format): float32/64, float16, bfloat16 (as ml_dtypes stores it,
// descr '<V2' or 'bfloat16'), int64/32/16/8, uint8, bool; C order (Fortran order is an error).

#include <map>
#include <string>
#include <vector>

#include "kiln/support/host_tensor.h"

namespace kiln {

HostTensor read_npy(const std::vector<uint8_t>& bytes, const std::string& label = "<npy>");
std::vector<uint8_t> write_npy(const HostTensor& tensor);

/// Arrays by name (the ".npy" suffix removed). Throws kiln::Error(InvalidInput) naming the file and array.
std::map<std::string, HostTensor> read_npz(const std::string& path);
/// The same from the file's bytes; `label` names them in errors.
std::map<std::string, HostTensor> read_npz_from_bytes(std::vector<uint8_t> bytes, const std::string& label = "<npz>");
/// Writes atomically (temp file + rename).
void write_npz(const std::string& path, const std::map<std::string, HostTensor>& arrays);

}  // namespace kiln
