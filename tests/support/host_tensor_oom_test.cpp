// An allocation the machine cannot satisfy is a one-line kiln::Error naming the size and the tensor, never a bare
// std::bad_alloc (issue 23). The allocation runs in a child process whose address space is capped at 4 GiB, so
// the test neither depends on the machine's memory nor its overcommit policy.

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>

#include <gtest/gtest.h>

#include "kiln/support/error.h"
#include "kiln/support/host_tensor.h"

namespace kiln {
namespace {

[[noreturn]] void allocate_under_a_cap() {
  rlimit cap{int64_t{4} << 30, int64_t{4} << 30};
  setrlimit(RLIMIT_AS, &cap);
  try {
    HostTensor t(DType::Float32, {int64_t{1} << 32});
    std::fputs("allocated\n", stderr);
  } catch (const Error& e) {
    std::fputs(e.what(), stderr);
  } catch (const std::bad_alloc&) {
    std::fputs("bare std::bad_alloc", stderr);
  }
  std::exit(0);
}

// AddressSanitizer reserves terabytes of shadow memory at start-up: under a 4 GiB address-space cap it cannot map
// it and the child dies before the allocation is tried.
#if defined(__SANITIZE_ADDRESS__)
#define KILN_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_UNDER_ASAN 1
#endif
#endif

TEST(HostTensorDeathTest, OutOfMemoryNamesTheAllocation) {
#ifdef KILN_UNDER_ASAN
  GTEST_SKIP() << "the address-space cap this test needs leaves no room for AddressSanitizer's shadow memory";
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(allocate_under_a_cap(), ::testing::ExitedWithCode(0),
              "out of memory allocating 17179869184 bytes for a f32\\[4294967296\\] tensor");
}

}  // namespace
}  // namespace kiln
