#pragma once
// The user's cache directory and the per-user key that authenticates what Kiln caches there
// (docs/compiler.md, "Caches"). Caches are per user: a cache directory must be owned by the user and writable
// by nobody else, and every cache entry carries an HMAC-SHA256 tag under a key only the user can read, so an
// entry another user (or anyone who can write the files but not read the key) forged or edited is a miss.

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// The user's Kiln cache directory: $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln (HOME
/// from the password database when unset); "" when none can be named. Never a shared directory such as /tmp.
std::string user_cache_dir();

/// Makes `dir` a private cache directory: creates it (and missing parents) with mode 0700 when absent, then
/// checks that it is a directory (symbolic links followed) owned by the effective user and not writable by
/// group or others. Throws kiln::Error(Io) saying what is wrong (the caller warns and runs without the
/// cache).
void ensure_private_dir(const std::string& dir);

/// The name of the key file in a cache directory.
inline constexpr const char* kCacheKeyFile = "key";

/// The 32-byte key in `<dir>/key`, created from the system's random source (mode 0600, published atomically
/// so that concurrent first uses agree) when absent. `dir` is made private first (ensure_private_dir). Throws
/// kiln::Error(Io) when the key cannot be made or read, or the key file is not a 32-byte regular file owned
/// by the user and readable by nobody else.
std::vector<uint8_t> cache_key(const std::string& dir);

/// cache_key(user_cache_dir()); throws kiln::Error(Io) when there is no user cache directory.
std::vector<uint8_t> user_cache_key();

}  // namespace kiln
