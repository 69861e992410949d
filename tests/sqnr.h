#pragma once
// The signal-to-quantization-noise ratio of a quantized result against its reference, the accuracy measure of
// the INT8 tests (and of bench/cpu/int8.py): 10 log10(sum want^2 / sum (got - want)^2), in dB.

#include <algorithm>
#include <cmath>

#include "kiln/support/host_tensor.h"

namespace kiln::testing {

inline double sqnr_db(const HostTensor& got, const HostTensor& want) {
  double signal = 0, noise = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double d = got.get_as_double(i) - want.get_as_double(i);
    signal += want.get_as_double(i) * want.get_as_double(i);
    noise += d * d;
  }
  return 10 * std::log10(signal / std::max(noise, 1e-30));
}

}  // namespace kiln::testing
