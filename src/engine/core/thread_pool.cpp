#include "kiln/engine/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <exception>

namespace kiln::engine {

struct ThreadPool::Job {
  std::function<void(int64_t, int64_t)> fn;
  int64_t n = 0, chunk = 1, chunks = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::mutex mutex;
  std::condition_variable finished;
  std::exception_ptr error;

  /// Runs chunks until none are left; returns when this thread has nothing more to take.
  void work() {
    for (;;) {
      int64_t c = next.fetch_add(1);
      if (c >= chunks) return;
      try {
        fn(c * chunk, std::min(n, (c + 1) * chunk));
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
      }
      if (done.fetch_add(1) + 1 == chunks) {
        std::lock_guard<std::mutex> lock(mutex);
        finished.notify_all();
      }
    }
  }
};

ThreadPool::ThreadPool(int threads)
    : threads_(threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {
#if !KILN_THREADS_OPENMP
  for (int i = 1; i < threads_; ++i) workers_.emplace_back([this] { worker_loop(); });
#endif
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::worker_loop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_ && queue_.empty()) return;
      job = queue_.front();
      queue_.pop_front();
    }
    job->work();
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int64_t chunks = std::min<int64_t>(int64_t{threads_} * 4, (n + grain - 1) / grain);
  if (chunks <= 1 || threads_ == 1) {
    fn(0, n);
    return;
  }
  int64_t chunk = (n + chunks - 1) / chunks;
  chunks = (n + chunk - 1) / chunk;
#if KILN_THREADS_OPENMP
  // One OpenMP team (the threads oneDNN's primitives run on), chunks handed out one at a time; the whole team
  // even when there are fewer chunks than threads (team_for). Called inside another parallel region (nesting
  // is off), the team is the calling thread alone.
  std::exception_ptr error;
  std::mutex error_mutex;
  const int team = team_for(chunks);
#pragma omp parallel for num_threads(team) schedule(dynamic, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    try {
      fn(c * chunk, std::min(n, (c + 1) * chunk));
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
#else
  auto job = std::make_shared<Job>();
  job->fn = fn;
  job->n = n;
  job->chunk = chunk;
  job->chunks = chunks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // One queue entry per helper thread that may join; stale entries find no chunks and return at once.
    for (size_t i = 0; i < workers_.size(); ++i) queue_.push_back(job);
  }
  cv_.notify_all();
  job->work();
  {
    std::unique_lock<std::mutex> lock(job->mutex);
    job->finished.wait(lock, [&] { return job->done.load() == job->chunks; });
  }
  if (job->error) std::rethrow_exception(job->error);
#endif
}

}  // namespace kiln::engine
