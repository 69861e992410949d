#pragma once
// ThreadPool: a fixed set of worker threads for CPU kernels. parallel_for may be called from several
// threads at once (one per ExecutionContext); the calling thread always takes part, so it never deadlocks.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::engine {

class ThreadPool {
 public:
  /// `threads` total threads including the caller; 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Total threads (workers + the calling thread).
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  /// Runs fn(begin, end) over disjoint chunks covering [0, n), each at least `grain` long (except the last),
  /// and returns when all chunks are done. The first exception thrown by fn is rethrown here.
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

 private:
  struct Job;
  void worker_loop();
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stop_ = false;
};

}  // namespace kiln::engine
