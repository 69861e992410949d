#include "engine/core/kernel_table.h"

#include "kiln/support/error.h"

namespace kiln::engine {

bool KernelRow::runs(const LayerInfo& layer, std::string* why) const {
  return !applies || applies(layer, why);
}

TacticFormats KernelRow::formats_for(const LayerInfo& layer) const {
  if (layer.kind() == LayerKind::Reformat) {
    const auto& p = layer.params<ReformatParams>();
    return {{p.from}, {p.to}};
  }
  return formats ? formats(layer) : TacticFormats{};
}

Tactic KernelRow::tactic() const {
  Tactic t;
  t.name = name;
  t.reduced_precision = reduced_precision;
  t.tf32 = tf32;
  t.int8 = int8;
  t.fp8 = fp8;
  return t;
}

void KernelTable::add(KernelRow row) {
  KILN_CHECK(find(row.kind, row.name) == nullptr, Internal, "kernel row '", row.name,
             "' registered twice for ", layer_kind_name(row.kind));
  rows_.push_back(std::move(row));
}

const KernelRow* KernelTable::find(LayerKind kind, const std::string& name) const {
  for (const auto& r : rows_) {
    if (r.kind == kind && r.name == name) return &r;
  }
  return nullptr;
}

std::vector<const KernelRow*> KernelTable::candidates(const LayerInfo& layer) const {
  std::vector<const KernelRow*> out;
  for (const auto& r : rows_) {
    if (r.kind == layer.kind() && r.runs(layer, nullptr)) out.push_back(&r);
  }
  return out;
}

namespace {

/// "<row>: <why>" for each row of the layer's kind but `skip` that refuses it, joined by "; "; `any_runs`
/// says whether one of them runs it.
std::string row_refusals(const KernelTable& table, const LayerInfo& layer, const std::string& skip,
                         bool& any_runs) {
  std::string reasons;
  any_runs = false;
  for (const auto& r : table.rows()) {
    if (r.kind != layer.kind() || r.name == skip) continue;
    std::string w;
    if (r.runs(layer, &w)) {
      any_runs = true;
      continue;
    }
    reasons += (reasons.empty() ? "" : "; ") + r.name + ": " + (w.empty() ? "does not apply" : w);
  }
  return reasons;
}

}  // namespace

std::string TableBackend::refusals(const LayerInfo& layer, const std::string& reference) const {
  bool any_runs = false;
  const std::string reasons = row_refusals(table_, layer, reference, any_runs);
  if (!reasons.empty() || any_runs) return reasons;
  return "the " + name() + " backend has no other kernel for " + layer_kind_name(layer.kind());
}

bool TableBackend::supports(const LayerInfo& layer, std::string* why) const {
  bool any_runs = false;
  const std::string reasons = row_refusals(table_, layer, "", any_runs);
  if (any_runs) return true;
  if (why) {
    *why = reasons.empty()
               ? "the " + name() + " backend has no kernel for " + layer_kind_name(layer.kind()) + " yet"
               : reasons;
  }
  return false;
}

std::vector<Tactic> TableBackend::tactics(const LayerInfo& layer) const {
  std::vector<const KernelRow*> rows = table_.candidates(layer);
  std::vector<Tactic> out;
  out.reserve(rows.size());
  if (order_ == TacticOrder::Registration) {
    for (const KernelRow* r : rows) out.push_back(r->tactic());
  } else {
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) out.push_back((*it)->tactic());
  }
  return out;
}

TacticFormats TableBackend::formats(const LayerInfo& layer, const std::string& tactic) const {
  const KernelRow* r = table_.find(layer.kind(), tactic);
  return r ? r->formats_for(layer) : TacticFormats{};
}

std::optional<size_t> TableBackend::writes_format(const LayerInfo& layer, const std::string& tactic,
                                                  TensorFormat format) const {
  const KernelRow* r = table_.find(layer.kind(), tactic);
  if (!r || !r->writes || layer.outputs.empty()) return std::nullopt;
  return r->writes(layer, format);
}

bool TableBackend::writes_copy(const LayerInfo& layer, const std::string& tactic, TensorFormat format) const {
  const KernelRow* r = table_.find(layer.kind(), tactic);
  return r && r->copies && !layer.outputs.empty() && r->copies(layer, format);
}

std::unique_ptr<Kernel> TableBackend::create_kernel(const LayerInfo& layer, const std::string& tactic) const {
  const KernelRow* r = table_.find(layer.kind(), tactic);
  KILN_CHECK(r != nullptr, Unsupported, name(), " backend has no tactic '", tactic, "' for ",
             layer_kind_name(layer.kind()));
  std::string why;
  KILN_CHECK(r->runs(layer, &why), Unsupported, name(), " tactic '", tactic, "' does not apply to layer '",
             layer.layer->name, "'", why.empty() ? "" : ": ", why);
  // Format copies (Layer::format_copies): the last outputs, each in a format the row writes copies in.
  const size_t copies = static_cast<size_t>(layer.layer->format_copies);
  KILN_CHECK(copies == 0 || copies < layer.outputs.size(), InvalidInput, "layer '", layer.layer->name,
             "' has more format copies than outputs");
  const size_t own = layer.outputs.size() - copies;
  for (size_t k = own; k < layer.outputs.size(); ++k) {
    const TensorInfo& t = layer.outputs[k];
    KILN_CHECK(r->copies && r->copies(layer, t.format), InvalidInput, "layer '", layer.layer->name,
               "': ", name(), " tactic '", tactic, "' cannot write a copy of its output in format ",
               tensor_format_name(t.format), " (tensor '", t.name, "')");
  }
  // A Reformat converts exactly as its params say; other rows run in their formats unless they take any
  // layout (E4M3 is an element encoding, not a layout: only rows that say so read or write it).
  if (r->any_format && layer.kind() != LayerKind::Reformat) {
    for (const auto* list : {&layer.inputs, &layer.outputs}) {
      for (const TensorInfo& t : *list) {
        KILN_CHECK(t.format != TensorFormat::E4M3, InvalidInput, "layer '", layer.layer->name, "': ", name(),
                   " tactic '", tactic, "' cannot run tensor '", t.name, "' in format e4m3");
      }
    }
  } else {
    TacticFormats want = r->formats_for(layer);
    auto check = [&](const std::vector<TensorInfo>& list, const std::vector<TensorFormat>& formats,
                     size_t first) {
      for (size_t k = first; k < list.size(); ++k) {
        TensorFormat f = k < formats.size() ? formats[k] : TensorFormat::Plain;
        KILN_CHECK(list[k].format == f, InvalidInput, "layer '", layer.layer->name, "': ", name(),
                   " tactic '", tactic, "' runs tensor '", list[k].name, "' in format ",
                   tensor_format_name(f), ", not ", tensor_format_name(list[k].format));
      }
    };
    check(layer.inputs, want.inputs, 0);
    // (output 0 may be in a format the row also writes; the format copies were checked above)
    const bool written =
        r->writes && !layer.outputs.empty() && r->writes(layer, layer.outputs[0].format).has_value();
    check({layer.outputs.begin(), layer.outputs.begin() + static_cast<long>(own)}, want.outputs,
          written ? 1 : 0);
  }
  return r->create(layer);
}

}  // namespace kiln::engine
