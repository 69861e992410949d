#pragma once
// ThreadPool: the threads CPU kernels run on. Built with GCC, they are OpenMP's (libgomp's) team, the threads
// oneDNN's primitives run on too, so Kiln's kernels and oneDNN's share one set of threads instead of two sets
// competing for the cores (KILN_THREADS_OPENMP, src/engine/layer.cmake); otherwise a fixed set of worker
// threads of its own. parallel_for may be called from several threads at once (one per ExecutionContext); the
// calling thread always takes part, so it never deadlocks.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::engine {

/// The most threads a pool may be asked for (a setting or an archive naming more is refused).
inline constexpr int kMaxThreads = 1024;

class ThreadPool {
 public:
  /// `threads` total threads including the caller; 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Total threads (workers + the calling thread).
  int size() const { return threads_; }

  /// The team a parallel region with work enough for `wanted` threads runs on: one thread (no region at all)
  /// or all of them, nothing between. libgomp ends the threads a smaller team leaves out and creates new ones
  /// when a larger team follows, so alternating team sizes (a layer for 4 threads between layers for 16)
  /// start and end threads at every layer: on the GPU machine's 16-vCPU CPU that cost 1-2 ms per layer.
  int team_for(int64_t wanted) const { return wanted > 1 ? threads_ : 1; }

  /// Runs fn(begin, end) over disjoint chunks covering [0, n), each at least `grain` long (except the last),
  /// and returns when all chunks are done. The first exception thrown by fn is rethrown here.
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

 private:
  struct Job;
  void worker_loop();
  int threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stop_ = false;
};

}  // namespace kiln::engine
