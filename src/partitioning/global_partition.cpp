// Global partitioning: cycle-free merging of supported units, then an ordering with few transitions.

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "builder.h"
#include "kiln/partitioning/partitioners.h"
#include "kiln/partitioning/segments.h"
#include "plan.h"

namespace kiln::partitioning {
namespace {

class Merger {
 public:
  explicit Merger(const Units& units) : units_(units), part_of_(units.members.size(), SIZE_MAX) {}

  void run() {
    // Reverse topological order (a unit's users all come after its last node), merging into users' partitions.
    std::vector<size_t> order(units_.members.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return units_.last[a] > units_.last[b]; });
    for (size_t u : order) {
      if (units_.label[u] == kTorchLabel) continue;
      part_of_[u] = parts_.size();
      parts_.push_back({u});
      for (size_t s : units_.succs[u]) {
        const size_t p = part_of_[u], q = part_of_[s];
        if (q == SIZE_MAX || q == p || units_.label[s] != units_.label[u]) continue;
        if (can_merge(p, q)) merge(p, q);
      }
    }
    // Then any two partitions of the same label that can live together (independent branches).
    for (bool changed = true; changed;) {
      changed = false;
      std::vector<size_t> live = live_parts();
      if (live.size() > 400) break;  // quadratic: keep compile time bounded on huge graphs
      for (size_t i = 0; i < live.size() && !changed; ++i) {
        for (size_t j = i + 1; j < live.size() && !changed; ++j) {
          const size_t a = live[i], b = live[j];
          if (units_.label[parts_[a][0]] != units_.label[parts_[b][0]] || !can_merge(a, b)) continue;
          merge(a, b);
          changed = true;
        }
      }
    }
  }

  /// Items (partitions and PyTorch units) in an order that keeps PyTorch runs long.
  std::vector<UnitSegment> ordered_segments() const {
    const size_t n = units_.members.size();
    // Item ids: partition p -> p; PyTorch unit u -> parts_.size() + u.
    auto item_of = [&](size_t u) { return part_of_[u] != SIZE_MAX ? part_of_[u] : parts_.size() + u; };
    const size_t items = parts_.size() + n;
    std::vector<std::set<size_t>> preds(items), succs(items);
    std::vector<size_t> key(items, SIZE_MAX);
    std::vector<bool> exists(items, false);
    for (size_t u = 0; u < n; ++u) {
      const size_t it = item_of(u);
      exists[it] = true;
      key[it] = std::min(key[it], units_.key[u]);
      for (size_t p : units_.preds[u]) {
        const size_t ip = item_of(p);
        if (ip != it) {
          preds[it].insert(ip);
          succs[ip].insert(it);
        }
      }
    }
    std::vector<size_t> missing(items);
    std::set<std::pair<size_t, size_t>> ready_torch, ready_engine;
    for (size_t it = 0; it < items; ++it) {
      if (!exists[it]) continue;
      missing[it] = preds[it].size();
      if (missing[it] == 0) (it >= parts_.size() ? ready_torch : ready_engine).insert({key[it], it});
    }
    std::vector<UnitSegment> out;
    bool last_torch = false;
    while (!ready_torch.empty() || !ready_engine.empty()) {
      std::set<std::pair<size_t, size_t>>* from;
      if (last_torch && !ready_torch.empty()) {
        from = &ready_torch;
      } else if (ready_torch.empty()) {
        from = &ready_engine;
      } else if (ready_engine.empty()) {
        from = &ready_torch;
      } else {
        from = ready_torch.begin()->first < ready_engine.begin()->first ? &ready_torch : &ready_engine;
      }
      const size_t it = from->begin()->second;
      from->erase(from->begin());
      if (it >= parts_.size()) {
        const size_t u = it - parts_.size();
        if (!last_torch || out.empty()) out.push_back(UnitSegment{kTorchLabel, {}});
        out.back().units.push_back(u);
        last_torch = true;
      } else {
        std::vector<size_t> members = parts_[it];
        std::sort(members.begin(), members.end());
        out.push_back(UnitSegment{units_.label[members[0]], members});
        last_torch = false;
      }
      for (size_t s : succs[it]) {
        if (--missing[s] == 0) (s >= parts_.size() ? ready_torch : ready_engine).insert({key[s], s});
      }
    }
    return out;
  }

 private:
  std::vector<size_t> live_parts() const {
    std::vector<size_t> out;
    for (size_t p = 0; p < parts_.size(); ++p) {
      if (!parts_[p].empty()) out.push_back(p);
    }
    return out;
  }

  // Merging a and b is safe when no path leaves a ∪ b and comes back into it (other partitions count as one
  // node each, since they are contracted too).
  bool can_merge(size_t a, size_t b) const {
    std::set<size_t> inside(parts_[a].begin(), parts_[a].end());
    inside.insert(parts_[b].begin(), parts_[b].end());
    size_t limit = 0;
    for (size_t u : inside) limit = std::max(limit, units_.last[u]);
    std::vector<size_t> stack;
    std::vector<bool> seen(units_.members.size(), false);
    auto push = [&](size_t v) {
      if (seen[v]) return;
      seen[v] = true;
      stack.push_back(v);
    };
    for (size_t u : inside) {
      for (size_t s : units_.succs[u]) {
        if (!inside.count(s)) push(s);
      }
    }
    while (!stack.empty()) {
      const size_t v = stack.back();
      stack.pop_back();
      if (part_of_[v] != SIZE_MAX) {
        for (size_t m : parts_[part_of_[v]]) {
          if (inside.count(m)) return false;
          push(m);
        }
      }
      if (units_.key[v] > limit) continue;  // v comes after a ∪ b: its users cannot lead back into it
      for (size_t s : units_.succs[v]) {
        if (inside.count(s)) return false;
        push(s);
      }
    }
    return true;
  }

  void merge(size_t a, size_t b) {
    for (size_t u : parts_[b]) part_of_[u] = a;
    parts_[a].insert(parts_[a].end(), parts_[b].begin(), parts_[b].end());
    parts_[b].clear();
  }

  const Units& units_;
  std::vector<size_t> part_of_;
  std::vector<std::vector<size_t>> parts_;
};

}  // namespace

std::vector<UnitSegment> global_segments(const Units& units) {
  Merger merger(units);
  merger.run();
  return merger.ordered_segments();
}

}  // namespace kiln::partitioning
