#include "kiln/support/zip.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "support/test_util.h"

namespace kiln {
namespace {

using test::build_zip;
using test::bytes_of;
using test::expect_error;
using test::lcg_bytes;
using test::RawEntry;
using test::support_data;

std::vector<uint8_t> numbers_text() {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += std::to_string(i) + "\n";
  return bytes_of(text);
}

void expect_aligned(const ZipReader& reader) {
  for (const ZipEntry& e : reader.entries()) {
    EXPECT_EQ(e.data_offset % ZipWriter::kAlignment, 0u) << e.name;
  }
}

TEST(ZipWriter, RoundTripManyEntries) {
  ZipWriter writer;
  std::map<std::string, std::vector<uint8_t>> expected;
  for (int i = 0; i < 300; ++i) {
    std::string name =
        "dir" + std::to_string(i % 7) + "/entry_" + std::to_string(i) + std::string(i % 13, 'x');
    std::vector<uint8_t> data = lcg_bytes(static_cast<size_t>(i * 37 % 1000), i + 1);
    writer.add(name, data);
    expected[name] = data;
  }
  writer.add("empty", std::vector<uint8_t>{});
  expected["empty"] = {};
  writer.add("text.json", std::string("{\"a\": 1}"));
  expected["text.json"] = bytes_of("{\"a\": 1}");

  ZipReader reader = ZipReader::from_bytes(writer.finish(), "round trip");
  ASSERT_EQ(reader.entries().size(), expected.size());
  for (const auto& [name, data] : expected) {
    ASSERT_TRUE(reader.contains(name)) << name;
    EXPECT_EQ(reader.read(name), data) << name;
    EXPECT_EQ(reader.find(name)->method, 0);
  }
  EXPECT_EQ(reader.read_text("text.json"), "{\"a\": 1}");
  EXPECT_EQ(reader.find("missing"), nullptr);
  expect_aligned(reader);
  // The entries keep the order they were added in.
  EXPECT_EQ(reader.entries().front().name, "dir0/entry_0");
  EXPECT_EQ(reader.entries().back().name, "text.json");
}

TEST(ZipWriter, EmptyArchive) {
  ZipReader reader = ZipReader::from_bytes(ZipWriter().finish(), "empty");
  EXPECT_TRUE(reader.entries().empty());
}

TEST(ZipWriter, LargeEntry) {
  std::vector<uint8_t> big = lcg_bytes(5 << 20, 7);
  ZipWriter writer;
  writer.add("a", bytes_of("x"));
  writer.add("big", big);
  writer.add("b", bytes_of("y"));
  ZipReader reader = ZipReader::from_bytes(writer.finish());
  EXPECT_EQ(reader.read("big"), big);
  EXPECT_EQ(reader.read_text("b"), "y");
  expect_aligned(reader);
}

TEST(ZipWriter, AlignmentForEveryNameLength) {
  // Name lengths cover every residue mod 64, including those that leave less than 4 bytes of room for the
  // padding field's header.
  ZipWriter writer;
  for (int len = 1; len <= 130; ++len) writer.add(std::string(len, 'n'), lcg_bytes(len % 5, len));
  ZipReader reader = ZipReader::from_bytes(writer.finish());
  ASSERT_EQ(reader.entries().size(), 130u);
  expect_aligned(reader);
  for (int len = 1; len <= 130; ++len) EXPECT_EQ(reader.read(std::string(len, 'n')), lcg_bytes(len % 5, len));
}

TEST(ZipWriter, ForcedZip64) {
  ZipWriter writer;
  writer.set_force_zip64(true);
  writer.add("one", lcg_bytes(100, 1));
  writer.add("two", std::vector<uint8_t>{});
  writer.add("three", lcg_bytes(1000, 3));
  std::vector<uint8_t> bytes = writer.finish();
  ZipReader reader = ZipReader::from_bytes(bytes);
  EXPECT_EQ(reader.read("one"), lcg_bytes(100, 1));
  EXPECT_TRUE(reader.read("two").empty());
  EXPECT_EQ(reader.read("three"), lcg_bytes(1000, 3));
  expect_aligned(reader);
  // The central directory holds the 0xFFFFFFFF markers: the values must have come from zip64 fields.
  EXPECT_EQ(reader.find("three")->uncompressed_size, 1000u);
}

TEST(ZipWriter, Zip64ForEntryCount) {
  // More than 65535 entries need the zip64 end record.
  ZipWriter writer;
  const int n = 70000;
  for (int i = 0; i < n; ++i) writer.add(std::to_string(i), std::to_string(i * 3));
  ZipReader reader = ZipReader::from_bytes(writer.finish(), "many");
  ASSERT_EQ(reader.entries().size(), static_cast<size_t>(n));
  EXPECT_EQ(reader.read_text("0"), "0");
  EXPECT_EQ(reader.read_text("69999"), std::to_string(69999 * 3));
}

TEST(ZipWriter, Deterministic) {
  auto make = [] {
    ZipWriter w;
    w.add("a", lcg_bytes(77, 2));
    w.add("b", std::string("text"));
    return w.finish();
  };
  EXPECT_EQ(make(), make());
}

TEST(ZipWriter, RejectsBadNames) {
  for (std::string name : {std::string(""), std::string("../x"), std::string("a/../b"), std::string("/abs"),
                           std::string("a\\..\\b"), std::string("nul\0x", 5), std::string(70000, 'n')}) {
    ZipWriter writer;
    EXPECT_THROW(writer.add(name, std::string("x")), Error) << name;
  }
  ZipWriter writer;
  writer.add("same", std::string("1"));
  expect_error([&] { writer.add("same", std::string("2")); }, ErrorKind::InvalidInput, {"same", "duplicate"});
  // Names that merely contain dots are fine.
  writer.add("a..b/..c/.d", std::string("ok"));
  EXPECT_EQ(ZipReader::from_bytes(writer.finish()).read_text("a..b/..c/.d"), "ok");
}

TEST(ZipWriter, WriteFileAtomically) {
  test::TempDir dir;
  ZipWriter writer;
  writer.add("x", std::string("content"));
  std::string path = dir.file("out.zip");
  writer.write_file(path);
  EXPECT_EQ(ZipReader::open(path).read_text("x"), "content");
  // Overwriting replaces the file; no temporary file is left behind.
  ZipWriter other;
  other.add("y", std::string("other"));
  other.write_file(path);
  ZipReader reread = ZipReader::open(path);
  EXPECT_FALSE(reread.contains("x"));
  EXPECT_EQ(reread.read_text("y"), "other");
  EXPECT_EQ(
      std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()),
      1);
  expect_error([&] { writer.write_file(dir.file("no_such_dir/out.zip")); }, ErrorKind::Io, {"no_such_dir"});
}

// Archives written by Python's zipfile and by Info-ZIP (scripts/make_support_test_data.py).
void expect_fixture_contents(const ZipReader& reader) {
  EXPECT_EQ(reader.read_text("hello.txt"), "hello, kiln\n");
  EXPECT_EQ(reader.read("random.bin"), lcg_bytes(2000));
  EXPECT_EQ(reader.read("dir/numbers.txt"), numbers_text());
}

TEST(ZipReader, PythonDeflated) {
  ZipReader reader = ZipReader::open(support_data("py_deflated.zip"));
  EXPECT_EQ(reader.label(), support_data("py_deflated.zip"));
  ASSERT_EQ(reader.entries().size(), 5u);
  EXPECT_EQ(reader.find("hello.txt")->method, 8);
  expect_fixture_contents(reader);
  EXPECT_TRUE(reader.read("empty.bin").empty());  // a deflated empty entry: two bytes of deflate data
  EXPECT_TRUE(reader.read("dir/").empty());
}

TEST(ZipReader, PythonStored) {
  ZipReader reader = ZipReader::open(support_data("py_stored.zip"));
  EXPECT_EQ(reader.find("dir/numbers.txt")->method, 0);
  expect_fixture_contents(reader);
}

TEST(ZipReader, PythonZip64) {
  ZipReader reader = ZipReader::open(support_data("py_zip64.zip"));
  ASSERT_EQ(reader.entries().size(), 3u);
  expect_fixture_contents(reader);
  EXPECT_EQ(reader.find("random.bin")->uncompressed_size, 2000u);
}

TEST(ZipReader, InfoZipZip64) {
  ZipReader reader = ZipReader::open(support_data("infozip_zip64.zip"));
  EXPECT_EQ(reader.read_text("hello.txt"), "hello, kiln\n");
  EXPECT_EQ(reader.read("numbers.txt"), numbers_text());
}

TEST(ZipReader, InfoZipStreamedWithDataDescriptor) {
  ZipReader reader = ZipReader::open(support_data("infozip_stream.zip"));
  ASSERT_EQ(reader.entries().size(), 1u);
  EXPECT_TRUE(reader.entries()[0].flags & 8);
  EXPECT_EQ(reader.read("-"), numbers_text());
}

TEST(ZipReader, TorchArchive) {
  // torch's writer: data descriptors, "FB" padding fields, a zip64 end record, 64-byte aligned data.
  std::string path = std::string(KILN_TEST_DATA_DIR) + "/tiny_mlp/model.pt2";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent";
  ZipReader reader = ZipReader::open(path);
  ASSERT_TRUE(reader.contains("model/models/model.json"));
  EXPECT_EQ(reader.read_text("model/archive_format"), "pt2");
  expect_aligned(reader);
  for (const ZipEntry& e : reader.entries()) EXPECT_EQ(reader.read(e).size(), e.uncompressed_size);
}

TEST(ZipReader, HandBuiltDeflatedAndStored) {
  std::vector<uint8_t> big = lcg_bytes(100000, 9);
  std::vector<uint8_t> text = numbers_text();
  std::vector<RawEntry> entries(5);
  entries[0] = {.name = "stored", .data = big};
  entries[1] = {.name = "deflated", .data = text, .method = 8};
  entries[2] = {.name = "descriptor", .data = text, .method = 8, .data_descriptor = true};
  entries[3] = {.name = "zip64", .data = big, .method = 8, .zip64 = true};
  entries[4] = {.name = "empty", .data = {}, .method = 8};
  entries.push_back({.name = "empty_no_block", .data = {}, .method = 8, .payload = std::vector<uint8_t>{}});
  for (bool zip64_end : {false, true}) {
    ZipReader reader = ZipReader::from_bytes(build_zip(entries, {.zip64_end = zip64_end, .comment = "hi"}));
    EXPECT_EQ(reader.read("stored"), big);
    EXPECT_EQ(reader.read("deflated"), text);
    EXPECT_EQ(reader.read("descriptor"), text);
    EXPECT_EQ(reader.read("zip64"), big);
    EXPECT_TRUE(reader.read("empty").empty());
    EXPECT_TRUE(reader.read("empty_no_block").empty());
  }
}

TEST(ZipReader, NotAZip) {
  expect_error([] { ZipReader::from_bytes({}, "nothing"); }, ErrorKind::InvalidInput,
               {"nothing", "not a zip"});
  expect_error(
      [] { ZipReader::from_bytes(bytes_of("plain text, long enough to look for a zip end record"), "t"); },
      ErrorKind::InvalidInput, {"not a zip"});
  expect_error([] { ZipReader::open("/nonexistent/kiln/archive.zip"); }, ErrorKind::Io,
               {"/nonexistent/kiln/archive.zip"});
}

TEST(ZipReader, MissingEntry) {
  ZipWriter writer;
  writer.add("a", std::string("x"));
  ZipReader reader = ZipReader::from_bytes(writer.finish(), "arch");
  expect_error([&] { reader.read("b"); }, ErrorKind::InvalidInput, {"arch", "'b'", "no such entry"});
}

// Each case: a hand-made archive that is wrong in one way, and the words the error must contain.
struct BadCase {
  const char* what;
  std::vector<RawEntry> entries;
  test::RawArchiveOptions options;
  ErrorKind kind = ErrorKind::InvalidInput;
  std::vector<std::string> words;
  bool fails_on_open = true;
};

TEST(ZipReader, MalformedCasesGiveClearErrors) {
  std::vector<uint8_t> text = numbers_text();
  std::vector<uint8_t> deflated = test::raw_deflate(text);
  std::vector<BadCase> cases;
  cases.push_back({"duplicate",
                   {{.name = "a", .data = {1}}, {.name = "a", .data = {2}}},
                   {},
                   ErrorKind::InvalidInput,
                   {"'a'", "duplicate"}});
  cases.push_back(
      {"dotdot", {{.name = "x/../../etc/passwd", .data = {1}}}, {}, ErrorKind::InvalidInput, {"'..'"}});
  cases.push_back(
      {"absolute", {{.name = "/etc/passwd", .data = {1}}}, {}, ErrorKind::InvalidInput, {"absolute"}});
  cases.push_back({"local name",
                   {{.name = "a", .data = {1}, .local_name = "b"}},
                   {},
                   ErrorKind::InvalidInput,
                   {"'a'", "local header's name"}});
  cases.push_back({"bad crc",
                   {{.name = "c", .data = text, .method = 8, .crc = 1234}},
                   {},
                   ErrorKind::InvalidInput,
                   {"'c'", "CRC-32"},
                   false});
  cases.push_back({"stored sizes differ",
                   {{.name = "s", .data = {1, 2}, .uncompressed_size = 3}},
                   {},
                   ErrorKind::InvalidInput,
                   {"'s'", "stored entry"}});
  cases.push_back({"encrypted",
                   {{.name = "e", .data = {1}, .flags = 1}},
                   {},
                   ErrorKind::Unsupported,
                   {"'e'", "encrypted"},
                   false});
  cases.push_back({"bzip2",
                   {{.name = "b", .data = {1}, .method = 12}},
                   {},
                   ErrorKind::Unsupported,
                   {"'b'", "method 12"},
                   false});
  cases.push_back({"inflates longer",
                   {{.name = "l", .data = text, .method = 8, .uncompressed_size = text.size() - 1}},
                   {},
                   ErrorKind::InvalidInput,
                   {"'l'", "more than"},
                   false});
  cases.push_back({"inflates shorter",
                   {{.name = "s", .data = text, .method = 8, .uncompressed_size = text.size() + 1}},
                   {},
                   ErrorKind::InvalidInput,
                   {"'s'"},
                   false});
  cases.push_back(
      {"truncated deflate",
       {{.name = "t",
         .data = text,
         .method = 8,
         .payload = std::vector<uint8_t>(deflated.begin(), deflated.begin() + deflated.size() / 2)}},
       {},
       ErrorKind::InvalidInput,
       {"'t'", "truncated"},
       false});
  cases.push_back({"garbage deflate",
                   {{.name = "g", .data = text, .method = 8, .payload = lcg_bytes(500, 3)}},
                   {},
                   ErrorKind::InvalidInput,
                   {"'g'"},
                   false});
  std::vector<uint8_t> trailing = deflated;
  trailing.insert(trailing.end(), {1, 2, 3});
  cases.push_back({"data after deflate end",
                   {{.name = "d", .data = text, .method = 8, .payload = trailing}},
                   {},
                   ErrorKind::InvalidInput,
                   {"'d'", "ends after"},
                   false});
  cases.push_back(
      {"bomb size",
       {{.name = "z", .data = {1, 2, 3}, .method = 8, .uncompressed_size = uint64_t{1} << 40, .zip64 = true}},
       {},
       ErrorKind::InvalidInput,
       {"declare more than", "decompression bomb"}});
  cases.push_back({"implausible ratio",
                   {{.name = "r", .data = {1, 2, 3}, .method = 8, .uncompressed_size = 10000000}},
                   {},
                   ErrorKind::InvalidInput,
                   {"'r'", "implausible"},
                   false});
  cases.push_back({"size past end",
                   {{.name = "p", .data = {1, 2}, .compressed_size = 1000, .uncompressed_size = 1000}},
                   {},
                   ErrorKind::InvalidInput,
                   {"'p'", "runs past"}});
  cases.push_back({"huge size wraps",
                   {{.name = "w",
                     .data = {1},
                     .compressed_size = ~uint64_t{0} - 10,
                     .uncompressed_size = ~uint64_t{0} - 10,
                     .zip64 = true}},
                   {},
                   ErrorKind::InvalidInput,
                   {"'w'"}});
  cases.push_back({"count too large",
                   {{.name = "a", .data = {1}}},
                   {.entry_count = 1000},
                   ErrorKind::InvalidInput,
                   {"claims 1000 entries"}});
  cases.push_back({"count too large zip64",
                   {{.name = "a", .data = {1}}},
                   {.zip64_end = true, .entry_count = uint64_t{1} << 60},
                   ErrorKind::InvalidInput,
                   {"entries"}});
  cases.push_back({"cd offset past end",
                   {{.name = "a", .data = {1}}},
                   {.cd_offset = 1 << 20},
                   ErrorKind::InvalidInput,
                   {"central directory"}});
  cases.push_back({"cd offset wraps zip64",
                   {{.name = "a", .data = {1}}},
                   {.zip64_end = true, .cd_offset = ~uint64_t{0} - 5},
                   ErrorKind::InvalidInput,
                   {"central directory"}});
  cases.push_back({"cd size short",
                   {{.name = "abc", .data = {1}}},
                   {.cd_size = 47},
                   ErrorKind::InvalidInput,
                   {"runs past the end of the central directory"}});
  cases.push_back(
      {"prefix shifts offsets", {{.name = "a", .data = {1}}}, {.cd_offset = 0}, ErrorKind::InvalidInput, {}});

  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<uint8_t> bytes = build_zip(c.entries, c.options);
    auto run = [&] {
      ZipReader reader = ZipReader::from_bytes(bytes, "bad.zip");
      if (!c.fails_on_open) {
        for (const ZipEntry& e : reader.entries()) reader.read(e.name);
      }
    };
    std::vector<std::string> words = c.words;
    words.push_back("bad.zip");
    try {
      if (!c.fails_on_open) {
        // The archive's structure is fine; reading the entry is what fails.
        EXPECT_NO_THROW(ZipReader::from_bytes(bytes, "bad.zip"));
      }
      run();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), c.kind) << e.what();
      for (const std::string& w : words)
        EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
    }
  }
}

// Decompression bombs: deflated entries whose sizes are honest but inflate far beyond the archive (here 100
// MiB of zeros in about 100 KB) are refused when the archive is opened, before anything is inflated; entries
// within the budget (10 MiB of zeros, also about 1000:1) still read.
TEST(ZipReader, RefusesDecompressionBombsOnOpen) {
  const uint64_t big = uint64_t{100} << 20;
  std::vector<uint8_t> bomb = test::raw_deflate_zeros(big);
  std::vector<uint8_t> bytes = build_zip({{.name = "models/model.json",
                                           .method = 8,
                                           .crc = test::crc_of_zeros(big),
                                           .compressed_size = bomb.size(),
                                           .uncompressed_size = big,
                                           .payload = bomb}});
  ASSERT_LT(bytes.size(), ZipReader::kMinInflateBudget / ZipReader::kInflateRatio);
  expect_error([&] { ZipReader::from_bytes(bytes, "bomb.pt2"); }, ErrorKind::InvalidInput,
               {"bomb.pt2", "declare more than 67108864 bytes", "decompression bomb"});

  const uint64_t fine = uint64_t{10} << 20;
  std::vector<uint8_t> zeros = test::raw_deflate_zeros(fine);
  ZipReader reader = ZipReader::from_bytes(build_zip({{.name = "z",
                                                       .method = 8,
                                                       .crc = test::crc_of_zeros(fine),
                                                       .compressed_size = zeros.size(),
                                                       .uncompressed_size = fine,
                                                       .payload = zeros}}));
  EXPECT_EQ(reader.read("z"), std::vector<uint8_t>(fine, 0));
}

TEST(ZipReader, InflateBudgetIsARatioOfTheArchiveSize) {
  EXPECT_EQ(ZipReader::inflate_budget(0), ZipReader::kMinInflateBudget);
  EXPECT_EQ(ZipReader::inflate_budget(1 << 20), ZipReader::kMinInflateBudget);
  EXPECT_EQ(ZipReader::inflate_budget(uint64_t{10} << 20), uint64_t{640} << 20);
  EXPECT_EQ(ZipReader::inflate_budget(~uint64_t{0} / 2), ~uint64_t{0});
}

TEST(ZipReader, ZipMarkersWithoutLocator) {
  // An end record with a 0xFFFFFFFF offset but no zip64 locator (Info-ZIP writes this when streaming zip64).
  std::vector<uint8_t> bytes = build_zip({{.name = "a", .data = {1}}});
  size_t end = bytes.size() - 22;
  for (int i = 0; i < 4; ++i) bytes[end + 16 + i] = 0xff;
  expect_error([&] { ZipReader::from_bytes(bytes, "m"); }, ErrorKind::InvalidInput, {"zip64 locator"});
}

TEST(ZipReader, MultiDiskUnsupported) {
  std::vector<uint8_t> bytes = build_zip({{.name = "a", .data = {1}}});
  bytes[bytes.size() - 22 + 4] = 1;  // number of this disk
  expect_error([&] { ZipReader::from_bytes(bytes, "m"); }, ErrorKind::Unsupported, {"multi-disk"});
}

TEST(ZipReader, ReadByEntryLooksUpOwnEntry) {
  ZipWriter writer;
  writer.add("a", std::string("payload"));
  ZipReader reader = ZipReader::from_bytes(writer.finish());
  ZipEntry forged = reader.entries()[0];
  forged.data_offset = 1u << 30;  // ignored: the reader uses its own, checked entry
  forged.compressed_size = 1u << 30;
  EXPECT_EQ(reader.read(forged), bytes_of("payload"));
  forged.name = "other";
  EXPECT_THROW(reader.read(forged), Error);
}

}  // namespace
}  // namespace kiln
