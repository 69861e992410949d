// Systematic corruption of valid archives: truncation at every length, byte flips at every position, and
// 0x00/0xFF overwrites of every 2-, 4- and 8-byte field position in the headers. Every mutant must either
// throw kiln::Error or give, for every entry it reads, exactly the original bytes of that entry (CRC-32
// checked); anything else (a crash, a sanitizer report, another exception type) fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <map>

#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/zip.h"
#include "support/test_util.h"

namespace kiln {
namespace {

using Contents = std::map<std::string, std::vector<uint8_t>>;

struct Tally {
  int mutants = 0;
  int opened = 0;
  int entries_read = 0;
  int errors = 0;
};

void check_mutant(const std::vector<uint8_t>& bytes, const Contents& original, Tally* tally) {
  ++tally->mutants;
  try {
    ZipReader reader = ZipReader::from_bytes(bytes, "mutant");
    ++tally->opened;
    for (const ZipEntry& entry : reader.entries()) {
      try {
        std::vector<uint8_t> data = reader.read(entry.name);
        ++tally->entries_read;
        auto it = original.find(entry.name);
        if (it == original.end()) {
          ADD_FAILURE() << "read an entry that was not in the archive: '" << entry.name << "'";
        } else if (data != it->second) {
          ADD_FAILURE() << "entry '" << entry.name << "' read back different bytes";
        }
      } catch (const Error&) {
        ++tally->errors;
      }
    }
  } catch (const Error&) {
    ++tally->errors;
  }
}

// The original contents of every entry of a valid archive.
Contents contents_of(const std::vector<uint8_t>& bytes) {
  ZipReader reader = ZipReader::from_bytes(bytes, "original");
  Contents out;
  for (const ZipEntry& e : reader.entries()) out[e.name] = reader.read(e.name);
  return out;
}

// Whether position `pos` lies in a header (not in entry data): local headers, the central directory and
// the end records. Field-overwrite mutations are concentrated there.
std::vector<bool> header_mask(const std::vector<uint8_t>& bytes) {
  std::vector<bool> mask(bytes.size(), true);
  ZipReader reader = ZipReader::from_bytes(bytes, "original");
  for (const ZipEntry& e : reader.entries()) {
    for (uint64_t i = e.data_offset; i < e.data_offset + e.compressed_size; ++i) mask[i] = false;
  }
  return mask;
}

void corrupt_everywhere(const std::vector<uint8_t>& original_bytes, const std::string& what) {
  SCOPED_TRACE(what);
  const Contents original = contents_of(original_bytes);
  const std::vector<bool> in_header = header_mask(original_bytes);
  const size_t n = original_bytes.size();
  Tally tally;

  // Truncation at every length (and appended garbage). Large archives: every length near either end and
  // every 7th in between (each truncation rescans up to 64 KiB for the end record).
  for (size_t len = 0; len < n; ++len) {
    if (n > 16384 && len >= 1024 && len + 1024 <= n && len % 7 != 0) continue;
    check_mutant(std::vector<uint8_t>(original_bytes.begin(), original_bytes.begin() + len), original,
                 &tally);
  }
  std::vector<uint8_t> longer = original_bytes;
  longer.insert(longer.end(), 100, 0x5a);
  check_mutant(longer, original, &tally);

  // One flipped byte at every header position (several different flips) and at data positions (about 2000
  // of them: a flip in entry data can only end in a CRC mismatch).
  const uint8_t kFlips[] = {0x01, 0x80, 0xff, 0x10};
  size_t data_bytes = static_cast<size_t>(std::count(in_header.begin(), in_header.end(), false));
  size_t data_stride = std::max<size_t>(1, data_bytes / 2000);
  std::vector<uint8_t> bytes = original_bytes;
  for (size_t pos = 0; pos < n; ++pos) {
    if (!in_header[pos] && pos % data_stride != 0) continue;
    for (size_t k = 0; k < (in_header[pos] ? 4u : 1u); ++k) {
      uint8_t flip = kFlips[(k + pos) % 4];
      bytes[pos] ^= flip;
      check_mutant(bytes, original, &tally);
      bytes[pos] ^= flip;
    }
  }

  // Fields set to all-zero and all-one (sizes, offsets, counts, zip64 markers) at every header position.
  for (size_t width : {2u, 4u, 8u}) {
    for (size_t pos = 0; pos + width <= n; ++pos) {
      if (!in_header[pos]) continue;
      for (uint8_t fill : {0x00, 0xff}) {
        std::vector<uint8_t> mutant = original_bytes;
        std::fill(mutant.begin() + pos, mutant.begin() + pos + width, fill);
        check_mutant(mutant, original, &tally);
      }
    }
  }

  // Sanity: the loop did exercise both outcomes.
  EXPECT_GT(tally.errors, 0);
  EXPECT_GT(tally.entries_read, 0);
  std::cout << what << ": " << tally.mutants << " mutants, " << tally.opened << " opened, "
            << tally.entries_read << " entries read intact, " << tally.errors << " errors\n";
}

TEST(ZipMalformed, KilnWriterArchive) {
  ZipWriter writer;
  writer.add("model/models/model.json", std::string(R"({"graph": {"nodes": []}})"));
  writer.add("model/data/weights/weight_0", test::lcg_bytes(300, 1));
  writer.add("empty", std::vector<uint8_t>{});
  writer.add("x", test::lcg_bytes(5, 2));
  corrupt_everywhere(writer.finish(), "kiln writer");
  writer.set_force_zip64(true);
  corrupt_everywhere(writer.finish(), "kiln writer, zip64");
}

TEST(ZipMalformed, HandBuiltDeflated) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += std::to_string(i * i) + ",";
  std::vector<test::RawEntry> entries(4);
  entries[0] = {.name = "text", .data = test::bytes_of(text), .method = 8};
  entries[1] = {.name = "random", .data = test::lcg_bytes(200, 5), .method = 8};
  entries[2] = {.name = "descriptor", .data = test::bytes_of(text), .method = 8, .data_descriptor = true};
  entries[3] = {.name = "zip64", .data = test::bytes_of(text), .method = 8, .zip64 = true};
  corrupt_everywhere(test::build_zip(entries, {.comment = "comment"}), "hand-built deflate");
  corrupt_everywhere(test::build_zip(entries, {.zip64_end = true}), "hand-built deflate, zip64 end");
}

// One test per fixture, so that CTest can run them in parallel.
class ZipMalformedFixture : public testing::TestWithParam<const char*> {};

TEST_P(ZipMalformedFixture, CorruptEverywhere) {
  corrupt_everywhere(read_file_bytes(test::support_data(GetParam())), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ZipMalformedFixture,
                         testing::Values("py_deflated.zip", "py_zip64.zip", "infozip_zip64.zip",
                                         "infozip_stream.zip", "numpy_savez_compressed.npz"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(ZipMalformed, TorchArchive) {
  std::string path = std::string(KILN_TEST_DATA_DIR) + "/tiny_mlp/model.pt2";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent";
  corrupt_everywhere(read_file_bytes(path), "tiny_mlp/model.pt2");
}

}  // namespace
}  // namespace kiln
