// libFuzzer target: the .npz reader (support/npz.cpp, npy.cpp) on arbitrary bytes. Every array it accepts
// holds exactly the bytes its shape and dtype say, and writes back to an .npy that reads back equal.

#include <cstring>

#include "common/fuzz_check.h"
#include "kiln/support/npz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::map<std::string, kiln::HostTensor> arrays;
  if (!kiln::fuzz::accepts(
          [&] { arrays = kiln::read_npz_from_bytes(kiln::fuzz::to_bytes(data, size), "fuzz.npz"); })) {
    return 0;
  }
  for (const auto& item : arrays) {
    const std::string& name = item.first;
    const kiln::HostTensor& tensor = item.second;
    kiln::fuzz::invariant("an array's byte size is numel * dtype size", [&] {
      return tensor.nbytes() == static_cast<size_t>(tensor.numel()) * kiln::dtype_size(tensor.dtype());
    });
    kiln::fuzz::invariant("an array survives write_npy/read_npy", [&] {
      kiln::HostTensor back = kiln::read_npy(kiln::write_npy(tensor), name);
      return back.dtype() == tensor.dtype() && back.sizes() == tensor.sizes() &&
             (tensor.nbytes() == 0 || std::memcmp(back.data(), tensor.data(), tensor.nbytes()) == 0);
    });
  }
  return 0;
}
