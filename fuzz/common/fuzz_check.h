#pragma once
// What the libFuzzer targets count as a clean outcome: the code under test either accepts the input or
// rejects it with a kiln::Error of kind InvalidInput, Unsupported or Io. Anything else is a finding: a crash
// or sanitizer report (caught by libFuzzer itself), an Internal error (hostile input is not Kiln's bug), any
// other exception (std::bad_alloc, std::out_of_range, a JSON library exception: it would reach the user
// without a one-line message), or a broken invariant checked by the target.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "kiln/support/error.h"

namespace kiln::fuzz {

/// Stops the run with a finding: libFuzzer saves the input as crash-<sha1>.
[[noreturn]] inline void finding(const char* what, const char* detail) {
  std::fprintf(stderr, "fuzz finding: %s: %s\n", what, detail);
  std::fflush(stderr);
  std::abort();
}

/// Runs `body`: returns true when it finished, false when it threw a kiln::Error other than Internal; aborts
/// on an Internal error or any other exception.
template <typename Body>
bool accepts(Body&& body) {
  try {
    body();
    return true;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Internal) finding("Internal error on hostile input", e.what());
    return false;
  } catch (const std::exception& e) {
    finding("exception that is not a kiln::Error", e.what());
  }
}

/// Checks an invariant the target states (a round trip, a re-load): aborts when it fails or throws anything.
template <typename Body>
void invariant(const char* what, Body&& body) {
  bool ok = false;
  try {
    ok = body();
  } catch (const std::exception& e) {
    finding(what, e.what());
  }
  if (!ok) finding(what, "does not hold");
}

/// The input as an owned buffer.
inline std::vector<uint8_t> to_bytes(const uint8_t* data, size_t size) {
  return std::vector<uint8_t>(data, data + size);
}

}  // namespace kiln::fuzz
