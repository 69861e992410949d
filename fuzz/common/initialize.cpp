// libFuzzer's start-up hook, shared by every target: Kiln's log is silenced (a fuzzer triggers its warnings
// millions of times).

#include "kiln/support/logging.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kiln::set_log_level(kiln::LogLevel::Off);
  return 0;
}
