// The timing-cache file (src/engine/core/timing_cache.h): authenticated under the user's key (an edited or
// forged file is a miss), merged under a lock on save (builds sharing a cache keep each other's entries), and
// only ever a regular file (a FIFO or device is an error, never a block or an endless read).

#include "engine/core/timing_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <barrier>
#include <filesystem>
#include <thread>

#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/hash.h"

namespace kiln::engine {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the system temporary directory, removed with its contents at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kiln_timing_cache_test_XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// Opening the cache at `path` is an Io error whose message holds `words`.
void expect_io_error(const std::string& path, const std::string& words) {
  try {
    TimingCache cache(path, std::vector<uint8_t>(32, 1));
    ADD_FAILURE() << path << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

std::vector<uint8_t> test_key(uint8_t seed) { return std::vector<uint8_t>(32, seed); }

std::string entry_name(int writer, int k) {
  return "layer" + std::to_string(writer) + "_" + std::to_string(k);
}

// No temporary file of an atomic write is left behind.
void expect_no_temporaries(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  }
}

TEST(TimingCacheFile, SavedEntriesAreFoundAgain) {
  TempDir dir;
  const std::string path = dir.file("timing.bin");
  {
    TimingCache cache(path, test_key(1));
    ASSERT_TRUE(cache.usable());
    EXPECT_EQ(cache.find("a"), nullptr);
    cache.put("a", "onednn margin=0.1 spread=0 cpu=1 agree=1");
    cache.put("b", "ref margin=0 spread=0 cpu=1 agree=1");
    cache.save();
  }
  TimingCache again(path, test_key(1));
  ASSERT_NE(again.find("a"), nullptr);
  EXPECT_EQ(*again.find("a"), "onednn margin=0.1 spread=0 cpu=1 agree=1");
  EXPECT_EQ(again.entries().size(), 2u);
  EXPECT_EQ(read_file_text(path).rfind("kiln-timing-cache 2\n", 0), 0u);
}

// Builds sharing one cache, each holding the file as it was before any of them saved, save disjoint entries
// at once: every entry is kept. Before the merge under the lock the last writer won (8-30 of 34 entries kept
// by concurrent compiles).
TEST(TimingCacheFile, ConcurrentThreadsKeepEveryEntry) {
  TempDir dir;
  const std::string path = dir.file("timing.bin");
  constexpr int kWriters = 8, kEach = 5;
  std::barrier loaded(kWriters);
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&, t] {
      TimingCache cache(path, test_key(1));  // one object and one lock descriptor per writer, as in processes
      loaded.arrive_and_wait();
      for (int k = 0; k < kEach; ++k) cache.put(entry_name(t, k), "tactic");
      cache.save();
    });
  }
  for (auto& th : threads) th.join();
  TimingCache all(path, test_key(1));
  EXPECT_EQ(all.entries().size(), static_cast<size_t>(kWriters * kEach));
  expect_no_temporaries(dir.path());
}

// The same with separate processes (what concurrent `kiln compile`s are), started together by a pipe.
TEST(TimingCacheFile, ConcurrentProcessesKeepEveryEntry) {
  TempDir dir;
  const std::string path = dir.file("timing.bin");
  constexpr int kWriters = 6, kEach = 6;
  int go[2];
  ASSERT_EQ(::pipe(go), 0);
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(go[1]);
      TimingCache cache(path, test_key(1));
      char c;
      const bool started = ::read(go[0], &c, 1) == 0;  // end of file: the parent closed its end
      for (int k = 0; k < kEach; ++k) cache.put(entry_name(w, k), "tactic");
      cache.save();
      ::_exit(started ? 0 : 1);
    }
    children.push_back(pid);
  }
  ::close(go[0]);
  ::close(go[1]);
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  TimingCache all(path, test_key(1));
  EXPECT_EQ(all.entries().size(), static_cast<size_t>(kWriters * kEach));
  for (int w = 0; w < kWriters; ++w) EXPECT_NE(all.find(entry_name(w, kEach - 1)), nullptr) << w;
  expect_no_temporaries(dir.path());
}

// A cache file edited with its tag recomputed as a plain SHA-256, or tagged under another key, or in the
// unauthenticated format before, is ignored: none of its entries is used, and the next save replaces it.
TEST(TimingCacheFile, ForgedFilesAreMisses) {
  TempDir dir;
  const std::string path = dir.file("timing.bin");
  TimingCache cache(path, test_key(1));
  cache.put("conv", "onednn_blocked margin=0.5 spread=0 cpu=1 agree=3");
  cache.save();
  const std::string text = read_file_text(path);
  std::string body = text.substr(0, text.rfind("hmac-sha256\t"));
  body.replace(body.find("onednn_blocked"), 14, "ref           ");
  Sha256 sha;
  sha.update(body);
  const std::string as_checksum = body + "hmac-sha256\t" + sha.hex_digest() + "\n";
  const std::string other_key = body + "hmac-sha256\t" + to_hex(hmac_sha256(test_key(2), body)) + "\n";
  const std::string old_format = "conv\tref margin=0.5 spread=0 cpu=1 agree=3\n";
  for (const std::string& forged : {as_checksum, other_key, old_format, text.substr(0, text.size() - 5)}) {
    write_file_atomic(path, forged.data(), forged.size());
    TimingCache read(path, test_key(1));
    EXPECT_EQ(read.find("conv"), nullptr) << forged;
    read.put("other", "tactic");
    read.save();
    EXPECT_EQ(TimingCache(path, test_key(1)).entries().size(), 1u);
  }
}

// A FIFO or a device node as the timing cache is an error naming it, before anything is read (a FIFO blocked
// every compile; /dev/zero was read until memory ran out), and it is left as it was.
TEST(TimingCacheFile, NonRegularPathsAreErrors) {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_io_error(fifo, "is a FIFO");
  EXPECT_TRUE(fs::is_fifo(fifo));
  expect_io_error(dir.path().string(), "is a directory");
  expect_io_error("/dev/zero", "is a character device");
}

}  // namespace
}  // namespace kiln::engine
