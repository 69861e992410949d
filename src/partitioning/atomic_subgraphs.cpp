// Atomic subgraph patterns and their matcher.

#include "kiln/partitioning/atomic_subgraphs.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <unordered_set>

#include "kiln/conversion/registry.h"
#include "kiln/support/error.h"

namespace kiln::partitioning {
namespace {

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\n");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> split(std::string_view s, std::string_view sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    out.push_back(trim(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start)));
    if (pos == std::string_view::npos) break;
    start = pos + sep.size();
  }
  return out;
}

struct PatternTable {
  std::mutex mutex;
  std::vector<AtomicPattern> patterns;
};

PatternTable& table() {
  static PatternTable* t = [] {
    auto* t = new PatternTable;
    const std::string conv = "aten.convolution|aten._convolution|aten.conv1d|aten.conv2d|aten.conv3d";
    const std::string bn =
        "aten.batch_norm|aten._native_batch_norm_legit_no_training|aten._native_batch_norm_legit|"
        "aten.native_batch_norm";
    const std::string act = "aten.silu|aten.gelu|aten.relu|aten.sigmoid";
    t->patterns.push_back(AtomicPattern::parse("conv_bn_activation", conv + " -> " + bn + " -> " + act));
    t->patterns.push_back(AtomicPattern::parse("conv_activation", conv + " -> " + act));
    t->patterns.push_back(AtomicPattern::parse("mul_add", "aten.mul -> aten.add"));
    t->patterns.push_back(AtomicPattern::parse("mul_mul", "aten.mul -> aten.mul"));
    return t;
  }();
  return *t;
}

bool step_matches(const std::vector<std::string>& alternatives, const ir::Node& node) {
  std::set<std::string> set(alternatives.begin(), alternatives.end());
  return ir::op_in_set(node.target(), set);
}

// The single node continuing a chain from `node`, or nullptr when its outputs have other uses.
const ir::Node* chain_successor(const ir::Node& node, const ir::UseMap& uses, const ir::Graph& graph) {
  const ir::Node* next = nullptr;
  for (size_t i = 0; i < node.outputs().size(); ++i) {
    const ir::Value* v = node.outputs()[i];
    if (graph.is_output(v)) return nullptr;
    const std::vector<ir::Node*>& users = uses.users(v);
    if (i == 0) {
      if (users.size() != 1) return nullptr;
      next = users[0];
    } else if (!users.empty()) {
      return nullptr;
    }
  }
  return next;
}

}  // namespace

AtomicPattern AtomicPattern::parse(std::string name, std::string_view chain) {
  AtomicPattern p;
  p.name = std::move(name);
  for (const std::string& step : split(chain, "->")) {
    std::vector<std::string> alts;
    for (const std::string& alt : split(step, "|")) {
      KILN_CHECK(!alt.empty() && alt.find(' ') == std::string::npos, InvalidInput, "atomic subgraph pattern '",
                 p.name, "': bad operator '", alt, "' in '", chain, "'");
      alts.push_back(alt);
    }
    p.steps.push_back(std::move(alts));
  }
  KILN_CHECK(p.steps.size() >= 2, InvalidInput, "atomic subgraph pattern '", p.name,
             "' needs at least two steps separated by '->': '", chain, "'");
  return p;
}

std::string AtomicPattern::to_string() const {
  std::string s;
  for (size_t k = 0; k < steps.size(); ++k) {
    if (k) s += " -> ";
    for (size_t a = 0; a < steps[k].size(); ++a) s += (a ? "|" : "") + steps[k][a];
  }
  return s;
}

void register_atomic_subgraph(AtomicPattern pattern) {
  KILN_CHECK(pattern.steps.size() >= 2, InvalidInput, "atomic subgraph pattern '", pattern.name,
             "' needs at least two steps");
  PatternTable& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.patterns.push_back(std::move(pattern));
}

void register_atomic_subgraph(std::string name, std::string_view chain) {
  register_atomic_subgraph(AtomicPattern::parse(std::move(name), chain));
}

bool unregister_atomic_subgraph(const std::string& name) {
  PatternTable& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = std::find_if(t.patterns.begin(), t.patterns.end(), [&](const AtomicPattern& p) { return p.name == name; });
  if (it == t.patterns.end()) return false;
  t.patterns.erase(it);
  return true;
}

std::vector<AtomicPattern> atomic_subgraphs() {
  PatternTable& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  return t.patterns;
}

std::vector<AtomicMatch> find_atomic_subgraphs(const ir::Graph& graph) {
  std::vector<AtomicPattern> patterns = atomic_subgraphs();
  std::stable_sort(patterns.begin(), patterns.end(),
                   [](const AtomicPattern& a, const AtomicPattern& b) { return a.steps.size() > b.steps.size(); });
  const ir::UseMap uses(graph);
  std::unordered_set<const ir::Node*> taken;
  std::vector<AtomicMatch> matches;
  for (const ir::Node* start : graph.nodes()) {
    if (taken.count(start)) continue;
    for (const AtomicPattern& p : patterns) {
      std::vector<const ir::Node*> chain;
      const ir::Node* cur = start;
      for (size_t k = 0; k < p.steps.size(); ++k) {
        if (cur == nullptr || taken.count(cur) || !step_matches(p.steps[k], *cur)) {
          chain.clear();
          break;
        }
        chain.push_back(cur);
        if (k + 1 < p.steps.size()) cur = chain_successor(*cur, uses, graph);
      }
      if (!chain.empty()) {
        for (const ir::Node* n : chain) taken.insert(n);
        matches.push_back({p.name, std::move(chain)});
        break;
      }
    }
  }
  return matches;
}

}  // namespace kiln::partitioning
