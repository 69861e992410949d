// SHA-256 as FIPS 180-4 (sections 4.1.2, 4.2.2, 5.1.1, 5.3.3 and 6.2) describes it, and 64-bit FNV-1a.
#include "kiln/support/hash.h"

#include <algorithm>
#include <cstring>

#include "kiln/support/error.h"

namespace kiln {

namespace {

// The first 32 bits of the fractional parts of the cube roots of the first 64 primes (FIPS 180-4 4.2.2).
constexpr uint32_t kRoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// The first 32 bits of the fractional parts of the square roots of the first 8 primes (FIPS 180-4 5.3.3).
constexpr uint32_t kInitialState[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                       0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
inline uint32_t ch(uint32_t x, uint32_t y, uint32_t z) { return (x & y) ^ (~x & z); }
inline uint32_t maj(uint32_t x, uint32_t y, uint32_t z) { return (x & y) ^ (x & z) ^ (y & z); }
inline uint32_t big_sigma0(uint32_t x) { return rotr(x, 2) ^ rotr(x, 13) ^ rotr(x, 22); }
inline uint32_t big_sigma1(uint32_t x) { return rotr(x, 6) ^ rotr(x, 11) ^ rotr(x, 25); }
inline uint32_t small_sigma0(uint32_t x) { return rotr(x, 7) ^ rotr(x, 18) ^ (x >> 3); }
inline uint32_t small_sigma1(uint32_t x) { return rotr(x, 17) ^ rotr(x, 19) ^ (x >> 10); }

}  // namespace

Sha256::Sha256() {
  std::memcpy(state_, kInitialState, sizeof state_);
  std::memset(buffer_, 0, sizeof buffer_);
}

void Sha256::compress(const uint8_t* block) {
  uint32_t w[64];
  for (size_t t = 0; t < 16; ++t) {
    w[t] = static_cast<uint32_t>(block[4 * t]) << 24 | static_cast<uint32_t>(block[4 * t + 1]) << 16 |
           static_cast<uint32_t>(block[4 * t + 2]) << 8 | static_cast<uint32_t>(block[4 * t + 3]);
  }
  for (int t = 16; t < 64; ++t) {
    w[t] = small_sigma1(w[t - 2]) + w[t - 7] + small_sigma0(w[t - 15]) + w[t - 16];
  }
  uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
  uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
  for (int t = 0; t < 64; ++t) {
    uint32_t t1 = h + big_sigma1(e) + ch(e, f, g) + kRoundConstants[t] + w[t];
    uint32_t t2 = big_sigma0(a) + maj(a, b, c);
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state_[0] += a;
  state_[1] += b;
  state_[2] += c;
  state_[3] += d;
  state_[4] += e;
  state_[5] += f;
  state_[6] += g;
  state_[7] += h;
}

void Sha256::update(const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  total_bytes_ += size;
  if (buffer_size_ > 0) {
    size_t take = std::min(size, sizeof buffer_ - buffer_size_);
    std::memcpy(buffer_ + buffer_size_, p, take);
    buffer_size_ += take;
    p += take;
    size -= take;
    if (buffer_size_ < sizeof buffer_) return;
    compress(buffer_);
    buffer_size_ = 0;
  }
  while (size >= 64) {
    compress(p);
    p += 64;
    size -= 64;
  }
  if (size > 0) {
    std::memcpy(buffer_, p, size);
    buffer_size_ = size;
  }
}

std::vector<uint8_t> Sha256::digest() {
  // Padding (FIPS 180-4 5.1.1): a 1 bit, zeros up to 56 mod 64 bytes, then the message length in bits as a
  // 64-bit big-endian integer. It is applied to a copy, so this hasher's state stays that of the message (a
  // second call gives the same digest; further updates hash the longer message).
  Sha256 last = *this;
  uint64_t bit_length = total_bytes_ * 8;
  uint8_t pad[72] = {0x80};
  size_t pad_size = (buffer_size_ < 56 ? 56 : 120) - buffer_size_;
  for (int i = 0; i < 8; ++i) pad[pad_size + i] = static_cast<uint8_t>(bit_length >> (56 - 8 * i));
  last.update(pad, pad_size + 8);
  KILN_CHECK(last.buffer_size_ == 0, Internal, "SHA-256 padding did not end on a block boundary");

  std::vector<uint8_t> out(32);
  for (size_t i = 0; i < 8; ++i) {
    out[4 * i] = static_cast<uint8_t>(last.state_[i] >> 24);
    out[4 * i + 1] = static_cast<uint8_t>(last.state_[i] >> 16);
    out[4 * i + 2] = static_cast<uint8_t>(last.state_[i] >> 8);
    out[4 * i + 3] = static_cast<uint8_t>(last.state_[i]);
  }
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
