#include "kiln/support/hash.h"

#include <gtest/gtest.h>

#include <string>

#include "support/test_util.h"

namespace kiln {
namespace {

using test::bytes_of;

std::string sha256_hex(const std::string& text) {
  Sha256 h;
  h.update(text);
  return h.hex_digest();
}

TEST(Sha256, StandardVectors) {
  // FIPS 180-4 examples (NIST CSRC "SHA-256" example values).
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmno"
                       "pqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

std::string hmac_hex(const std::vector<uint8_t>& key, const std::vector<uint8_t>& data) {
  return to_hex(hmac_sha256(key, data.data(), data.size()));
}

// RFC 4231 test cases 1-4, 6 and 7 (case 5 truncates the tag, which Kiln never does): short, text and long
// keys, keys longer than the block size (hashed first) and data longer than a block.
TEST(HmacSha256, Rfc4231Vectors) {
  EXPECT_EQ(hmac_hex(std::vector<uint8_t>(20, 0x0b), bytes_of("Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(hmac_hex(bytes_of("Jefe"), bytes_of("what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(hmac_hex(std::vector<uint8_t>(20, 0xaa), std::vector<uint8_t>(50, 0xdd)),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  EXPECT_EQ(hmac_hex(from_hex("0102030405060708090a0b0c0d0e0f10111213141516171819"),
                     std::vector<uint8_t>(50, 0xcd)),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  EXPECT_EQ(hmac_hex(std::vector<uint8_t>(131, 0xaa),
                     bytes_of("Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_EQ(
      hmac_hex(
          std::vector<uint8_t>(131, 0xaa),
          bytes_of("This is a test using a larger than block-size key and a larger than block-size data. "
                   "The key needs to be hashed before being used by the HMAC algorithm.")),
      "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(HmacSha256, ConstantTimeEqual) {
  std::vector<uint8_t> a = test::lcg_bytes(32, 1), b = a;
  EXPECT_TRUE(constant_time_equal(a.data(), b.data(), a.size()));
  b[31] ^= 1;
  EXPECT_FALSE(constant_time_equal(a.data(), b.data(), a.size()));
}

TEST(Sha256, OneMillionA) {
  Sha256 h;
  std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i) h.update(chunk);
  EXPECT_EQ(h.hex_digest(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PaddingBoundaries) {
  // Lengths around the 56- and 64-byte padding boundaries (digests from Python's hashlib).
  const std::pair<size_t, const char*> cases[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
      {128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"},
  };
  for (const auto& [n, hex] : cases) EXPECT_EQ(sha256_hex(std::string(n, 'a')), hex) << n;
}

TEST(Sha256, IncrementalEqualsOneShot) {
  std::vector<uint8_t> data = test::lcg_bytes(1000, 42);
  Sha256 whole;
  whole.update(data.data(), data.size());
  std::string expected = whole.hex_digest();
  for (size_t step : {1u, 3u, 63u, 64u, 65u, 200u}) {
    Sha256 h;
    for (size_t i = 0; i < data.size(); i += step) h.update(data.data() + i, std::min(step, data.size() - i));
    EXPECT_EQ(h.hex_digest(), expected) << step;
  }
}

TEST(Sha256, DigestLeavesStateUsable) {
  Sha256 h;
  h.update("ab");
  std::vector<uint8_t> d = h.digest();
  EXPECT_EQ(d.size(), 32u);
  EXPECT_EQ(h.digest(), d);  // the same digest again
  h.update("c");
  EXPECT_EQ(h.hex_digest(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Fnv1a64, KnownValues) {
  EXPECT_EQ(fnv1a64("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar", 6), 0x85944171f73967e8ull);
  EXPECT_NE(fnv1a64("foobar", 6, 1), fnv1a64("foobar", 6));
  // Chaining: the hash of a prefix seeds the hash of the rest.
  EXPECT_EQ(fnv1a64("bar", 3, fnv1a64("foo", 3)), fnv1a64("foobar", 6));
}

}  // namespace
}  // namespace kiln
