// DiskEngineCache (atomic entries, LRU eviction, corrupted entries are misses, concurrent writers) and the
// engine segment hash (ignores weight values; changes with shapes, dtypes, settings, structure and ranges).

#include "kiln/compiler/engine_cache.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "kiln/compiler/compilation_settings.h"
#include "kiln/compiler/engine_hash.h"
#include "kiln/ir/text.h"
#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/hash.h"
#include "scratch_dir.h"

namespace kiln::compiler {
namespace {

namespace fs = std::filesystem;

using kiln::test_files::scratch_dir;

std::string hash_of(int i) {
  std::string h(64, '0');
  const std::string digits = std::to_string(i);
  return h.replace(64 - digits.size(), digits.size(), digits);
}

std::vector<uint8_t> test_key(uint8_t seed) {
  std::vector<uint8_t> key(32);
  for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<uint8_t>(seed * 101 + i * 7);
  return key;
}

std::vector<uint8_t> blob_of(size_t size, uint8_t seed) {
  std::vector<uint8_t> b(size);
  for (size_t i = 0; i < size; ++i) b[i] = static_cast<uint8_t>(seed + i * 31);
  return b;
}

TEST(DiskEngineCache, SavesAndLoads) {
  DiskEngineCache cache(scratch_dir("cache_test_roundtrip", false).string(), 1 << 20);
  EXPECT_FALSE(cache.load(hash_of(1)).has_value());
  cache.save(hash_of(1), blob_of(1000, 7));
  auto loaded = cache.load(hash_of(1));
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(*loaded, blob_of(1000, 7));
  cache.save(hash_of(1), blob_of(10, 9));  // replaces
  EXPECT_EQ(*cache.load(hash_of(1)), blob_of(10, 9));
  EXPECT_EQ(cache.hashes(), std::vector<std::string>{hash_of(1)});
}

TEST(DiskEngineCache, RejectsNonHashKeys) {
  DiskEngineCache cache(scratch_dir("cache_test_keys", false).string(), 1 << 20);
  for (const char* bad : {"../../etc/passwd", "ABCDEF0123456789", "short", ""}) {
    EXPECT_THROW(cache.save(bad, blob_of(4, 1)), Error) << bad;
  }
}

TEST(DiskEngineCache, CorruptedTruncatedAndForeignEntriesAreMisses) {
  DiskEngineCache cache(scratch_dir("cache_test_corrupt", false).string(), 1 << 20);
  const std::vector<uint8_t> blob = blob_of(500, 3);
  cache.save(hash_of(1), blob);
  const std::vector<uint8_t> good = read_file_bytes(cache.entry_path(hash_of(1)));
  // Every single-byte flip and every truncation is detected (magic, version, hash, size or checksum).
  for (size_t at = 0; at < good.size(); at += 7) {
    std::vector<uint8_t> bad = good;
    bad[at] ^= 0x5a;
    write_file_atomic(cache.entry_path(hash_of(1)), bad);
    EXPECT_FALSE(cache.load(hash_of(1)).has_value()) << "flip at " << at;
    EXPECT_FALSE(fs::exists(cache.entry_path(hash_of(1)))) << "an invalid entry is removed";
  }
  for (size_t size : {size_t{0}, size_t{5}, size_t{20}, good.size() - 1}) {
    write_file_atomic(cache.entry_path(hash_of(1)), std::vector<uint8_t>(good.begin(), good.begin() + size));
    EXPECT_FALSE(cache.load(hash_of(1)).has_value()) << "truncated to " << size;
  }
  // A valid entry of another hash copied under this one is a miss too.
  cache.save(hash_of(2), blob);
  fs::copy_file(cache.entry_path(hash_of(2)), cache.entry_path(hash_of(1)),
                fs::copy_options::overwrite_existing);
  EXPECT_FALSE(cache.load(hash_of(1)).has_value());
  EXPECT_TRUE(cache.load(hash_of(2)).has_value());
}

TEST(DiskEngineCache, EvictsLeastRecentlyUsedBeyondBudget) {
  const std::string dir = scratch_dir("cache_test_lru", false).string();
  DiskEngineCache cache(dir, 3 * 1200);  // room for three ~1.1 KB entries
  for (int i = 1; i <= 3; ++i) {
    cache.save(hash_of(i), blob_of(1000, static_cast<uint8_t>(i)));
    // Distinct modification times even on coarse-grained file systems.
    fs::last_write_time(cache.entry_path(hash_of(i)),
                        fs::file_time_type::clock::now() - std::chrono::hours(10 - i));
  }
  ASSERT_TRUE(cache.load(hash_of(1)).has_value());  // 1 becomes the most recently used
  cache.save(hash_of(4), blob_of(1000, 4));
  EXPECT_FALSE(cache.load(hash_of(2)).has_value()) << "the least recently used entry is evicted";
  EXPECT_TRUE(cache.load(hash_of(1)).has_value());
  EXPECT_TRUE(cache.load(hash_of(3)).has_value());
  EXPECT_TRUE(cache.load(hash_of(4)).has_value());
  EXPECT_LE(cache.total_bytes(), cache.size_budget());
  // An entry larger than the whole budget is not stored (and evicts nothing).
  cache.save(hash_of(5), blob_of(5000, 5));
  EXPECT_FALSE(cache.load(hash_of(5)).has_value());
  EXPECT_EQ(cache.hashes().size(), 3u);
}

TEST(DiskEngineCache, ConcurrentWritersAndReadersSeeWholeEntries) {
  const std::string dir = scratch_dir("cache_test_concurrent", false).string();
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      DiskEngineCache cache(dir, 1 << 22);  // one object per thread, as separate processes would have
      for (int round = 0; round < 20; ++round) {
        const int key = round % 3;
        cache.save(hash_of(key), blob_of(20000 + key, static_cast<uint8_t>(key)));
        auto got = cache.load(hash_of((key + t) % 3));
        if (got && *got != blob_of(20000 + (key + t) % 3, static_cast<uint8_t>((key + t) % 3))) ++bad;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0) << "a reader saw a partial or mixed entry";
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << "temporary file left behind";
  }
}

TEST(DefaultEngineCacheDir, FollowsEnvironment) {
  // ctest sets KILN_CACHE_DIR for every test (tests/CMake: the cache stays in the build tree): restored
  // after.
  const char* was = std::getenv("KILN_CACHE_DIR");
  const std::string saved = was ? was : "";
  const char* home_was = std::getenv("HOME");
  const std::string home_saved = home_was ? home_was : "";
  ::setenv("KILN_CACHE_DIR", "/x/kiln-test-cache-env", 1);
  EXPECT_EQ(default_engine_cache_dir(), "/x/kiln-test-cache-env/engines");
  EXPECT_EQ(default_timing_cache_path(), "/x/kiln-test-cache-env/timing_cache.bin");
  ::unsetenv("KILN_CACHE_DIR");
  ::setenv("HOME", "/x/home", 1);
  // Per user, never a world-writable /tmp default (any local user could plant entries, or a FIFO that hangs
  // every compile: the timing cache's default was /tmp/kiln_engine_cache/timing_cache.bin).
  EXPECT_EQ(default_engine_cache_dir(), "/x/home/.cache/kiln/engines");
  EXPECT_EQ(default_timing_cache_path(), "/x/home/.cache/kiln/timing_cache.bin");
  ::setenv("XDG_CACHE_HOME", "/x/xdg", 1);
  EXPECT_EQ(default_engine_cache_dir(), "/x/xdg/kiln/engines");
  EXPECT_EQ(default_timing_cache_path(), "/x/xdg/kiln/timing_cache.bin");
  ::unsetenv("XDG_CACHE_HOME");
  if (home_was) ::setenv("HOME", home_saved.c_str(), 1);
  if (was) ::setenv("KILN_CACHE_DIR", saved.c_str(), 1);
}

// The fields of a saved entry: where its blob starts and how long it is (format in engine_cache.h).
struct EntryLayout {
  size_t blob_at = 0;
  size_t blob_size = 0;
};
EntryLayout layout_of(const std::vector<uint8_t>& entry) {
  uint32_t hash_size = 0;
  std::memcpy(&hash_size, entry.data() + 13, 4);
  EntryLayout l;
  l.blob_at = 17 + hash_size + 8;
  l.blob_size = entry.size() - l.blob_at - 32;
  return l;
}

// An entry edited by someone who recomputed its checksum (a SHA-256 of the blob, or an HMAC under a key of
// their own) is a miss with a warning and is deleted: the tag is an HMAC under the user's key, not a
// checksum. (The compile-level attack: output_bindings of the entry's header reversed and the SHA-256
// recomputed gave a hit with the outputs mis-wired.)
TEST(DiskEngineCache, ForgedEntriesAreMissesAndRemoved) {
  const std::vector<uint8_t> key = test_key(1);
  DiskEngineCache cache(scratch_dir("cache_test_forged", false).string(), 1 << 20, key);
  ASSERT_TRUE(cache.usable());
  const std::vector<uint8_t> blob = blob_of(300, 5);
  cache.save(hash_of(1), blob);
  ASSERT_EQ(cache.load(hash_of(1)), blob);
  const std::vector<uint8_t> good = read_file_bytes(cache.entry_path(hash_of(1)));
  const EntryLayout l = layout_of(good);
  ASSERT_EQ(l.blob_size, blob.size());

  std::vector<uint8_t> forged = good;
  std::reverse(forged.begin() + l.blob_at, forged.begin() + l.blob_at + 100);
  Sha256 sha;
  sha.update(forged.data() + l.blob_at, l.blob_size);
  std::vector<uint8_t> digest = sha.digest();
  std::copy(digest.begin(), digest.end(), forged.end() - 32);
  write_file_atomic(cache.entry_path(hash_of(1)), forged);
  EXPECT_FALSE(cache.load(hash_of(1)).has_value()) << "a recomputed SHA-256 is not a valid tag";
  EXPECT_FALSE(fs::exists(cache.entry_path(hash_of(1))));

  std::vector<uint8_t> other_key = hmac_sha256(test_key(2), forged.data(), forged.size() - 32);
  std::copy(other_key.begin(), other_key.end(), forged.end() - 32);
  write_file_atomic(cache.entry_path(hash_of(1)), forged);
  EXPECT_FALSE(cache.load(hash_of(1)).has_value()) << "a tag under another key is not valid";
  EXPECT_FALSE(fs::exists(cache.entry_path(hash_of(1))));

  // Another user's cache (another key) misses on this user's entries.
  cache.save(hash_of(3), blob);
  DiskEngineCache theirs(cache.directory(), 1 << 20, test_key(2));
  EXPECT_FALSE(theirs.load(hash_of(3)).has_value());
}

// A FIFO, directory or device node in place of an entry is a miss with a warning (and is removed), never a
// read that blocks or never ends.
TEST(DiskEngineCache, NonRegularEntriesAreMisses) {
  DiskEngineCache cache(scratch_dir("cache_test_fifo", false).string(), 1 << 20, test_key(1));
  ASSERT_EQ(::mkfifo(cache.entry_path(hash_of(1)).c_str(), 0600), 0);
  EXPECT_FALSE(cache.load(hash_of(1)).has_value());
  EXPECT_FALSE(fs::exists(fs::symlink_status(cache.entry_path(hash_of(1)))));
  fs::create_directory(cache.entry_path(hash_of(2)));
  EXPECT_FALSE(cache.load(hash_of(2)).has_value());
  cache.save(hash_of(1), blob_of(10, 1));
  EXPECT_EQ(cache.load(hash_of(1)), blob_of(10, 1));
}

// A directory other users can write is not used (a warning; no entry is read or written there).
TEST(DiskEngineCache, SharedDirectoryIsNotUsed) {
  const std::string dir = scratch_dir("cache_test_shared", false).string();
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::all);
  DiskEngineCache cache(dir, 1 << 20, test_key(1));
  EXPECT_FALSE(cache.usable());
  cache.save(hash_of(1), blob_of(10, 1));
  EXPECT_FALSE(cache.load(hash_of(1)).has_value());
  EXPECT_TRUE(fs::is_empty(dir));
  // A fresh directory is created private.
  const std::string fresh = scratch_dir("cache_test_private", false).string();
  DiskEngineCache created(fresh, 1 << 20, test_key(1));
  EXPECT_TRUE(created.usable());
  EXPECT_EQ(fs::status(fresh).permissions(), fs::perms::owner_all);
}

// A small segment: linear(x, w, b) then relu, with constants of the given dtype and sizes.
std::unique_ptr<ir::Graph> segment(const std::string& w_type, const std::string& op = "aten.relu.default") {
  return ir::parse_graph(
      "graph(%x: f32[s0, 8]) {\n"
      "  symbol s0 in [1, 64] hint 4\n"
      "  %w: " +
      w_type +
      " = parameter(\"fc.weight\")\n"
      "  %b: f32[4] = parameter(\"fc.bias\")\n"
      "  %y: f32[s0, 4] = aten.linear.default(input=%x, weight=%w, bias=%b)\n"
      "  %z: f32[s0, 4] = " +
      op +
      "(self=%y)\n"
      "  return (%z)\n"
      "}\n");
}

std::string hash(const ir::Graph& g, const CompilationSettings& s = {}, int64_t max = 64) {
  ir::SymRanges ranges;
  ranges["s0"] = ir::SymRange{1, max};
  return engine_segment_hash(g, ranges, {{"s0", 4}}, s, "cpu test-device");
}

TEST(EngineSegmentHash, IgnoresWeightValuesAndValueNames) {
  auto a = segment("f32[4, 8]");
  auto b = segment("f32[4, 8]");
  HostTensor w1(DType::Float32, {4, 8}), w2(DType::Float32, {4, 8});
  for (int64_t i = 0; i < 32; ++i) {
    w1.set_from_double(i, 0.1 * i);
    w2.set_from_double(i, -0.3 * i + 1);
  }
  a->find_value("w")->set_data(w1);
  b->find_value("w")->set_data(w2);
  EXPECT_EQ(hash(*a), hash(*b));
  auto renamed = ir::parse_graph(
      "graph(%input: f32[s0, 8]) {\n  symbol s0 in [1, 64] hint 4\n"
      "  %weight: f32[4, 8] = parameter(\"fc.weight\")\n  %bias: f32[4] = parameter(\"fc.bias\")\n"
      "  %h: f32[s0, 4] = aten.linear.default(input=%input, weight=%weight, bias=%bias)\n"
      "  %out: f32[s0, 4] = aten.relu.default(self=%h)\n  return (%out)\n}\n");
  EXPECT_EQ(hash(*a), hash(*renamed));
  EXPECT_EQ(hash(*a).size(), 64u);
}

TEST(EngineSegmentHash, ChangesWithShapesDtypesSettingsStructureAndRanges) {
  const std::string base = hash(*segment("f32[4, 8]"));
  EXPECT_NE(base, hash(*segment("f16[4, 8]"))) << "weight dtype";
  EXPECT_NE(base, hash(*segment("f32[4, 8]", "aten.sigmoid.default"))) << "structure";
  CompilationSettings fp16;
  fp16.enabled_precisions.insert(settings::Precision::F16);
  EXPECT_NE(base, hash(*segment("f32[4, 8]"), fp16)) << "precision";
  CompilationSettings cuda;
  cuda.backend = "cuda";
  EXPECT_NE(base, hash(*segment("f32[4, 8]"), cuda)) << "backend";
  EXPECT_NE(base, hash(*segment("f32[4, 8]"), {}, 32)) << "shape range";
  auto g = segment("f32[4, 8]");
  EXPECT_NE(base, engine_segment_hash(*g, {{"s0", ir::SymRange{1, 64}}}, {{"s0", 4}}, {}, "cpu other-device"))
      << "device";
  CompilationSettings tf32;
  tf32.allow_tf32 = true;
  EXPECT_NE(base, hash(*segment("f32[4, 8]"), tf32)) << "allow_tf32";
}

TEST(EngineSegmentHash, CudaGraphSettingsChangeTheEngine) {
  // How the module will run its engines decides their tactics (an engine run without CUDA graphs counts the
  // host's enqueue time: BuilderConfig::graphs_for_static), so a cached engine built for one does not serve the
  // other.
  CompilationSettings graphs, plain;
  graphs.use_cuda_graphs = true;
  plain.static_shape_cuda_graphs = false;
  const std::string base = hash(*segment("f32[4, 8]"));
  EXPECT_NE(base, hash(*segment("f32[4, 8]"), graphs));
  EXPECT_NE(base, hash(*segment("f32[4, 8]"), plain));
}

}  // namespace
}  // namespace kiln::compiler
