// The node DAG, fusion units, the adjacency walk and the min_block_size loop.

#include "plan.h"

#include <algorithm>
#include <map>
#include <set>

#include "kiln/partitioning/atomic_subgraphs.h"
#include "kiln/partitioning/capability.h"

namespace kiln::partitioning {
namespace {

void dedupe(std::vector<size_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

NodeDag::NodeDag(const ir::Graph& graph) {
  for (const ir::Node* n : graph.nodes()) {
    index[n] = nodes.size();
    nodes.push_back(n);
  }
  preds.resize(nodes.size());
  succs.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const ir::Value* v : nodes[i]->inputs()) {
      auto it = index.find(v->producer());
      if (v->producer() != nullptr && it != index.end()) preds[i].push_back(it->second);
    }
    dedupe(preds[i]);
    for (size_t p : preds[i]) succs[p].push_back(i);
  }
}

Units make_units(const ir::Graph& graph, const NodeDag& dag, const std::vector<int>& labels) {
  Units u;
  const size_t n = dag.nodes.size();
  u.unit_of.assign(n, SIZE_MAX);
  std::vector<std::vector<size_t>> groups;
  for (const AtomicMatch& m : find_atomic_subgraphs(graph)) {
    std::vector<size_t> members;
    for (const ir::Node* node : m.nodes) members.push_back(dag.index.at(node));
    const int label = labels[members.front()];
    bool same = std::all_of(members.begin(), members.end(), [&](size_t i) { return labels[i] == label; });
    if (!same) continue;  // an unsupported member already splits the chain: nothing to keep together
    dedupe(members);
    groups.push_back(std::move(members));
  }
  std::vector<size_t> group_of(n, SIZE_MAX);
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t i : groups[g]) group_of[i] = g;
  }
  for (size_t i = 0; i < n; ++i) {
    if (u.unit_of[i] != SIZE_MAX) continue;
    std::vector<size_t> members = group_of[i] == SIZE_MAX ? std::vector<size_t>{i} : groups[group_of[i]];
    const size_t id = u.members.size();
    for (size_t m : members) u.unit_of[m] = id;
    u.label.push_back(labels[i]);
    u.key.push_back(members.front());
    u.last.push_back(members.back());
    u.members.push_back(std::move(members));
  }
  u.preds.resize(u.members.size());
  u.succs.resize(u.members.size());
  for (size_t id = 0; id < u.members.size(); ++id) {
    for (size_t m : u.members[id]) {
      for (size_t p : dag.preds[m]) {
        if (u.unit_of[p] != id) u.preds[id].push_back(u.unit_of[p]);
      }
    }
    dedupe(u.preds[id]);
    for (size_t p : u.preds[id]) u.succs[p].push_back(id);
  }
  return u;
}

std::vector<UnitSegment> adjacency_segments(const Units& units) {
  const size_t n = units.members.size();
  std::vector<size_t> missing(n);
  std::map<int, std::set<std::pair<size_t, size_t>>> ready;  // label -> {(key, unit)}
  for (size_t i = 0; i < n; ++i) {
    missing[i] = units.preds[i].size();
    if (missing[i] == 0) ready[units.label[i]].insert({units.key[i], i});
  }
  auto earliest_label = [&]() {
    std::pair<size_t, int> best{SIZE_MAX, kTorchLabel};
    for (const auto& [label, set] : ready) {
      if (!set.empty() && set.begin()->first < best.first) best = {set.begin()->first, label};
    }
    return best;
  };
  std::vector<UnitSegment> out;
  UnitSegment cur;
  cur.label = earliest_label().second;
  size_t placed = 0;
  while (placed < n) {
    auto& set = ready[cur.label];
    if (set.empty()) {
      auto [key, label] = earliest_label();
      if (key == SIZE_MAX) break;  // unreachable for a DAG
      if (!cur.units.empty()) out.push_back(std::move(cur));
      cur = UnitSegment{label, {}};
      continue;
    }
    const size_t unit = set.begin()->second;
    set.erase(set.begin());
    cur.units.push_back(unit);
    ++placed;
    for (size_t s : units.succs[unit]) {
      if (--missing[s] == 0) ready[units.label[s]].insert({units.key[s], s});
    }
  }
  if (!cur.units.empty()) out.push_back(std::move(cur));
  return out;
}

std::vector<PlannedSegment> plan_segments(
    const ir::Graph& graph, const NodeDag& dag, std::vector<int> labels, const settings::CompilationSettings& settings,
    const std::function<std::vector<UnitSegment>(const Units&)>& algorithm,
    const std::vector<std::string>& backends, bool tag_backend) {
  std::vector<UnitSegment> segments;
  Units units;
  while (true) {
    units = make_units(graph, dag, labels);
    segments = algorithm(units);
    if (settings.require_full_compilation) break;
    bool changed = false;
    for (const UnitSegment& s : segments) {
      if (s.label == kTorchLabel) continue;
      int64_t compute = 0;
      for (size_t u : s.units) {
        for (size_t m : units.members[u]) compute += is_compute_node(*dag.nodes[m]) ? 1 : 0;
      }
      if (compute >= settings.min_block_size) continue;
      for (size_t u : s.units) {
        for (size_t m : units.members[u]) labels[m] = kTorchLabel;
      }
      changed = true;
    }
    if (!changed) break;
  }
  std::vector<PlannedSegment> plan;
  for (const UnitSegment& s : segments) {
    std::vector<size_t> idx;
    for (size_t u : s.units) idx.insert(idx.end(), units.members[u].begin(), units.members[u].end());
    std::sort(idx.begin(), idx.end());
    // Consecutive PyTorch segments (possible after the global ordering) merge into one run.
    if (s.label == kTorchLabel && !plan.empty() && !plan.back().engine) {
      for (size_t i : idx) plan.back().nodes.push_back(dag.nodes[i]);
      continue;
    }
    PlannedSegment p;
    p.engine = s.label != kTorchLabel;
    if (p.engine) p.backend = backends.at(static_cast<size_t>(s.label));
    p.tag_backend = tag_backend;
    for (size_t i : idx) p.nodes.push_back(dag.nodes[i]);
    plan.push_back(std::move(p));
  }
  return plan;
}

}  // namespace kiln::partitioning
