#include "kiln/compiler/npz_inputs.h"

#include <algorithm>
#include <cstring>

#include "kiln/support/error.h"
#include "kiln/support/npz.h"

namespace kiln::compiler {

const HostTensor& pick(const std::map<std::string, HostTensor>& arrays, const std::string& indexed,
                       const std::string& name, const std::string& file) {
  auto it = arrays.find(indexed);
  if (it == arrays.end()) it = arrays.find(name);
  KILN_CHECK(it != arrays.end(), InvalidInput, "'", file, "' has neither '", indexed, "' nor '", name, "'");
  return it->second;
}

std::vector<HostTensor> pick_inputs(const std::vector<ir::Value*>& graph_inputs, const std::string& path) {
  std::map<std::string, HostTensor> arrays = read_npz(path);
  std::vector<HostTensor> inputs;
  for (size_t k = 0; k < graph_inputs.size(); ++k) {
    inputs.push_back(pick(arrays, "input_" + std::to_string(k), graph_inputs[k]->name(), path));
  }
  return inputs;
}

std::vector<std::vector<HostTensor>> pick_calibration_batches(const std::vector<ir::Value*>& graph_inputs,
                                                              const std::string& path,
                                                              const ir::SymRanges& ranges) {
  const std::map<std::string, HostTensor> arrays = read_npz(path);
  std::vector<std::vector<HostTensor>> batches;
  for (size_t k = 0; k < graph_inputs.size(); ++k) {
    const ir::Value& input = *graph_inputs[k];
    const std::string indexed = "input_" + std::to_string(k);
    const HostTensor& a = pick(arrays, indexed, input.name(), path);
    const std::string what = "'" + path + "': the array for input '" + input.name() + "'";
    KILN_CHECK(input.is_tensor(), InvalidInput, what, ": the input is not a tensor");
    const ir::TensorMeta& meta = input.meta();
    KILN_CHECK(a.dim() == meta.rank() && a.dim() >= 1, InvalidInput, what, " has rank ", a.dim(),
               ", the input ", meta.rank());
    // Floating inputs take any floating array (converted to fp32); integer and Bool inputs (token ids, masks)
    // an integer or Bool array, converted to the input's dtype.
    const bool floating = is_floating(meta.dtype);
    KILN_CHECK(is_floating(a.dtype()) == floating, InvalidInput, what, " is ", dtype_name(a.dtype()),
               ", the input ", dtype_name(meta.dtype),
               floating ? " (calibration data of a floating input is floating)"
                        : " (calibration data of an integer input is integer)");
    for (int64_t d = 1; d < a.dim(); ++d) {
      const std::optional<int64_t> fixed = meta.sizes[static_cast<size_t>(d)].as_int();
      KILN_CHECK(!fixed || *fixed == a.sizes()[d], InvalidInput, what, " has size ", a.sizes()[d], " in dim ",
                 d, ", the input ", *fixed);
    }
    const int64_t rows = a.sizes()[0];
    KILN_CHECK(rows > 0, InvalidInput, what, " has no rows");
    // A static dim 0 is the batch; a dynamic one takes the rows in batches of the range's max, the last
    // batch the rest (so that no batch is outside the optimization profile).
    const std::optional<int64_t> batch = meta.sizes[0].as_int();
    const ir::SymRange range = batch ? ir::SymRange{*batch, *batch} : meta.sizes[0].bound(ranges);
    const int64_t per = batch ? *batch : std::min(rows, range.max);
    KILN_CHECK(per > 0 && (!batch || rows % per == 0), InvalidInput, what, " has ", rows,
               " rows in dim 0, not a positive multiple of the input's ", per);
    const size_t count = static_cast<size_t>((rows + per - 1) / per);
    const int64_t last = rows - static_cast<int64_t>(count - 1) * per;
    KILN_CHECK(last >= range.min, InvalidInput, what, " has ", rows, " rows in dim 0: its last batch of ",
               last, " rows is below the input's minimum batch ", range.min, " (batches of ", per, ")");
    KILN_CHECK(k == 0 || count == batches.size(), InvalidInput, what, " holds ", count,
               " batches, the other inputs ", batches.size());
    batches.resize(count);
    const DType dtype = floating ? DType::Float32 : meta.dtype;
    const HostTensor f = a.dtype() == dtype ? a : a.to(dtype);
    const size_t row_bytes = static_cast<size_t>(f.nbytes() / rows);
    for (size_t b = 0; b < count; ++b) {
      std::vector<int64_t> sizes = a.sizes();
      sizes[0] = b + 1 < count ? per : last;
      HostTensor part(dtype, sizes);
      std::memcpy(part.mutable_data(), f.data() + b * static_cast<size_t>(per) * row_bytes,
                  static_cast<size_t>(sizes[0]) * row_bytes);
      batches[b].push_back(std::move(part));
    }
  }
  KILN_CHECK(!batches.empty(), InvalidInput, "'", path,
             "': no calibration batches (the program has no inputs)");
  return batches;
}

}  // namespace kiln::compiler
