#pragma once
// Stable hashing: the same bytes give the same digest on every machine and in every run.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX

namespace kiln {

/// Incremental SHA-256 (OpenSSL's, which uses the CPU's SHA instructions where it has them).
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256& other);
  Sha256& operator=(const Sha256& other);
  void update(const void* data, size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  /// The 32-byte digest of the bytes given so far. The hasher is left as it was: calling digest() again gives
  /// the same digest, and further updates extend the message.
  std::vector<uint8_t> digest();
  /// The digest as 64 lowercase hex characters.
  std::string hex_digest();

 private:
  ::evp_md_ctx_st* ctx_;
};

/// HMAC-SHA256 (RFC 2104) of `data` under `key` (any length; keys longer than 64 bytes are hashed first): the
/// 32-byte tag that authenticates cache entries (kiln/support/cache_dir.h's per-user key).
std::vector<uint8_t> hmac_sha256(const std::vector<uint8_t>& key, const void* data, size_t size);
inline std::vector<uint8_t> hmac_sha256(const std::vector<uint8_t>& key, std::string_view text) {
  return hmac_sha256(key, text.data(), text.size());
}

/// Compares two byte strings in time that depends only on their lengths (for authentication tags).
bool constant_time_equal(const uint8_t* a, const uint8_t* b, size_t size);

/// Bytes as lowercase hex.
std::string to_hex(const std::vector<uint8_t>& bytes);

/// 64-bit FNV-1a, for fast in-memory keys (not for cache identities).
uint64_t fnv1a64(const void* data, size_t size, uint64_t seed = 0xcbf29ce484222325ull);

}  // namespace kiln
