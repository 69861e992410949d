// .npz: a zip of NAME.npy entries, stored or deflated (numpy.savez / numpy.savez_compressed).
#include "kiln/support/npz.h"

#include "kiln/support/error.h"
#include "kiln/support/zip.h"
#include "npy_internal.h"

namespace kiln {

namespace {
constexpr std::string_view kSuffix = ".npy";

std::string label_for(const std::string& path, const std::string& key) {
  std::string label = path;
  label += '[';
  label += key;
  label += ']';
  return label;
}

// The arrays of an opened npz; `path` names it in errors.
std::map<std::string, HostTensor> read_zip_arrays(const ZipReader& zip, const std::string& path) {
  std::map<std::string, HostTensor> arrays;
  for (const ZipEntry& entry : zip.entries()) {
    const std::string& name = entry.name;
    if (name.size() <= kSuffix.size() ||
        name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
      KILN_FAIL(InvalidInput, "npz '", path, "': entry '", name, "' is not a .npy array");
    }
    std::string key = name.substr(0, name.size() - kSuffix.size());
    arrays.emplace(key, npy_internal::read_npy_owned(zip.read(entry), label_for(path, key)));
  }
  return arrays;
}

}  // namespace

std::map<std::string, HostTensor> read_npz(const std::string& path) {
  return read_zip_arrays(ZipReader::open(path), path);
}

std::map<std::string, HostTensor> read_npz_from_bytes(std::vector<uint8_t> bytes, const std::string& label) {
  return read_zip_arrays(ZipReader::from_bytes(std::move(bytes), label), label);
}

void write_npz(const std::string& path, const std::map<std::string, HostTensor>& arrays) {
  ZipWriter zip;
  for (const auto& [key, tensor] : arrays) {
    KILN_CHECK(tensor.defined(), InvalidInput, "write_npz '", path, "': array '", key, "' is undefined");
    zip.add(key + std::string(kSuffix), write_npy(tensor));
  }
  zip.write_file(path);
}

}  // namespace kiln
