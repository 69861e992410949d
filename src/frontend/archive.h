#pragma once
// The .pt2 archive layout (torch >= 2.8): one top-level folder holding archive_format, byteorder,
// models/<name>.json, data/weights/<name>_weights_config.json + weight files, and
// data/constants/<name>_constants_config.json + constant files.

#include <string>
#include <vector>

#include "kiln/support/zip.h"

namespace kiln::frontend {

class Pt2Archive {
 public:
  /// Checks the layout and picks the model (the only models/*.json, or "model" when there are several).
  /// Throws kiln::Error naming the archive: InvalidInput for a malformed layout, Unsupported for the pre-2.8
  /// layout (serialized_exported_program.json) and big-endian archives.
  explicit Pt2Archive(ZipReader zip);

  const std::string& label() const { return zip_.label(); }
  /// The top-level folder with its trailing slash ("model/").
  const std::string& prefix() const { return prefix_; }
  /// The model's name ("model" for models/model.json).
  const std::string& model_name() const { return model_name_; }
  /// Entry paths relative to the top-level folder ("models/model.json").
  std::string model_entry() const { return "models/" + model_name_ + ".json"; }
  std::string weights_config_entry() const { return "data/weights/" + model_name_ + "_weights_config.json"; }
  std::string constants_config_entry() const {
    return "data/constants/" + model_name_ + "_constants_config.json";
  }

  bool contains(const std::string& relative) const { return zip_.contains(prefix_ + relative); }
  /// Reads an entry by relative path; a missing entry is kiln::Error(InvalidInput) naming it.
  std::vector<uint8_t> read(const std::string& relative) const;
  std::string read_text(const std::string& relative) const;

 private:
  ZipReader zip_;
  std::string prefix_;
  std::string model_name_;
};

}  // namespace kiln::frontend
