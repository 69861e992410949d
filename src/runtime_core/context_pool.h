#pragma once
// Internal to the runtime: the execution contexts of one plan, reused across calls, for both runtimes. `Buffers`
// is what a runtime keeps with each context (CompiledModule: the tensors a CUDA graph's bindings stay bound to;
// HostModule: nothing). No ATen here.

#include <iterator>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "kiln/engine/execution_context.h"
#include "kiln/engine/layer_profile.h"

namespace kiln::runtime {

template <typename Buffers>
struct PooledContext {
  std::unique_ptr<engine::ExecutionContext> context;
  Buffers buffers;
};

// A call takes a context (or creates one) and gives it back. On a device backend a context's arena stays in use
// until its stream has run the queued work, so a context is only reused on the stream it last ran on (work on one
// stream runs in order); calls on other streams get their own.
template <typename Buffers>
class ContextPool {
 public:
  using Pooled = PooledContext<Buffers>;
  explicit ContextPool(std::shared_ptr<const engine::Plan> plan) : plan_(std::move(plan)) {}

  std::unique_ptr<Pooled> acquire(void* stream) {
    bool graphs = false, profiling = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto it = free_.rbegin(); it != free_.rend(); ++it) {
        if (it->first != stream) continue;
        auto context = std::move(it->second);
        free_.erase(std::next(it).base());
        return context;
      }
      graphs = cuda_graphs_;
      profiling = profiling_;
    }
    auto pooled = std::make_unique<Pooled>();
    pooled->context = std::make_unique<engine::ExecutionContext>(plan_, 0);
    pooled->context->set_cuda_graphs(graphs);
    pooled->context->set_profiling(profiling);
    return pooled;
  }

  void release(void* stream, std::unique_ptr<Pooled> context) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (context->context->cuda_graphs() != cuda_graphs_) return;  // made before the setting changed
    context->context->set_profiling(profiling_);
    free_.emplace_back(stream, std::move(context));
  }

  /// Profiling on the pooled contexts and on those made from now on.
  void set_profiling(bool enabled) {
    std::lock_guard<std::mutex> lock(mutex_);
    profiling_ = enabled;
    for (auto& entry : free_) entry.second->context->set_profiling(enabled);
  }

  /// The profiles of the pooled contexts, summed.
  std::vector<engine::LayerProfileRecord> layer_profile() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<engine::LayerProfileRecord> profile;
    for (auto& entry : free_) engine::accumulate_layer_profile(profile, entry.second->context->layer_profile());
    return profile;
  }

  /// CUDA graphs on the contexts made from now on; the pooled ones are dropped.
  void set_cuda_graphs(bool enabled) {
    std::lock_guard<std::mutex> lock(mutex_);
    cuda_graphs_ = enabled;
    free_.clear();
  }

 private:
  std::shared_ptr<const engine::Plan> plan_;
  std::mutex mutex_;
  bool cuda_graphs_ = false;
  bool profiling_ = false;
  std::vector<std::pair<void*, std::unique_ptr<Pooled>>> free_;
};

// Gives a context back to its pool when the call is done (also when it throws: a context that failed mid-run is
// dropped rather than reused, since its state is unknown).
template <typename Buffers>
class ContextLease {
 public:
  ContextLease(ContextPool<Buffers>& pool, void* stream)
      : pool_(pool), stream_(stream), context_(pool.acquire(stream)) {}
  ~ContextLease() {
    if (ok_) pool_.release(stream_, std::move(context_));
  }
  engine::ExecutionContext& operator*() { return *context_->context; }
  Buffers& buffers() { return context_->buffers; }
  void mark_ok() { ok_ = true; }

 private:
  ContextPool<Buffers>& pool_;
  void* stream_;
  std::unique_ptr<PooledContext<Buffers>> context_;
  bool ok_ = false;
};

}  // namespace kiln::runtime
