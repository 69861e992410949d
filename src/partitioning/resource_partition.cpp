// Resource partitioning: split engine segments whose weights exceed the per-engine memory budget.

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "builder.h"
#include "kiln/partitioning/atomic_subgraphs.h"
#include "kiln/partitioning/partitioners.h"
#include "kiln/partitioning/segments.h"
#include "kiln/support/error.h"
#include "kiln/support/logging.h"

namespace kiln::partitioning {
namespace {

// Engine builds hold several copies of the weights (Torch-TensorRT's ENGINE_COMPILATION_MEMORY_USAGE_MULTIPLIER).
constexpr int64_t kEngineMemoryMultiplier = 4;

struct Unit {
  std::vector<const ir::Node*> nodes;  // in sequence order
  size_t position = 0;                 // sequence position of its last node
};

int64_t unit_bytes(const Unit& unit, const std::set<const ir::Value*>& held, std::set<const ir::Value*>* add) {
  int64_t bytes = 0;
  std::set<const ir::Value*> local;
  for (const ir::Node* n : unit.nodes) {
    for (const ir::Value* v : n->inputs()) {
      if (v->role() != ir::ValueRole::Constant || held.count(v) || !local.insert(v).second) continue;
      bytes += constant_bytes(*v);
    }
  }
  if (add) add->insert(local.begin(), local.end());
  return bytes;
}

// Splits one segment's node sequence into chunks that fit `budget`, keeping atomic units whole.
std::vector<std::vector<const ir::Node*>> split_sequence(const std::vector<const ir::Node*>& seq,
                                                         const std::vector<AtomicMatch>& matches, int64_t budget) {
  std::unordered_map<const ir::Node*, size_t> pos;
  for (size_t i = 0; i < seq.size(); ++i) pos[seq[i]] = i;
  std::vector<Unit> units;
  std::set<const ir::Node*> grouped;
  for (const AtomicMatch& m : matches) {
    if (!std::all_of(m.nodes.begin(), m.nodes.end(), [&](const ir::Node* n) { return pos.count(n) > 0; })) continue;
    Unit u;
    u.nodes = m.nodes;
    std::sort(u.nodes.begin(), u.nodes.end(), [&](const ir::Node* a, const ir::Node* b) { return pos[a] < pos[b]; });
    u.position = pos[u.nodes.back()];
    grouped.insert(u.nodes.begin(), u.nodes.end());
    units.push_back(std::move(u));
  }
  for (const ir::Node* n : seq) {
    if (!grouped.count(n)) units.push_back(Unit{{n}, pos[n]});
  }
  std::sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) { return a.position < b.position; });

  std::vector<std::vector<const ir::Node*>> chunks(1);
  std::set<const ir::Value*> held;
  int64_t bytes = 0;
  for (const Unit& u : units) {
    const int64_t add = unit_bytes(u, held, nullptr);
    if (!chunks.back().empty() && bytes + add > budget) {
      // A fusion that does not fit goes whole to the side that would hold most of its nodes.
      size_t fitting = 0;
      int64_t partial = bytes;
      std::set<const ir::Value*> partial_held = held;
      for (const ir::Node* n : u.nodes) {
        partial += unit_bytes(Unit{{n}, 0}, partial_held, &partial_held);
        if (partial > budget) break;
        ++fitting;
      }
      const bool keep_here = u.nodes.size() > 1 && 2 * fitting > u.nodes.size();
      if (!keep_here) {
        chunks.emplace_back();
        held.clear();
        bytes = 0;
      }
    }
    bytes += unit_bytes(u, held, &held);
    chunks.back().insert(chunks.back().end(), u.nodes.begin(), u.nodes.end());
  }
  for (auto& c : chunks) {
    std::sort(c.begin(), c.end(), [&](const ir::Node* a, const ir::Node* b) { return pos[a] < pos[b]; });
  }
  return chunks;
}

}  // namespace

int64_t default_cpu_memory_budget() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    int64_t kib = 0;
    if (fields >> kib && kib > 0) return kib * 1024 / kEngineMemoryMultiplier;
  }
  return (int64_t{8} << 30) / kEngineMemoryMultiplier;
}

std::unique_ptr<ir::Graph> resource_partition(const ir::Graph& partitioned, std::optional<int64_t> cpu_memory_budget) {
  const int64_t budget = cpu_memory_budget.value_or(default_cpu_memory_budget());
  KILN_CHECK(budget > 0, InvalidInput, "resource partitioning: cpu_memory_budget must be positive, got ", budget);
  std::unique_ptr<ir::Graph> flat = flatten_partitions(partitioned);
  const std::vector<AtomicMatch> matches = find_atomic_subgraphs(*flat);

  std::vector<PlannedSegment> plan;
  auto flat_node = [&](const std::string& name) {
    const ir::Node* n = flat->find_node(name);
    KILN_CHECK(n != nullptr, Internal, "resource partitioning: node '", name, "' lost while flattening");
    return n;
  };
  for (const ir::Node* node : partitioned.nodes()) {
    if (!ir::is_engine_segment(*node)) {
      if (plan.empty() || plan.back().engine) plan.push_back(PlannedSegment{});
      plan.back().nodes.push_back(flat_node(node->name()));
      continue;
    }
    const std::string backend = ir::segment_backend(*node);
    const bool tagged = !backend.empty() && node->name().rfind("_run_on_acc_" + backend + "_", 0) == 0;
    std::vector<const ir::Node*> seq;
    int64_t bytes = 0;
    if (node->subgraph()) {
      for (const ir::Node* inner : node->subgraph()->nodes()) seq.push_back(flat_node(inner->name()));
      for (const ir::Value* c : node->subgraph()->constants()) bytes += constant_bytes(*c);
    }
    std::vector<std::vector<const ir::Node*>> chunks =
        bytes > budget ? split_sequence(seq, matches, budget) : std::vector<std::vector<const ir::Node*>>{seq};
    if (chunks.size() > 1) {
      KILN_LOG(Info, "resource partitioning: segment ", node->name(), " holds ", bytes, " weight bytes (budget ",
               budget, "): split into ", chunks.size(), " engines");
    }
    for (auto& c : chunks) plan.push_back(PlannedSegment{true, backend, tagged, std::move(c)});
  }
  return build_partitioned_graph(*flat, plan);
}

}  // namespace kiln::partitioning
