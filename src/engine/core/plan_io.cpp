// Plan serialization: a versioned, SHA-256-checked binary, read back with a bounds-checked reader that
// validates every count, index, enum and size before use.

#include <cstring>
#include <set>
#include <string_view>
#include <type_traits>

#include "engine/core/plan_impl.h"
#include "engine/ops/shape_inference.h"
#include "kiln/support/checked_math.h"
#include "kiln/support/error.h"
#include "kiln/support/hash.h"
#include "kiln/support/limits.h"
#include "kiln/support/logging.h"

namespace kiln::engine {
namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'P', 'L', 'A', 'N'};
constexpr size_t kMaxRank = 16;
constexpr size_t kDigestBytes = 32;  // SHA-256 of the payload

std::vector<uint8_t> payload_digest(const uint8_t* data, size_t size) {
  Sha256 sha;
  sha.update(data, size);
  return sha.digest();
}

// Number of values of each serialized enum (for validation on load).
template <typename E> constexpr int64_t kEnumCount = 256;
template <> constexpr int64_t kEnumCount<LayerKind> = kNumLayerKinds;
template <> constexpr int64_t kEnumCount<ElementwiseOp> = static_cast<int64_t>(ElementwiseOp::Xor) + 1;
template <> constexpr int64_t kEnumCount<ActivationKind> = static_cast<int64_t>(ActivationKind::Mish) + 1;
template <> constexpr int64_t kEnumCount<UnaryOp> = static_cast<int64_t>(UnaryOp::IsInf) + 1;
template <> constexpr int64_t kEnumCount<ReduceOp> = static_cast<int64_t>(ReduceOp::ArgMin) + 1;
template <> constexpr int64_t kEnumCount<PostOp::Kind> = 2;
template <>
constexpr int64_t kEnumCount<NormalizationParams::Kind> = 4;
template <> constexpr int64_t kEnumCount<GatherParams::Mode> = 2;
template <> constexpr int64_t kEnumCount<ScatterParams::Reduction> = 2;
template <> constexpr int64_t kEnumCount<PoolingParams::Kind> = 2;
template <> constexpr int64_t kEnumCount<ResizeParams::Mode> = 2;
template <> constexpr int64_t kEnumCount<FillParams::Op> = 3;
template <> constexpr int64_t kEnumCount<CumulativeParams::Op> = 4;
template <> constexpr int64_t kEnumCount<PaddingParams::Mode> = 4;
template <> constexpr int64_t kEnumCount<DType> = 10;
template <> constexpr int64_t kEnumCount<TensorFormat> = kNumTensorFormats;

class Writer {
 public:
  std::vector<uint8_t> bytes;
  void raw(const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
  void u8(uint8_t v) { bytes.push_back(v); }
  void u32(uint32_t v) { for (int i = 0; i < 4; ++i) u8(static_cast<uint8_t>(v >> (8 * i))); }
  void u64(uint64_t v) { for (int i = 0; i < 8; ++i) u8(static_cast<uint8_t>(v >> (8 * i))); }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void f64(double v) { uint64_t x; std::memcpy(&x, &v, 8); u64(x); }
  void str(const std::string& s) { u32(static_cast<uint32_t>(s.size())); raw(s.data(), s.size()); }
  void dims(const Dims& d) { u32(static_cast<uint32_t>(d.size())); for (int64_t x : d) i64(x); }
};

class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  size_t remaining() const { return n_ - pos_; }
  const uint8_t* take(size_t n, const char* what) {
    KILN_CHECK(n <= remaining(), InvalidInput, "plan file truncated reading ", what, " (need ", n, " bytes at offset ",
               pos_, ", ", remaining(), " left)");
    const uint8_t* r = p_ + pos_;
    pos_ += n;
    return r;
  }
  uint8_t u8(const char* what) { return *take(1, what); }
  uint32_t u32(const char* what) {
    const uint8_t* b = take(4, what);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(b[i]) << (8 * i);
    return v;
  }
  uint64_t u64(const char* what) {
    const uint8_t* b = take(8, what);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(b[i]) << (8 * i);
    return v;
  }
  int64_t i64(const char* what) { return static_cast<int64_t>(u64(what)); }
  double f64(const char* what) { uint64_t x = u64(what); double v; std::memcpy(&v, &x, 8); return v; }
  bool flag(const char* what) {
    uint8_t v = u8(what);
    KILN_CHECK(v <= 1, InvalidInput, "plan file: bad boolean ", int(v), " for ", what);
    return v == 1;
  }
  /// A count of items each at least `min_item_bytes` long (bounded by the bytes left).
  size_t count(const char* what, size_t min_item_bytes = 1) {
    uint32_t n = u32(what);
    KILN_CHECK(static_cast<uint64_t>(n) * min_item_bytes <= remaining(), InvalidInput, "plan file: count ", n, " for ",
               what, " exceeds the remaining ", remaining(), " bytes");
    return n;
  }
  std::string str(const char* what) {
    size_t n = count(what);
    const uint8_t* b = take(n, what);
    return std::string(reinterpret_cast<const char*>(b), n);
  }
  /// A list of tensor ids (layer inputs/outputs, bindings): any length the remaining bytes allow (a concat may
  /// take, and a split may give, more tensors than a shape has dims); each id is range-checked by the caller.
  std::vector<int64_t> ids(const char* what) {
    size_t n = count(what, 8);
    std::vector<int64_t> out(n);
    for (auto& x : out) x = i64(what);
    return out;
  }
  Dims dims(const char* what) {
    size_t n = count(what, 8);
    KILN_CHECK(n <= kMaxRank, InvalidInput, "plan file: rank ", n, " too large for ", what);
    Dims d(n);
    for (auto& x : d) {
      x = i64(what);
      KILN_CHECK(x >= -1 && x <= kMaxDimExtent, InvalidInput, "plan file: bad dim ", x, " in ", what);
    }
    return d;
  }
  DType dtype(const char* what) {
    uint8_t v = u8(what);
    KILN_CHECK(v < kEnumCount<DType>, InvalidInput, "plan file: bad dtype code ", int(v), " for ", what);
    return static_cast<DType>(v);
  }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
};

struct WriteVisitor {
  Writer& w;
  template <typename T>
  void operator()(const char*, const T& v) { put(v); }
  void put(int64_t v) { w.i64(v); }
  void put(double v) { w.f64(v); }
  void put(bool v) { w.u8(v ? 1 : 0); }
  void put(DType v) { w.u8(static_cast<uint8_t>(v)); }
  void put(const std::string& v) { w.str(v); }
  template <typename E>
    requires std::is_enum_v<E>
  void put(E v) { w.u8(static_cast<uint8_t>(v)); }
  template <typename T>
  void put(const std::vector<T>& v) {
    w.u32(static_cast<uint32_t>(v.size()));
    for (const auto& x : v) put(x);
  }
  template <typename S>
    requires requires(S s, WriteVisitor& t) { s.visit(t); }
  void put(const S& s) { const_cast<S&>(s).visit(*this); }
};

/// The plan format version that added a params field, for fields added after the oldest version read: an
/// older plan lacks them and they keep their defaults.
uint32_t field_added_in(std::string_view name) {
  if (name == "kv_group") return 11;  // AttentionParams
  return 0;
}

struct ReadVisitor {
  Reader& r;
  uint32_t version = kPlanFormatVersion;
  template <typename T>
  void operator()(const char* name, T& v) {
    if (version >= field_added_in(name)) get(name, v);
  }
  void get(const char* n, int64_t& v) { v = r.i64(n); }
  void get(const char* n, double& v) { v = r.f64(n); }
  void get(const char* n, bool& v) { v = r.flag(n); }
  void get(const char* n, DType& v) { v = r.dtype(n); }
  void get(const char* n, std::string& v) { v = r.str(n); }
  template <typename E>
    requires std::is_enum_v<E>
  void get(const char* n, E& v) {
    uint8_t x = r.u8(n);
    KILN_CHECK(x < kEnumCount<E>, InvalidInput, "plan file: bad value ", int(x), " for ", n);
    v = static_cast<E>(x);
  }
  template <typename T>
  void get(const char* n, std::vector<T>& v) {
    size_t c = r.count(n);
    v.resize(c);
    for (auto& x : v) get(n, x);
  }
  template <typename S>
    requires requires(S s, ReadVisitor& t) { s.visit(t); }
  void get(const char*, S& s) { s.visit(*this); }
};

template <size_t I = 0>
LayerParams make_params(size_t index) {
  if constexpr (I < std::variant_size_v<LayerParams>) {
    if (index == I) return LayerParams(std::in_place_index<I>);
    return make_params<I + 1>(index);
  } else {
    KILN_FAIL(InvalidInput, "plan file: bad layer kind");
  }
}

/// The INT8 scales after a weight (version 7): u32 count, f64 each.
void write_int8_scales(Writer& w, const Weights& wt) {
  w.u32(static_cast<uint32_t>(wt.int8_scales.size()));
  for (float s : wt.int8_scales) w.f64(s);
}

/// Writes one weight slot. A named slot with a refit entry, written stripped or still waiting for its refit
/// (loaded stripped), is written stripped with its entry's dtype and dims, so a plan writes the same bytes
/// however often it is loaded and written again.
void write_weights(Writer& w, const Weights& wt, bool strip, const RefitEntry* entry) {
  if (entry != nullptr && !wt.name.empty() && (strip || !wt.defined())) {
    w.u8(1);
    w.str(wt.name);
    w.u8(static_cast<uint8_t>(entry->original_dtype));
    w.dims(entry->original_dims);
    w.u8(0);
    write_int8_scales(w, wt);
    return;
  }
  w.u8(wt.defined() ? 1 : 0);
  if (!wt.defined()) return;
  w.str(wt.name);
  w.u8(static_cast<uint8_t>(wt.value.dtype()));
  w.dims(wt.value.sizes());
  bool embed = !(strip && !wt.name.empty());
  w.u8(embed ? 1 : 0);
  if (embed) {
    w.u64(wt.value.nbytes());
    w.raw(wt.value.data(), wt.value.nbytes());
  }
  write_int8_scales(w, wt);
}

/// The INT8 scales after a weight (version 7).
std::vector<float> read_int8_scales(Reader& r, uint32_t version) {
  std::vector<float> scales;
  if (version < 7) return scales;
  scales.resize(r.count("weight int8 scales", 8));
  for (float& s : scales) s = static_cast<float>(r.f64("weight int8 scale"));
  return scales;
}

/// Reads one weight slot; a stripped weight comes back undefined (its metadata goes to `stripped`).
Weights read_weights(Reader& r, std::optional<std::pair<DType, Dims>>* stripped, uint32_t version) {
  if (!r.flag("weights defined")) return Weights();
  Weights wt;
  wt.name = r.str("weight name");
  DType dt = r.dtype("weight dtype");
  Dims d = r.dims("weight dims");
  for (int64_t x : d) KILN_CHECK(x >= 0, InvalidInput, "plan file: weight '", wt.name, "' has a dynamic dim");
  int64_t n = checked_numel(d);
  bool embedded = r.flag("weight embedded");
  if (!embedded) {
    KILN_CHECK(!wt.name.empty(), InvalidInput, "plan file: an unnamed weight is stripped");
    *stripped = std::make_pair(dt, d);
    wt.int8_scales = read_int8_scales(r, version);
    return wt;
  }
  uint64_t nbytes = r.u64("weight size");
  // Checked: a shape whose byte count overflows int64 is refused, not wrapped to a size that matches nbytes.
  const int64_t needed = checked_mul(n, static_cast<int64_t>(dtype_size(dt)), "a plan weight's bytes");
  KILN_CHECK(nbytes == static_cast<uint64_t>(needed), InvalidInput, "plan file: weight '", wt.name, "' has ",
             nbytes, " bytes, its shape needs ", needed);
  const uint8_t* b = r.take(static_cast<size_t>(nbytes), "weight bytes");
  auto storage = std::make_shared<std::vector<uint8_t>>(b, b + nbytes);
  wt.value = HostTensor(dt, d, storage);
  wt.int8_scales = read_int8_scales(r, version);
  return wt;
}

void check_id(int64_t id, size_t n, const char* what) {
  KILN_CHECK(id >= 0 && static_cast<size_t>(id) < n, InvalidInput, "plan file: ", what, " ", id, " out of range");
}

}  // namespace

std::vector<uint8_t> Plan::serialize() const { return serialize(impl_->strip_weights); }

std::vector<uint8_t> Plan::serialize(bool strip_weights) const {
  std::vector<uint8_t> payload = serialize_payload(strip_weights);
  Writer out;
  out.raw(kMagic, 8);
  out.u32(kPlanFormatVersion);
  out.u64(payload.size());
  out.raw(payload.data(), payload.size());
  std::vector<uint8_t> digest = payload_digest(payload.data(), payload.size());
  out.raw(digest.data(), digest.size());
  return out.bytes;
}

size_t Plan::serialized_size() const {
  return 8 + 4 + 8 + serialize_payload(impl_->strip_weights).size() + 32;  // magic, version, size, payload, SHA-256
}

std::vector<uint8_t> Plan::serialize_payload(bool strip_weights) const {
  const Impl& g = *impl_;
  Writer w;
  w.str(g.backend_name);
  w.str(g.device);
  w.u8(g.refittable ? 1 : 0);
  w.u8(strip_weights ? 1 : 0);
  w.u64(g.workspace_bytes);
  w.u32(static_cast<uint32_t>(g.tensors.size()));
  for (const auto& t : g.tensors) {
    w.str(t.name);
    w.u8(static_cast<uint8_t>(t.dtype));
    w.dims(t.dims);
    w.u8(t.is_input);
    w.u8(t.is_output);
    w.i64(t.producer);
    w.u8(static_cast<uint8_t>(t.format));
    w.u8(t.range ? 1 : 0);
    if (t.range) {
      w.f64(t.range->min);
      w.f64(t.range->max);
    }
  }
  w.dims(g.inputs);
  w.dims(g.outputs);
  w.u32(static_cast<uint32_t>(g.layers.size()));
  for (size_t li = 0; li < g.layers.size(); ++li) {
    const PlanLayer& pl = g.layers[li];
    const Layer& l = pl.layer;
    w.str(l.name);
    w.u8(static_cast<uint8_t>(l.kind));
    w.u8(pl.host);
    w.str(pl.tactic);
    w.u64(pl.kernel_data.size());
    w.raw(pl.kernel_data.data(), pl.kernel_data.size());
    w.dims(l.inputs);
    w.dims(l.outputs);
    w.u8(static_cast<uint8_t>(l.format_copies));
    WriteVisitor v{w};
    std::visit([&](const auto& p) { const_cast<std::decay_t<decltype(p)>&>(p).visit(v); }, l.params);
    w.u32(static_cast<uint32_t>(l.weights.size()));
    for (size_t slot = 0; slot < l.weights.size(); ++slot) {
      const RefitEntry* missing = nullptr;
      for (const auto& e : g.refit) {
        if (e.layer == static_cast<int64_t>(li) && e.slot == static_cast<int64_t>(slot)) missing = &e;
      }
      write_weights(w, l.weights[slot], strip_weights, missing);
    }
  }
  w.u32(static_cast<uint32_t>(g.profiles.size()));
  for (const auto& p : g.profiles) {
    w.u32(static_cast<uint32_t>(p.profile.ranges().size()));
    for (const auto& [name, r] : p.profile.ranges()) {
      w.str(name);
      w.dims(r.min);
      w.dims(r.opt);
      w.dims(r.max);
    }
    for (size_t t = 0; t < g.tensors.size(); ++t) {
      w.dims(p.min[t]);
      w.dims(p.opt[t]);
      w.dims(p.max[t]);
      w.i64(p.offsets[t]);
      w.i64(p.capacity[t]);
    }
    w.u64(p.arena_bytes);
    w.u64(p.live_lower_bound);
  }
  w.u32(static_cast<uint32_t>(g.refit.size()));
  for (const auto& e : g.refit) {
    w.str(e.name);
    w.i64(e.layer);
    w.i64(e.slot);
    w.u8(static_cast<uint8_t>(e.original_dtype));
    w.dims(e.original_dims);
  }
  return std::move(w.bytes);
}

std::shared_ptr<Plan> Plan::deserialize(const std::vector<uint8_t>& bytes, const BackendOptions& options) {
  Reader head(bytes.data(), bytes.size());
  const uint8_t* magic = head.take(8, "magic");
  KILN_CHECK(std::memcmp(magic, kMagic, 8) == 0, InvalidInput, "not a Kiln plan (bad magic)");
  uint32_t version = head.u32("format version");
  KILN_CHECK(version >= kOldestPlanFormatVersion && version <= kPlanFormatVersion, InvalidInput, "plan format version ",
             version, " is not supported (this build reads ", kOldestPlanFormatVersion, " to ", kPlanFormatVersion, ")");
  uint64_t size = head.u64("payload size");
  KILN_CHECK(head.remaining() >= kDigestBytes && size == head.remaining() - kDigestBytes, InvalidInput,
             "plan file size mismatch: payload says ", size, " bytes, file has ", head.remaining(),
             " after the header (payload + ", kDigestBytes, "-byte SHA-256)");
  const uint8_t* payload = head.take(static_cast<size_t>(size), "payload");
  const uint8_t* stored = head.take(kDigestBytes, "checksum");
  std::vector<uint8_t> digest = payload_digest(payload, static_cast<size_t>(size));
  KILN_CHECK(std::memcmp(stored, digest.data(), kDigestBytes) == 0, InvalidInput,
             "plan file checksum mismatch (corrupted): the SHA-256 of the payload differs");

  Reader r(payload, static_cast<size_t>(size));
  auto g = std::make_unique<Impl>();
  g->backend_name = r.str("backend");
  g->device = r.str("device");
  g->refittable = r.flag("refittable");
  g->strip_weights = r.flag("strip_weights");
  g->workspace_bytes = r.u64("workspace");
  KILN_CHECK(g->workspace_bytes <= (uint64_t{1} << 36), InvalidInput, "plan file: workspace too large");
  size_t nt = r.count("tensors", 12);
  g->tensors.resize(nt);
  for (auto& t : g->tensors) {
    t.name = r.str("tensor name");
    t.dtype = r.dtype("tensor dtype");
    t.dims = r.dims("tensor dims");
    t.is_input = r.flag("is_input");
    t.is_output = r.flag("is_output");
    t.producer = r.i64("producer");
    uint8_t format = r.u8("tensor format");
    // (version 8 added E4M3)
    KILN_CHECK(format < kNumTensorFormats && (version >= 8 || format != static_cast<uint8_t>(TensorFormat::E4M3)),
               InvalidInput, "plan file: bad format code ", int(format), " for tensor '", t.name, "'");
    t.format = static_cast<TensorFormat>(format);
    KILN_CHECK(format_applies(t.format, t.dims.size()), InvalidInput, "plan file: tensor '", t.name, "' of rank ",
               t.dims.size(), " cannot be ", tensor_format_name(t.format));
    KILN_CHECK(t.format == TensorFormat::Plain || (!t.is_input && !t.is_output), InvalidInput, "plan file: binding '",
               t.name, "' is not plain");
    if (version >= 6 && r.flag("has dynamic range")) {  // (version 5 had no ranges)
      const double lo = r.f64("range min"), hi = r.f64("range max");
      const DynamicRange range{static_cast<float>(lo), static_cast<float>(hi)};
      KILN_CHECK(range.usable(), InvalidInput, "plan file: tensor '", t.name,
                 "' has an unusable dynamic range");
      t.range = range;
    }
  }
  g->inputs = r.ids("inputs");
  g->outputs = r.ids("outputs");
  for (int64_t id : g->inputs) {
    check_id(id, nt, "input tensor");
    KILN_CHECK(g->tensors[id].is_input && g->tensors[id].producer == -1, InvalidInput, "plan file: bad input tensor");
  }
  for (int64_t id : g->outputs) {
    check_id(id, nt, "output tensor");
    KILN_CHECK(g->tensors[id].is_output, InvalidInput, "plan file: bad output tensor");
  }
  size_t nl = r.count("layers", 8);
  g->layers.resize(nl);
  std::vector<bool> defined(nt, false);
  for (int64_t id : g->inputs) defined[id] = true;
  std::vector<std::vector<std::pair<int64_t, std::pair<DType, Dims>>>> stripped(nl);
  for (size_t li = 0; li < nl; ++li) {
    PlanLayer& pl = g->layers[li];
    Layer& l = pl.layer;
    l.name = r.str("layer name");
    uint8_t kind = r.u8("layer kind");
    KILN_CHECK(kind < kNumLayerKinds, InvalidInput, "plan file: bad layer kind ", int(kind));
    l.kind = static_cast<LayerKind>(kind);
    pl.host = r.flag("host");
    pl.tactic = r.str("tactic");
    uint64_t kernel_bytes = r.u64("kernel data size");
    KILN_CHECK(kernel_bytes <= r.remaining(), InvalidInput, "plan file: kernel data of layer '", l.name, "' (",
               kernel_bytes, " bytes) exceeds the remaining ", r.remaining(), " bytes");
    const uint8_t* kernel_data = r.take(static_cast<size_t>(kernel_bytes), "kernel data");
    pl.kernel_data.assign(kernel_data, kernel_data + kernel_bytes);
    l.inputs = r.ids("layer inputs");
    l.outputs = r.ids("layer outputs");
    if (version >= 10) {  // (version 10 added the format copies)
      l.format_copies = r.u8("format copies");
      KILN_CHECK(static_cast<size_t>(l.format_copies) < std::max<size_t>(l.outputs.size(), 1), InvalidInput,
                 "plan file: layer '", l.name, "' has ", l.format_copies, " format copies among ", l.outputs.size(),
                 " outputs");
    }
    for (int64_t id : l.inputs) {
      check_id(id, nt, "layer input");
      KILN_CHECK(defined[id], InvalidInput, "plan file: layer '", l.name, "' reads a tensor defined later");
    }
    for (int64_t id : l.outputs) {
      check_id(id, nt, "layer output");
      KILN_CHECK(!defined[id] && g->tensors[id].producer == static_cast<int64_t>(li), InvalidInput,
                 "plan file: layer '", l.name, "' output inconsistent");
      defined[id] = true;
    }
    l.params = make_params(kind);
    ReadVisitor v{r, version};
    std::visit([&](auto& p) { p.visit(v); }, l.params);
    size_t nw = r.count("weights");
    KILN_CHECK(nw <= 8, InvalidInput, "plan file: too many weight slots");
    l.weights.resize(nw);
    for (size_t s = 0; s < nw; ++s) {
      std::optional<std::pair<DType, Dims>> meta;
      l.weights[s] = read_weights(r, &meta, version);
      if (meta) stripped[li].push_back({static_cast<int64_t>(s), *meta});
    }
  }
  for (size_t id = 0; id < nt; ++id) KILN_CHECK(defined[id], InvalidInput, "plan file: tensor ", id, " has no producer");
  size_t np = r.count("profiles", 4);
  KILN_CHECK(np >= 1, InvalidInput, "plan file: no optimization profile");
  g->profiles.resize(np);
  for (auto& p : g->profiles) {
    size_t nr = r.count("profile ranges", 4);
    for (size_t i = 0; i < nr; ++i) {
      std::string name = r.str("range name");
      Dims mn = r.dims("range min"), op = r.dims("range opt"), mx = r.dims("range max");
      p.profile.set_dimensions(name, mn, op, mx);
    }
    p.min.resize(nt);
    p.opt.resize(nt);
    p.max.resize(nt);
    p.offsets.resize(nt);
    p.capacity.resize(nt);
    for (size_t t = 0; t < nt; ++t) {
      p.min[t] = r.dims("tensor min");
      p.opt[t] = r.dims("tensor opt");
      p.max[t] = r.dims("tensor max");
      p.offsets[t] = r.i64("offset");
      p.capacity[t] = r.i64("capacity");
    }
    p.arena_bytes = r.u64("arena bytes");
    p.live_lower_bound = r.u64("live bytes");
    KILN_CHECK(p.arena_bytes <= kMaxArenaBytes, InvalidInput, "plan file: arena too large");
    for (size_t t = 0; t < nt; ++t) {
      size_t rank = g->tensors[t].dims.size();
      KILN_CHECK(p.min[t].size() == rank && p.opt[t].size() == rank && p.max[t].size() == rank, InvalidInput,
                 "plan file: tensor range rank mismatch");
      KILN_CHECK(p.offsets[t] >= -1 && p.capacity[t] >= 0, InvalidInput, "plan file: bad memory plan entry");
      if (p.offsets[t] >= 0) {
        KILN_CHECK(static_cast<uint64_t>(p.offsets[t]) + static_cast<uint64_t>(p.capacity[t]) <= p.arena_bytes,
                   InvalidInput, "plan file: tensor ", t, " lies outside the arena");
      } else {
        KILN_CHECK(p.capacity[t] == 0, InvalidInput, "plan file: capacity without an arena offset");
      }
    }
    for (int64_t id : g->inputs) {
      const auto& t = g->tensors[id];
      KILN_CHECK(p.profile.has(t.name), InvalidInput, "plan file: profile lacks input '", t.name, "'");
      KILN_CHECK(p.profile.get(t.name).min.size() == t.dims.size(), InvalidInput, "plan file: profile rank mismatch");
    }
  }
  size_t nr = r.count("refit entries", 4);
  for (size_t i = 0; i < nr; ++i) {
    RefitEntry e;
    e.name = r.str("refit name");
    e.layer = r.i64("refit layer");
    e.slot = r.i64("refit slot");
    e.original_dtype = r.dtype("refit dtype");
    e.original_dims = r.dims("refit dims");
    check_id(e.layer, nl, "refit layer");
    check_id(e.slot, g->layers[e.layer].layer.weights.size(), "refit slot");
    g->refit.push_back(std::move(e));
  }
  KILN_CHECK(r.remaining() == 0, InvalidInput, "plan file has ", r.remaining(), " trailing bytes");
  // Every refit entry names its slot's weight and its dims, embedded or stripped (a plan written stripped takes
  // them from the entry). Its dtype is the weight's before a reduced-precision build lowered it, not checked.
  for (const RefitEntry& e : g->refit) {
    const Weights& wt = g->layers[e.layer].layer.weights[e.slot];
    std::optional<Dims> dims;
    if (wt.defined()) dims = wt.value.sizes();
    for (const auto& [slot, meta] : stripped[e.layer]) {
      if (slot == e.slot) dims = meta.second;
    }
    KILN_CHECK(dims && e.name == wt.name && e.original_dims == *dims, InvalidInput, "plan file: refit entry '",
               e.name, "' disagrees with the weight of layer ", e.layer, " slot ", e.slot, " (name or dims)");
  }
  for (size_t li = 0; li < nl; ++li) {
    for (const auto& [slot, meta] : stripped[li]) {
      bool found = false;
      for (const auto& e : g->refit) found = found || (e.layer == static_cast<int64_t>(li) && e.slot == slot);
      KILN_CHECK(found, InvalidInput, "plan file: stripped weight without a refit entry");
    }
  }
  // Semantic validation: every layer's params against its tensors.
  for (size_t li = 0; li < nl; ++li) {
    const Layer& l = g->layers[li].layer;
    bool missing = !stripped[li].empty();
    if (missing) continue;
    std::vector<ShapeIn> in;
    for (int64_t id : l.inputs) in.push_back({logical_dtype(*g, id), g->tensors[id].dims, nullptr});
    std::vector<ShapeOut> outs;
    try {
      outs = infer_shapes(l, in);
    } catch (const Error& e) {
      KILN_FAIL(InvalidInput, "plan file: layer '", l.name, "' is invalid: ", e.message());
    }
    KILN_CHECK(outs.size() == l.outputs.size(), InvalidInput, "plan file: layer '", l.name, "' output count mismatch");
    for (size_t o = 0; o < outs.size(); ++o) {
      const PlanTensor& t = g->tensors[l.outputs[o]];
      KILN_CHECK(outs[o].dims.size() == t.dims.size(), InvalidInput, "plan file: layer '", l.name, "' output rank mismatch");
      for (size_t d = 0; d < t.dims.size(); ++d) {
        KILN_CHECK(outs[o].dims[d] < 0 || t.dims[d] < 0 || outs[o].dims[d] == t.dims[d], InvalidInput, "plan file: layer '",
                   l.name, "' output dims mismatch");
      }
      KILN_CHECK(l.kind == LayerKind::FusedPointwise || l.kind == LayerKind::Constant ||
                     outs[o].dtype == logical_dtype(*g, l.outputs[o]),
                 InvalidInput, "plan file: layer '", l.name, "' output dtype mismatch");
    }
    KILN_CHECK(g->layers[li].host || l.kind == LayerKind::Constant || !g->layers[li].tactic.empty(), InvalidInput,
               "plan file: layer '", l.name, "' has no tactic");
    // Formats: host and constant layers write Plain; a reformat's params match its tensors (kernels check the
    // formats of their own tensors when they are created).
    if (g->layers[li].host || l.kind == LayerKind::Constant) {
      for (int64_t id : l.outputs) {
        KILN_CHECK(g->tensors[id].format == TensorFormat::Plain, InvalidInput, "plan file: layer '", l.name,
                   "' writes a non-plain tensor");
      }
    }
    if (l.kind == LayerKind::Reformat) {
      const auto& p = l.get<ReformatParams>();
      KILN_CHECK(g->tensors[l.inputs[0]].format == p.from && g->tensors[l.outputs[0]].format == p.to, InvalidInput,
                 "plan file: reformat '", l.name, "' disagrees with its tensors' formats");
    }
  }
  g->backend = create_backend(g->backend_name, options);
  g->backend->check_plan_device(g->device);
  if (g->backend->device() != g->device) {
    KILN_WARN("engine: plan built for '", g->device, "', loading on '", g->backend->device(), "'");
  }
  g->derive();
  g->create_kernels(-1, ErrorKind::InvalidInput);
  return std::make_shared<Plan>(std::move(g));
}

}  // namespace kiln::engine
