// The OpenMP environment of the kiln command. oneDNN (Debian's 2.6 runs on libgomp's OpenMP) and libtorch
// share the machine's cores with Kiln's own thread pool, so their OpenMP threads must sleep, not spin, when a
// parallel region ends: libgomp's default spins a finished team's threads for up to 300000 iterations
// (hundreds of microseconds), on cores that Kiln's pool, the next layer or another process then waits for;
// passive threads sleep at once.
//
// libgomp reads its environment once, in its constructor, before main runs. So this file puts a function in
// the executable's .preinit_array, which the dynamic loader runs before any shared library's constructor:
// when neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set, it sets OMP_WAIT_POLICY=PASSIVE; a user's own
// setting is left alone. Nothing calls it: linking this object into the executable is enough
// (`OMP_DISPLAY_ENV=true kiln --version` shows the policy libgomp took).

#include <cstdlib>

namespace kiln::cli {
namespace {

void passive_openmp(int, char**, char**) {
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr) {
    setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  }
}

__attribute__((section(".preinit_array"), used)) void (*const kPassiveOpenmp)(int, char**,
                                                                              char**) = passive_openmp;

}  // namespace
}  // namespace kiln::cli
