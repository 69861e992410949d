#include "kiln/support/npz.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include <sys/stat.h>
#include <zlib.h>

#include "kiln/support/error.h"
#include "kiln/support/file.h"
#include "kiln/support/zip.h"
#include "support/test_util.h"

namespace kiln {
namespace {

using test::bytes_of;
using test::expect_error;
using test::support_data;
using test::values;

// A tensor of `dtype` whose bytes are pseudo-random (any bit pattern, NaNs included, except for bool).
HostTensor random_tensor(DType dtype, std::vector<int64_t> sizes, uint64_t seed) {
  HostTensor t(dtype, std::move(sizes));
  std::vector<uint8_t> bytes = test::lcg_bytes(t.nbytes(), seed);
  if (dtype == DType::Bool) {
    for (uint8_t& b : bytes) b &= 1;
  }
  if (!bytes.empty()) std::memcpy(t.mutable_data(), bytes.data(), bytes.size());
  return t;
}

void expect_bitwise_equal(const HostTensor& a, const HostTensor& b) {
  EXPECT_EQ(a.dtype(), b.dtype());
  EXPECT_EQ(a.sizes(), b.sizes());
  ASSERT_EQ(a.nbytes(), b.nbytes());
  if (a.nbytes() > 0) {
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0) << a.describe();
  }
}

// A .npy with the given header text, padded as numpy pads it, followed by `data`.
std::vector<uint8_t> npy_with_header(const std::string& dict, const std::vector<uint8_t>& data,
                                     int major = 1) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out = bytes_of("\x93NUMPY");
  out.push_back(static_cast<uint8_t>(major));
  out.push_back(0);
  for (size_t i = 0; i + 8 < prefix; ++i) out.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

TEST(Npy, RoundTripEveryDType) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {3, 0, 2}, {7}, {2, 3, 4}, {1, 1, 1, 1, 5}};
  uint64_t seed = 1;
  for (DType dtype : kAllDTypes) {
    for (const auto& shape : shapes) {
      HostTensor t = random_tensor(dtype, shape, seed++);
      std::vector<uint8_t> bytes = write_npy(t);
      // numpy's layout: the data starts on a 64-byte boundary.
      EXPECT_EQ((bytes.size() - t.nbytes()) % 64, 0u);
      expect_bitwise_equal(read_npy(bytes), t);
    }
  }
}

TEST(Npy, WritesNumpyHeader) {
  std::vector<uint8_t> bytes = write_npy(HostTensor::from_floats({1, 2, 3, 4, 5, 6}, {2, 3}));
  size_t header_len = bytes[8] | bytes[9] << 8;
  EXPECT_EQ((10 + header_len) % 64, 0u);
  std::string header(bytes.begin() + 10, bytes.begin() + 10 + static_cast<std::ptrdiff_t>(header_len));
  EXPECT_EQ(bytes[6], 1);
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0), 0u) << header;
  EXPECT_EQ(header.back(), '\n');
  std::vector<uint8_t> one = write_npy(HostTensor::from_int64s({1, 2, 3}, {3}));
  EXPECT_NE(std::string(one.begin(), one.begin() + 64).find("'shape': (3,)"), std::string::npos);
  std::vector<uint8_t> bf16 = write_npy(HostTensor(DType::BFloat16, {2}));
  EXPECT_NE(std::string(bf16.begin(), bf16.begin() + 64).find("'descr': '<V2'"), std::string::npos);
}

TEST(Npy, ReadsNumpyWrittenVariants) {
  // Big-endian data is byte-swapped.
  HostTensor be_f4 = read_npy(read_file_bytes(support_data("be_f4.npy")));
  EXPECT_EQ(be_f4.dtype(), DType::Float32);
  EXPECT_EQ(be_f4.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(be_f4), (std::vector<double>{0, 1.5, 3, 4.5, 6, 7.5}));
  HostTensor be_i8 = read_npy(read_file_bytes(support_data("be_i8.npy")));
  EXPECT_EQ(values(be_i8), (std::vector<double>{1, -2, 1099511627776.0}));
  // Versions 2.0 and 3.0.
  for (const char* name : {"v2.npy", "v3.npy"}) {
    HostTensor t = read_npy(read_file_bytes(support_data(name)));
    EXPECT_EQ(values(t), (std::vector<double>{0, 1, 2, 3, 4})) << name;
  }
  // bfloat16 as numpy writes a 2-byte void ('|V2'), as numpy with ml_dtypes writes it ('<V2'), and by name.
  const std::vector<double> bf16_values = {1.0, -2.5, 0.15625, 65536.0, 3.140625, 0.0};
  for (const char* name : {"bf16_void.npy", "bf16_ml_dtypes.npy", "bf16_named.npy"}) {
    HostTensor t = read_npy(read_file_bytes(support_data(name)));
    EXPECT_EQ(t.dtype(), DType::BFloat16) << name;
    EXPECT_EQ(values(t), bf16_values) << name;
  }
  // Fortran order: rejected unless the layout is the same as C order's.
  expect_error([] { read_npy(read_file_bytes(support_data("fortran.npy")), "f.npy"); },
               ErrorKind::Unsupported, {"f.npy", "Fortran"});
  HostTensor row = read_npy(read_file_bytes(support_data("fortran_row.npy")));
  EXPECT_EQ(row.sizes(), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(values(row), (std::vector<double>{0, 1, 2, 3}));
}

TEST(Npy, HeaderParsingIsRobust) {
  std::vector<uint8_t> data(8);
  float f[2] = {1.5f, -2.0f};
  std::memcpy(data.data(), f, 8);
  for (std::string dict : {
           "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
           "{'descr':'<f4','fortran_order':False,'shape':(2,)}",
           "{ \"descr\" : \"<f4\" ,\n 'fortran_order' : False , 'shape' : ( 2 , ) , }",
           "{'shape': (2L,), 'fortran_order': False, 'descr': '<f4'}",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }",
           "{'descr': '=f4', 'fortran_order': False, 'shape': (2,)}",
       }) {
    SCOPED_TRACE(dict);
    HostTensor t = read_npy(npy_with_header(dict, data));
    EXPECT_EQ(t.numel(), 2);
    EXPECT_EQ(values(t), (std::vector<double>{1.5, -2.0}));
  }
  HostTensor v2 =
      read_npy(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", data, 2));
  EXPECT_EQ(values(v2), (std::vector<double>{1.5, -2.0}));
  // 0-d and 1-byte types with every byte-order mark.
  HostTensor scalar =
      read_npy(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': ()}", {0, 0, 0x80, 0x3f}));
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_EQ(values(scalar), std::vector<double>{1.0});
  for (const char* descr : {"|u1", "<u1", ">u1", "=u1"}) {
    HostTensor u = read_npy(npy_with_header(
        std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (2,)}", {7, 250}));
    EXPECT_EQ(values(u), (std::vector<double>{7, 250})) << descr;
  }
  // numpy's bools are any non-zero byte; Kiln's are 0 or 1.
  HostTensor b =
      read_npy(npy_with_header("{'descr': '|b1', 'fortran_order': False, 'shape': (3,)}", {0, 1, 7}));
  EXPECT_EQ(std::vector<uint8_t>(b.data(), b.data() + 3), (std::vector<uint8_t>{0, 1, 1}));
}

TEST(Npy, MalformedHeadersGiveClearErrors) {
  std::vector<uint8_t> data8(8);
  struct Case {
    std::string dict;
    ErrorKind kind;
    std::string word;
    std::vector<uint8_t> data;
  };
  const std::vector<Case> cases = {
      {"{'descr': '<f4', 'fortran_order': False}", ErrorKind::InvalidInput, "lacks", data8},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", ErrorKind::InvalidInput, "trailing comma",
       data8},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", ErrorKind::InvalidInput, "True or False",
       data8},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [2], }", ErrorKind::InvalidInput, "expected '('",
       data8},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", ErrorKind::InvalidInput, "non-negative",
       data8},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", ErrorKind::InvalidInput,
       "'extra'", data8},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", ErrorKind::InvalidInput,
       "repeated", data8},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", ErrorKind::InvalidInput, "after", data8},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", ErrorKind::InvalidInput, "malformed", data8},
      {"{'descr': '<f\\x34', 'fortran_order': False, 'shape': (2,)}", ErrorKind::InvalidInput, "escape",
       data8},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", ErrorKind::InvalidInput, "expected '}'",
       data8},
      {"", ErrorKind::InvalidInput, "expected '{'", data8},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", ErrorKind::InvalidInput,
       "too large", data8},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4)}", ErrorKind::InvalidInput,
       "overflows", data8},
      // numel * itemsize wraps around 2^64 here: must not be mistaken for a match.
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,)}",
       ErrorKind::InvalidInput,
       "needs",
       {}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", ErrorKind::InvalidInput, "needs 12", data8},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", ErrorKind::InvalidInput, "needs 4", data8},
      {"{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}", ErrorKind::Unsupported, "'<c8'", data8},
      {"{'descr': '<U2', 'fortran_order': False, 'shape': (1,)}", ErrorKind::Unsupported, "'<U2'", data8},
      {"{'descr': '<u4', 'fortran_order': False, 'shape': (2,)}", ErrorKind::Unsupported, "'<u4'", data8},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", ErrorKind::Unsupported,
       "structured", data8},
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1, 2)}", ErrorKind::Unsupported, "Fortran", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.dict);
    expect_error([&] { read_npy(npy_with_header(c.dict, c.data), "arr.npy"); }, c.kind, {"arr.npy", c.word});
  }
  std::vector<uint8_t> good = write_npy(HostTensor::from_floats({1, 2}, {2}));
  expect_error([] { read_npy(bytes_of("NUMPY"), "x"); }, ErrorKind::InvalidInput, {"magic"});
  std::vector<uint8_t> v9 = good;
  v9[6] = 9;
  expect_error([&] { read_npy(v9, "x"); }, ErrorKind::Unsupported, {"version 9.0"});
  std::vector<uint8_t> long_header = good;
  long_header[8] = 0xff;
  long_header[9] = 0xff;
  expect_error([&] { read_npy(long_header, "x"); }, ErrorKind::InvalidInput, {"runs past"});
}

TEST(Npy, TruncationsAndFlipsNeverCrash) {
  std::vector<uint8_t> good = write_npy(HostTensor::from_floats({1, 2, 3, 4, 5, 6}, {2, 3}));
  for (size_t len = 0; len < good.size(); ++len) {
    EXPECT_THROW(read_npy(std::vector<uint8_t>(good.begin(), good.begin() + len)), Error) << len;
  }
  // Header bytes: every flip either still parses (e.g. whitespace changes) or throws kiln::Error.
  for (size_t pos = 0; pos < 64; ++pos) {
    for (uint8_t flip : {0x01, 0x20, 0x80, 0xff}) {
      std::vector<uint8_t> bad = good;
      bad[pos] ^= flip;
      try {
        HostTensor t = read_npy(bad);
        EXPECT_EQ(t.nbytes(), 24u);
      } catch (const Error&) {
      }
    }
  }
}

TEST(Npy, WriteUndefinedTensorFails) { EXPECT_THROW(write_npy(HostTensor()), Error); }

TEST(Npz, RoundTripEveryDType) {
  test::TempDir dir;
  std::map<std::string, HostTensor> arrays;
  uint64_t seed = 100;
  for (DType dtype : kAllDTypes) {
    arrays[std::string(dtype_name(dtype))] = random_tensor(dtype, {3, 5}, seed++);
    arrays[std::string(dtype_name(dtype)) + "_scalar"] = random_tensor(dtype, {}, seed++);
    arrays[std::string(dtype_name(dtype)) + "_empty"] = random_tensor(dtype, {0, 4}, seed++);
  }
  arrays["nested/name"] = random_tensor(DType::Float32, {2}, seed++);
  std::string path = dir.file("arrays.npz");
  write_npz(path, arrays);
  std::map<std::string, HostTensor> back = read_npz(path);
  ASSERT_EQ(back.size(), arrays.size());
  for (const auto& [name, tensor] : arrays) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(back.count(name));
    expect_bitwise_equal(back.at(name), tensor);
  }
  // Entries are NAME.npy, stored and aligned.
  ZipReader zip = ZipReader::open(path);
  ASSERT_TRUE(zip.contains("f32.npy"));
  EXPECT_EQ(zip.find("f32.npy")->method, 0);
  // No temporary file is left next to the result.
  EXPECT_EQ(
      std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()),
      1);
}

TEST(Npz, WriteErrors) {
  test::TempDir dir;
  std::map<std::string, HostTensor> arrays = {{"a", HostTensor::from_floats({1}, {1})}};
  expect_error([&] { write_npz(dir.file("missing/x.npz"), arrays); }, ErrorKind::Io, {"missing/x.npz"});
  arrays["bad"] = HostTensor();
  expect_error([&] { write_npz(dir.file("x.npz"), arrays); }, ErrorKind::InvalidInput, {"'bad'"});
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.npz")));
  expect_error(
      [&] {
        write_npz(dir.file("y.npz"), {{"../up", HostTensor::from_floats({1}, {1})}});
      },
      ErrorKind::InvalidInput, {"'..'"});
}

// The arrays of scripts/make_support_test_data.py's npz_arrays().
void expect_numpy_arrays(const std::map<std::string, HostTensor>& a) {
  ASSERT_EQ(a.size(), 12u);
  auto check = [&](const std::string& name, DType dtype, std::vector<int64_t> shape,
                   std::vector<double> expected) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(a.count(name));
    const HostTensor& t = a.at(name);
    EXPECT_EQ(t.dtype(), dtype);
    EXPECT_EQ(t.sizes(), shape);
    EXPECT_EQ(values(t), expected);
  };
  std::vector<double> f32, f64, f16;
  for (int i = 0; i < 24; ++i) f32.push_back((i - 7) * 0.375);
  for (int i = 0; i < 6; ++i) f64.push_back(i / 7.0);
  for (int i = 0; i < 10; ++i) f16.push_back((i - 5) * 0.25);
  check("f32", DType::Float32, {2, 3, 4}, f32);
  check("f64", DType::Float64, {3, 2}, f64);
  check("f16", DType::Float16, {10}, f16);
  // int64 extremes compared exactly, not through double.
  ASSERT_TRUE(a.count("i64"));
  const int64_t* i64 = a.at("i64").data_as<int64_t>();
  EXPECT_EQ(a.at("i64").dtype(), DType::Int64);
  EXPECT_EQ(std::vector<int64_t>(i64, i64 + 5),
            (std::vector<int64_t>{-(int64_t{1} << 62), -1, 0, 1, (int64_t{1} << 62) + 5}));
  check("i32", DType::Int32, {6}, {-3000009, -2000006, -1000003, 0, 1000003, 2000006});
  check("i16", DType::Int16, {4}, {-32768, -1, 0, 32767});
  check("i8", DType::Int8, {4}, {-128, -1, 0, 127});
  std::vector<double> u8;
  for (int v = 0; v < 256; v += 17) u8.push_back(v);
  check("u8", DType::UInt8, {16}, u8);
  check("bool", DType::Bool, {5}, {1, 0, 0, 1, 1});
  check("scalar", DType::Float32, {}, {3.5});
  check("int_scalar", DType::Int64, {}, {-42});
  check("empty", DType::Float32, {0, 3}, {});
}

TEST(Npz, ReadsNumpySavez) { expect_numpy_arrays(read_npz(support_data("numpy_savez.npz"))); }

TEST(Npz, ReadsNumpySavezCompressed) {
  ZipReader zip = ZipReader::open(support_data("numpy_savez_compressed.npz"));
  EXPECT_EQ(zip.find("f32.npy")->method, 8);
  expect_numpy_arrays(read_npz(support_data("numpy_savez_compressed.npz")));
}

TEST(Npz, ReadsFromBytesAsFromTheFile) {
  expect_numpy_arrays(read_npz_from_bytes(read_file_bytes(support_data("numpy_savez_compressed.npz"))));
  std::vector<uint8_t> truncated = read_file_bytes(support_data("numpy_savez.npz"));
  truncated.resize(truncated.size() / 2);
  expect_error([&] { read_npz_from_bytes(truncated, "half.npz"); }, ErrorKind::InvalidInput, {"half.npz"});
}

TEST(Npz, ErrorsNameFileAndArray) {
  test::TempDir dir;
  ZipWriter zip;
  zip.add("good.npy", write_npy(HostTensor::from_floats({1}, {1})));
  std::vector<uint8_t> bad = write_npy(HostTensor::from_floats({1, 2}, {2}));
  bad.pop_back();
  zip.add("short.npy", bad);
  zip.write_file(dir.file("bad.npz"));
  expect_error([&] { read_npz(dir.file("bad.npz")); }, ErrorKind::InvalidInput, {"bad.npz", "short"});

  ZipWriter other;
  other.add("notes.txt", std::string("hi"));
  other.write_file(dir.file("other.npz"));
  expect_error([&] { read_npz(dir.file("other.npz")); }, ErrorKind::InvalidInput,
               {"other.npz", "notes.txt", ".npy"});
  expect_error([&] { read_npz(dir.file("absent.npz")); }, ErrorKind::Io, {"absent.npz"});
}

// An .npz bomb (a float32 array of 100 MiB of zeros, deflated to about 100 KB, as numpy.savez_compressed
// would write it) is refused when opened, before anything is inflated; so are a FIFO and /dev/zero given as
// inputs.
TEST(Npz, RefusesBombsAndNonRegularFiles) {
  test::TempDir dir;
  const uint64_t count = uint64_t{25} << 20;
  HostTensor header_only(DType::Float32, {0});
  std::vector<uint8_t> header = write_npy(header_only);
  std::vector<uint8_t> npy = header;  // "shape: (0,)" becomes the real shape below; the bytes are zeros
  const std::string from = "(0,)", to = "(" + std::to_string(count) + ",)";
  std::string text(npy.begin(), npy.end());
  text.replace(text.find(from), from.size(), to);
  std::vector<uint8_t> npy_header(text.begin(), text.end());
  const uint64_t size = npy_header.size() + count * 4;
  // The deflated stream of header + zeros: deflate the header, then append zeros in the same stream.
  z_stream zs{};
  ASSERT_EQ(deflateInit2(&zs, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::vector<uint8_t> payload;
  std::vector<uint8_t> buffer(1 << 16);
  const std::vector<uint8_t> zeros(1 << 20, 0);
  uLong crc = crc32(0, Z_NULL, 0);
  auto feed = [&](const uint8_t* p, size_t n, int flush) {
    crc = crc32(crc, p, static_cast<uInt>(n));
    zs.next_in = const_cast<Bytef*>(p);
    zs.avail_in = static_cast<uInt>(n);
    do {
      zs.next_out = buffer.data();
      zs.avail_out = static_cast<uInt>(buffer.size());
      deflate(&zs, flush);
      payload.insert(payload.end(), buffer.data(), buffer.data() + (buffer.size() - zs.avail_out));
    } while (zs.avail_out == 0);
  };
  feed(npy_header.data(), npy_header.size(), Z_NO_FLUSH);
  for (uint64_t done = 0; done < count * 4; done += zeros.size()) {
    feed(zeros.data(), zeros.size(), done + zeros.size() >= count * 4 ? Z_FINISH : Z_NO_FLUSH);
  }
  deflateEnd(&zs);
  std::vector<uint8_t> bytes = test::build_zip({{.name = "input_0.npy",
                                                 .method = 8,
                                                 .crc = static_cast<uint32_t>(crc),
                                                 .compressed_size = payload.size(),
                                                 .uncompressed_size = size,
                                                 .payload = payload}});
  write_file_atomic(dir.file("bomb.npz"), bytes);
  expect_error([&] { read_npz(dir.file("bomb.npz")); }, ErrorKind::InvalidInput,
               {"bomb.npz", "decompression bomb"});

  ASSERT_EQ(::mkfifo(dir.file("fifo.npz").c_str(), 0600), 0);
  expect_error([&] { read_npz(dir.file("fifo.npz")); }, ErrorKind::Io, {"fifo.npz", "a FIFO"});
  expect_error([&] { read_npz("/dev/zero"); }, ErrorKind::Io, {"/dev/zero", "a character device"});
}

}  // namespace
}  // namespace kiln
