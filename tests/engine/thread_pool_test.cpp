// ThreadPool: chunks cover the range once, errors come back, and loops of different sizes run on one set of
// threads (team_for).
#include "kiln/engine/thread_pool.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace kiln::engine {
namespace {

TEST(ThreadPool, ChunksCoverTheRangeOnce) {
  ThreadPool pool(4);
  for (int64_t n : {1, 3, 17, 1000}) {
    for (int64_t grain : {1, 5, 2000}) {
      std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
      pool.parallel_for(n, grain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) seen[static_cast<size_t>(i)].fetch_add(1);
      });
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)].load(), 1) << n << " " << grain;
    }
  }
}

TEST(ThreadPool, AnErrorInAChunkComesBackToTheCaller) {
  ThreadPool pool(4);
  EXPECT_THROW(pool.parallel_for(64, 1,
                                 [](int64_t b, int64_t e) {
                                   if (b <= 7 && 7 < e) throw std::runtime_error("element 7");
                                 }),
               std::runtime_error);
}

TEST(ThreadPool, TeamIsOneThreadOrAll) {
  ThreadPool pool(16);
  EXPECT_EQ(pool.team_for(0), 1);
  EXPECT_EQ(pool.team_for(1), 1);
  EXPECT_EQ(pool.team_for(2), 16);
  EXPECT_EQ(pool.team_for(5), 16);
  EXPECT_EQ(pool.team_for(100), 16);
}

TEST(ThreadPool, LoopsOfDifferentSizesRunOnTheSameThreads) {
  // A loop of 2 chunks between loops of 16 on a pool of 4: with a team of 2 for the small loop, libgomp ended
  // two threads there and started two new ones for the next large loop, every time (distinct kernel thread
  // ids grew by two per round). Each chunk sleeps a little so every team member takes one.
  ThreadPool pool(4);
  std::mutex mutex;
  std::set<long> threads;
  auto loop = [&](int64_t chunks) {
    pool.parallel_for(chunks, 1, [&](int64_t, int64_t) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      std::lock_guard<std::mutex> lock(mutex);
      threads.insert(static_cast<long>(syscall(SYS_gettid)));
    });
  };
  for (int round = 0; round < 20; ++round) {
    loop(16);
    loop(2);
  }
  EXPECT_GE(threads.size(), 2u);  // the loops did run in parallel
  EXPECT_LE(threads.size(), 4u) << "threads were started and ended between loops";
}

}  // namespace
}  // namespace kiln::engine
