#pragma once
// Stable hashing: the same bytes give the same digest on every machine and in every run.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

/// Incremental SHA-256.
class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  /// The 32-byte digest of the bytes given so far. The hasher is left as it was: calling digest() again gives
  /// the same digest, and further updates extend the message.
  std::vector<uint8_t> digest();
  /// The digest as 64 lowercase hex characters.
  std::string hex_digest();

 private:
  void compress(const uint8_t* block);
  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffer_size_ = 0;
  uint64_t total_bytes_ = 0;
};

/// 64-bit FNV-1a, for fast in-memory keys (not for cache identities).
uint64_t fnv1a64(const void* data, size_t size, uint64_t seed = 0xcbf29ce484222325ull);

}  // namespace kiln
