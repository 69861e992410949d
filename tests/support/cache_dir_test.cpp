// The user's cache directory (environment precedence, never /tmp), private directories and the per-user key.
#include "kiln/support/cache_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <thread>

#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "support/test_util.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// Sets environment variables for one test and restores them after (ctest sets KILN_CACHE_DIR for every test).
class EnvOverride {
 public:
  void set(const char* name, const char* value) {
    if (!saved_.count(name)) {
      const char* was = std::getenv(name);
      saved_[name] = was ? std::optional<std::string>(was) : std::nullopt;
    }
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~EnvOverride() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

unsigned mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(CacheDir, FollowsEnvironmentNeverTmp) {
  EnvOverride env;
  env.set("KILN_CACHE_DIR", "/x/kiln-cache");
  env.set("XDG_CACHE_HOME", "/x/xdg");
  env.set("HOME", "/x/home");
  EXPECT_EQ(user_cache_dir(), "/x/kiln-cache");
  env.set("KILN_CACHE_DIR", nullptr);
  EXPECT_EQ(user_cache_dir(), "/x/xdg/kiln");
  env.set("XDG_CACHE_HOME", "");
  EXPECT_EQ(user_cache_dir(), "/x/home/.cache/kiln");
  env.set("HOME", nullptr);
  const std::string from_passwd = user_cache_dir();  // the password database's home directory
  EXPECT_EQ(from_passwd.find("/tmp"), std::string::npos) << from_passwd;
}

TEST(CacheDir, CreatesPrivateDirectories) {
  test::TempDir dir;
  const std::string cache = dir.file("a/b/kiln");
  ensure_private_dir(cache);
  EXPECT_EQ(mode_of(cache), 0700u);
  EXPECT_EQ(mode_of(dir.file("a")), 0700u);
  ensure_private_dir(cache);  // an existing private directory is fine
}

// A directory others can write, or one another user owns, is refused: anyone who can write there could plant
// entries, FIFOs or a key of their own (the old default, /tmp/kiln_engine_cache, was such a place).
TEST(CacheDir, RefusesSharedDirectories) {
  test::TempDir dir;
  const std::string shared = dir.file("shared");
  fs::create_directory(shared);
  ::chmod(shared.c_str(), 01777);
  test::expect_error([&] { ensure_private_dir(shared); }, ErrorKind::Io,
                     {"shared", "writable by group or others"});
  test::expect_error([&] { cache_key(shared); }, ErrorKind::Io, {"writable by group or others"});
  EXPECT_FALSE(fs::exists(shared + "/key"));
  ::chmod(shared.c_str(), 0770);
  test::expect_error([&] { ensure_private_dir(shared); }, ErrorKind::Io, {"writable by group or others"});
  write_file_atomic(dir.file("file"), "x", 1);
  test::expect_error([&] { ensure_private_dir(dir.file("file")); }, ErrorKind::Io, {"a regular file"});
  if (::geteuid() == 0) {
    const std::string theirs = dir.file("theirs");
    fs::create_directory(theirs);
    ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
    test::expect_error([&] { ensure_private_dir(theirs); }, ErrorKind::Io,
                       {"owned by uid 65534", "per user"});
  }
}

TEST(CacheKey, CreatedOnceWithMode0600) {
  test::TempDir dir;
  const std::string cache = dir.file("kiln");
  std::vector<uint8_t> key = cache_key(cache);
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(mode_of(cache + "/key"), 0600u);
  EXPECT_EQ(cache_key(cache), key);
  test::TempDir other;
  EXPECT_NE(cache_key(other.file("kiln")), key) << "keys are random per cache directory";
}

TEST(CacheKey, ConcurrentFirstUsesAgree) {
  test::TempDir dir;
  const std::string cache = dir.file("kiln");
  std::vector<std::vector<uint8_t>> keys(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < keys.size(); ++i) threads.emplace_back([&, i] { keys[i] = cache_key(cache); });
  for (std::thread& t : threads) t.join();
  for (const auto& k : keys) EXPECT_EQ(k, keys[0]);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(cache)) files += e.path().filename() == "key" ? 1 : 100;
  EXPECT_EQ(files, 1u) << "temporary key files left behind";
}

TEST(CacheKey, RefusesExposedOrMalformedKeys) {
  test::TempDir dir;
  const std::string cache = dir.file("kiln");
  cache_key(cache);
  const std::string path = cache + "/key";
  ::chmod(path.c_str(), 0644);
  test::expect_error([&] { cache_key(cache); }, ErrorKind::Io, {"key", "group or others"});
  fs::remove(path);
  write_file_atomic(path, "short", 5);
  ::chmod(path.c_str(), 0600);
  test::expect_error([&] { cache_key(cache); }, ErrorKind::Io, {"5 bytes"});
  fs::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  test::expect_error([&] { cache_key(cache); }, ErrorKind::Io, {"a FIFO"});
}

TEST(CacheKey, UserKeyLivesInTheUserCacheDir) {
  test::TempDir dir;
  EnvOverride env;
  env.set("KILN_CACHE_DIR", dir.file("c").c_str());
  std::vector<uint8_t> key = user_cache_key();
  EXPECT_EQ(read_file_bytes(dir.file("c/key")), key);
}

}  // namespace
}  // namespace kiln
