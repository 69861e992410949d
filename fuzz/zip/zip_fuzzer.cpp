// libFuzzer target: the zip reader (support/zip_reader.cpp) on arbitrary bytes: open, then read every entry
// (inflating deflated ones, CRC checked). An entry that fails to read must fail alone, cleanly.

#include <optional>

#include "common/fuzz_check.h"
#include "kiln/support/zip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<kiln::ZipReader> zip;
  if (!kiln::fuzz::accepts(
          [&] { zip.emplace(kiln::ZipReader::from_bytes(kiln::fuzz::to_bytes(data, size), "fuzz.zip")); })) {
    return 0;
  }
  for (const kiln::ZipEntry& entry : zip->entries()) {
    std::vector<uint8_t> bytes;
    if (!kiln::fuzz::accepts([&] { bytes = zip->read(entry); })) continue;
    kiln::fuzz::invariant("an entry read back has its declared size",
                          [&] { return bytes.size() == entry.uncompressed_size; });
    kiln::fuzz::invariant("find() returns the listed entry",
                          [&] { return zip->find(entry.name) != nullptr; });
  }
  return 0;
}
