#pragma once
// Weights and constant tensors of a .pt2 archive: the payload configs
// (data/weights/<model>_weights_config.json, data/constants/<model>_constants_config.json) and the raw
// storage files they point to. Several tensors may share one storage file; each is rebuilt from the
// storage bytes and its sizes/strides/storage_offset into a contiguous HostTensor.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/archive.h"
#include "frontend/json_reader.h"
#include "kiln/ir/tensor_meta.h"
#include "kiln/support/host_tensor.h"

namespace kiln::frontend {

/// Rebuilds a contiguous tensor from storage bytes. Every element's byte range is checked against the
/// storage: a storage too short for the metadata is kiln::Error(InvalidInput) naming `what`.
HostTensor tensor_from_storage(std::shared_ptr<const std::vector<uint8_t>> storage, DType dtype,
                               const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                               int64_t storage_offset, const std::string& what);

class WeightStore {
 public:
  /// Reads and checks both payload configs (either may be absent: then it holds nothing).
  explicit WeightStore(const Pt2Archive& archive);

  /// The tensor stored for `fqn` ("conv.weight", "_tensor_constant0"), looked up in the weights config, then
  /// in the constants config (non-persistent buffers and tensor constants live there). Throws
  /// kiln::Error(InvalidInput) when absent, its file is missing or too short, and Unsupported for pickled
  /// payloads.
  HostTensor load(const std::string& fqn);
  bool contains(const std::string& fqn) const;

 private:
  struct Payload {
    std::string path;  // relative to the archive's top-level folder
    bool use_pickle = false;
    std::optional<JsonRef> tensor_meta;
    std::string config_entry;
  };
  void read_config(const std::string& entry, const std::string& directory, std::map<std::string, Payload>& out);

  const Pt2Archive& archive_;
  std::vector<std::shared_ptr<nlohmann::json>> documents_;
  std::map<std::string, Payload> weights_;
  std::map<std::string, Payload> constants_;
  std::map<std::string, std::shared_ptr<const std::vector<uint8_t>>> files_;
};

}  // namespace kiln::frontend
