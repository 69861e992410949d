#include "frontend/weights.h"

#include <cstring>
#include <limits>

#include "frontend/serde.h"
#include "kiln/support/error.h"

namespace kiln::frontend {

namespace {

bool checked_mul(int64_t a, int64_t b, int64_t& out) { return !__builtin_mul_overflow(a, b, &out); }
bool checked_add(int64_t a, int64_t b, int64_t& out) { return !__builtin_add_overflow(a, b, &out); }

[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorKind::InvalidInput, message); }

}  // namespace

HostTensor tensor_from_storage(std::shared_ptr<const std::vector<uint8_t>> storage, DType dtype,
                               const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                               int64_t storage_offset, const std::string& what) {
  if (strides.size() != sizes.size()) {
    invalid("tensor '" + what + "' has " + std::to_string(strides.size()) + " strides for " +
            std::to_string(sizes.size()) + " sizes");
  }
  int64_t numel = checked_numel(sizes);
  if (numel == 0) return HostTensor(dtype, sizes);
  if (storage_offset < 0) invalid("tensor '" + what + "' has a negative storage offset");
  const int64_t elem = static_cast<int64_t>(dtype_size(dtype));

  // The largest element index the view touches, with overflow checks.
  int64_t last = storage_offset;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (strides[d] < 0) invalid("tensor '" + what + "' has a negative stride");
    int64_t span = 0;
    if (!checked_mul(sizes[d] - 1, strides[d], span) || !checked_add(last, span, last)) {
      invalid("tensor '" + what + "' has sizes and strides that overflow");
    }
  }
  int64_t needed = 0;
  if (!checked_add(last, 1, needed) || !checked_mul(needed, elem, needed)) {
    invalid("tensor '" + what + "' has sizes and strides that overflow");
  }
  const int64_t available = static_cast<int64_t>(storage->size());
  if (needed > available) {
    invalid("weight file shorter than its metadata: '" + what + "' needs " + std::to_string(needed) +
            " bytes, the file has " + std::to_string(available));
  }

  bool contiguous = true;
  int64_t expected = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] != 1 && strides[d] != expected) contiguous = false;
    expected *= sizes[d];  // cannot overflow: numel fits
  }
  const int64_t nbytes = numel * elem;
  if (contiguous && storage_offset == 0 && nbytes == available) {
    return HostTensor(dtype, sizes, std::move(storage));  // share, no copy
  }
  auto out = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(nbytes));
  const uint8_t* src = storage->data();
  if (contiguous) {
    std::memcpy(out->data(), src + storage_offset * elem, static_cast<size_t>(nbytes));
  } else {
    // Walk the elements in C order with an index counter; offsets stay within [0, last] (checked above).
    std::vector<int64_t> index(sizes.size(), 0);
    int64_t offset = storage_offset;
    uint8_t* dst = out->data();
    for (int64_t i = 0; i < numel; ++i) {
      std::memcpy(dst + i * elem, src + offset * elem, static_cast<size_t>(elem));
      for (size_t d = sizes.size(); d-- > 0;) {
        if (++index[d] < sizes[d]) {
          offset += strides[d];
          break;
        }
        offset -= (sizes[d] - 1) * strides[d];
        index[d] = 0;
      }
    }
  }
  return HostTensor(dtype, sizes, std::move(out));
}

WeightStore::WeightStore(const Pt2Archive& archive) : archive_(archive) {
  read_config(archive.weights_config_entry(), "data/weights/", weights_);
  read_config(archive.constants_config_entry(), "data/constants/", constants_);
}

void WeightStore::read_config(const std::string& entry, const std::string& directory,
                              std::map<std::string, Payload>& out) {
  if (!archive_.contains(entry)) return;
  auto source = std::make_shared<JsonSource>(JsonSource{archive_.label(), entry});
  auto doc = std::make_shared<nlohmann::json>(parse_json(archive_.read_text(entry), *source));
  documents_.push_back(doc);
  JsonRef root(*doc, source, "");
  for (const auto& [fqn, meta] : root.at("config").members()) {
    Payload p;
    p.path = directory + meta.at("path_name").as_string();
    if (auto pickle = meta.find("use_pickle")) p.use_pickle = pickle->as_bool();
    if (auto is_param = meta.find("is_param")) (void)is_param->as_bool();
    p.tensor_meta = meta.find("tensor_meta");
    p.config_entry = entry;
    out.insert_or_assign(fqn, std::move(p));
  }
}

bool WeightStore::contains(const std::string& fqn) const { return weights_.count(fqn) || constants_.count(fqn); }

HostTensor WeightStore::load(const std::string& fqn) {
  auto it = weights_.find(fqn);
  if (it == weights_.end()) {
    it = constants_.find(fqn);
    if (it == constants_.end()) {
      invalid("weight '" + fqn + "' is in neither " + archive_.weights_config_entry() + " nor " +
              archive_.constants_config_entry());
    }
  }
  const Payload& p = it->second;
  if (p.use_pickle) {
    throw Error(ErrorKind::Unsupported, "'" + fqn + "' is stored pickled (" + p.path +
                                            "): tensor subclasses and custom objects are not supported");
  }
  if (!p.tensor_meta) invalid(p.config_entry + ": '" + fqn + "' has no tensor_meta");
  const JsonRef& meta_json = *p.tensor_meta;
  ir::TensorMeta meta = decode_tensor_meta(meta_json, nullptr);
  auto ints = [&](const std::vector<ir::SymExpr>& exprs, const char* what) {
    std::vector<int64_t> out;
    for (const auto& e : exprs) {
      auto v = e.as_int();
      if (!v) throw meta_json.error(std::string("symbolic ") + what + " '" + e.to_string() + "' in a stored tensor");
      out.push_back(*v);
    }
    return out;
  };
  std::vector<int64_t> sizes = ints(meta.sizes, "size");
  for (int64_t s : sizes) {
    if (s < 0) throw meta_json.error("negative size " + std::to_string(s));
  }
  // decode_tensor_meta has checked that there is one stride per size.
  std::vector<int64_t> strides = ints(meta.strides, "stride");
  auto offset = meta.storage_offset.as_int();
  if (!offset) throw meta_json.error("symbolic storage offset in a stored tensor");

  auto file = files_.find(p.path);
  if (file == files_.end()) {
    if (!archive_.contains(p.path)) {
      invalid("weight file '" + archive_.prefix() + p.path + "' (for '" + fqn + "') is missing");
    }
    auto bytes = std::make_shared<const std::vector<uint8_t>>(archive_.read(p.path));
    file = files_.emplace(p.path, std::move(bytes)).first;
  }
  try {
    return tensor_from_storage(file->second, meta.dtype, sizes, strides, *offset,
                               fqn + "' in '" + archive_.prefix() + p.path);
  } catch (const Error& e) {
    throw Error(e.kind(), e.message(), ErrorContext{archive_.label(), "", "", fqn});
  }
}

}  // namespace kiln::frontend
