// The OpenMP environment of the kiln command. Kiln's kernels and oneDNN's run on one OpenMP team (libgomp's; see
// include/kiln/engine/thread_pool.h), and a model is hundreds of short parallel regions back to back. When a region
// ends, libgomp's threads spin for GOMP_SPINCOUNT iterations before they sleep: its default (300000, hundreds of
// microseconds) burns cores that another process may be waiting for; no spinning at all (OMP_WAIT_POLICY=PASSIVE)
// makes every region wake each thread through the kernel, which on the GPU machine's 16 cores made BERT-base
// 2x slower (112.9 ms against 57.8 ms with a spin count of 30000; vit_b_16 140 against 82 ms). A short spin keeps
// the threads warm between back-to-back layers and sleeps soon after the work ends.
//
// libgomp reads its environment once, in its constructor, before main runs. So this file puts a function in
// the executable's .preinit_array, which the dynamic loader runs before any shared library's constructor:
// when neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set, it sets GOMP_SPINCOUNT=30000; a user's own setting is
// left alone. Nothing calls it: linking this object into the executable is enough (`OMP_DISPLAY_ENV=verbose kiln
// --version` shows what libgomp took).

#include <cstdlib>

namespace kiln::cli {
namespace {

void short_openmp_spin(int, char**, char**) {
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr) {
    setenv("GOMP_SPINCOUNT", "30000", 0);
  }
}

__attribute__((section(".preinit_array"), used)) void (*const kShortOpenmpSpin)(int, char**,
                                                                               char**) = short_openmp_spin;

}  // namespace
}  // namespace kiln::cli
