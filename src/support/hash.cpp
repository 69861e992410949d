// SHA-256 through OpenSSL (libcrypto), HMAC-SHA256 on top of it, and 64-bit FNV-1a.
#include "kiln/support/hash.h"

#include <algorithm>
#include <cstring>

#include <openssl/evp.h>

#include "kiln/support/error.h"

namespace kiln {

namespace {

// SHA-256 from OpenSSL, fetched once: its implementation uses the CPU's SHA instructions where there are some.
const EVP_MD* sha256_md() {
  static EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  KILN_CHECK(md != nullptr, Internal, "OpenSSL has no SHA-256");
  return md;
}

}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  KILN_CHECK(ctx_ != nullptr && EVP_DigestInit_ex(ctx_, sha256_md(), nullptr) == 1, Internal,
             "OpenSSL could not start a SHA-256");
}

Sha256::Sha256(const Sha256& other) : ctx_(EVP_MD_CTX_new()) {
  KILN_CHECK(ctx_ != nullptr && EVP_MD_CTX_copy_ex(ctx_, other.ctx_) == 1, Internal, "OpenSSL could not copy a SHA-256");
}

Sha256& Sha256::operator=(const Sha256& other) {
  if (this != &other) {
    KILN_CHECK(EVP_MD_CTX_copy_ex(ctx_, other.ctx_) == 1, Internal, "OpenSSL could not copy a SHA-256");
  }
  return *this;
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

void Sha256::update(const void* data, size_t size) {
  if (size == 0) return;
  KILN_CHECK(EVP_DigestUpdate(ctx_, data, size) == 1, Internal, "OpenSSL SHA-256 update failed");
}

std::vector<uint8_t> Sha256::digest() {
  // Finishing a copy leaves this hasher's state that of the message so far (a second call gives the same digest;
  // further updates hash the longer message).
  Sha256 last = *this;
  std::vector<uint8_t> out(32);
  unsigned int size = 0;
  KILN_CHECK(EVP_DigestFinal_ex(last.ctx_, out.data(), &size) == 1 && size == out.size(), Internal,
             "OpenSSL SHA-256 final failed");
  return out;
}

std::string Sha256::hex_digest() { return to_hex(digest()); }

std::string to_hex(const std::vector<uint8_t>& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  text.reserve(2 * bytes.size());
  for (uint8_t byte : bytes) {
    text += kHex[byte >> 4];
    text += kHex[byte & 15];
  }
  return text;
}

std::vector<uint8_t> hmac_sha256(const std::vector<uint8_t>& key, const void* data, size_t size) {
  // RFC 2104 with B = 64 (SHA-256's block size): K is hashed when longer than B, then zero-padded to B;
  // tag = H((K ^ opad) || H((K ^ ipad) || data)).
  constexpr size_t kBlock = 64;
  uint8_t block_key[kBlock] = {};
  if (key.size() > kBlock) {
    Sha256 h;
    h.update(key.data(), key.size());
    std::vector<uint8_t> hashed = h.digest();
    std::memcpy(block_key, hashed.data(), hashed.size());
  } else if (!key.empty()) {
    std::memcpy(block_key, key.data(), key.size());
  }
  uint8_t pad[kBlock];
  for (size_t i = 0; i < kBlock; ++i) pad[i] = block_key[i] ^ 0x36;
  Sha256 inner;
  inner.update(pad, kBlock);
  inner.update(data, size);
  std::vector<uint8_t> inner_digest = inner.digest();
  for (size_t i = 0; i < kBlock; ++i) pad[i] = block_key[i] ^ 0x5c;
  Sha256 outer;
  outer.update(pad, kBlock);
  outer.update(inner_digest.data(), inner_digest.size());
  return outer.digest();
}

bool constant_time_equal(const uint8_t* a, const uint8_t* b, size_t size) {
  uint8_t diff = 0;
  for (size_t i = 0; i < size; ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

uint64_t fnv1a64(const void* data, size_t size, uint64_t seed) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t hash = seed;
  for (size_t i = 0; i < size; ++i) {
    hash ^= p[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace kiln
