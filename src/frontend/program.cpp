#include "kiln/frontend/program.h"

#include <new>
#include <stdexcept>

#include "frontend/archive.h"
#include "frontend/dtype_check.h"
#include "frontend/graph_builder.h"
#include "frontend/json_reader.h"
#include "frontend/weights.h"
#include "kiln/frontend/op_checks.h"
#include "kiln/support/error.h"
#include "kiln/support/zip.h"

namespace kiln::frontend {

int64_t Program::parameter_count() const {
  int64_t count = 0;
  for (const ir::Value* c : graph->constants()) {
    if (c->constant_kind() == ir::ConstantKind::Parameter && c->data().defined()) count += c->data().numel();
  }
  return count;
}

int64_t Program::constant_bytes() const {
  int64_t bytes = 0;
  for (const ir::Value* c : graph->constants()) bytes += static_cast<int64_t>(c->data().nbytes());
  return bytes;
}

namespace {

// The supported serialization schema major version (torch/_export/serde/schema.py SCHEMA_VERSION).
constexpr int64_t kSchemaMajor = 8;

// The root module's in_spec / out_spec (graph_module.module_call_graph[fqn == ""].signature), when present.
void read_call_spec(const JsonRef& root, Program& program) {
  const std::optional<JsonRef> calls = root.at("graph_module").find("module_call_graph");
  if (!calls || calls->is_null()) return;
  for (const JsonRef& call : calls->elements()) {
    if (call.at("fqn").as_string() != "") continue;
    const std::optional<JsonRef> signature = call.find("signature");
    if (!signature || signature->is_null()) return;
    program.in_spec = signature->at("in_spec").as_string();
    program.out_spec = signature->at("out_spec").as_string();
    return;
  }
}

Program load_archive(ZipReader zip, const std::string& label) {
  Pt2Archive archive(std::move(zip));
  Program program;
  program.source_path = label;

  auto source = std::make_shared<JsonSource>(JsonSource{label, archive.model_entry()});
  const nlohmann::json doc = parse_json(archive.read_text(archive.model_entry()), *source);
  JsonRef root(doc, source, "");

  const JsonRef version = root.at("schema_version");
  program.schema_major = static_cast<int>(std::clamp<int64_t>(version.at("major").as_int(), -1, 1 << 20));
  program.schema_minor = static_cast<int>(std::clamp<int64_t>(version.at("minor").as_int(), -1, 1 << 20));
  if (program.schema_major != kSchemaMajor) {
    throw version.unsupported("serialization schema major version " + std::to_string(program.schema_major) +
                              " is not supported (Kiln reads major " + std::to_string(kSchemaMajor) +
                              ", torch 2.5 and later)");
  }

  WeightStore weights(archive);
  build_program(root, weights, program);
  read_call_spec(root, program);
  check_declared_dtypes(*program.graph);
  // After the dtype check: a declared dtype that disagrees with its op is named there, at its node, rather than
  // as a dtype mismatch at a consumer.
  for (const ir::Node* node : program.graph->nodes()) check_node_arguments(*node);
  return program;
}

// Runs `load` and makes sure only kiln::Error leaves, with the archive named.
template <typename F>
Program guarded(const std::string& label, F&& load) {
  const ErrorContext where{label, "", "", ""};
  try {
    return load();
  } catch (const Error& e) {
    throw e.with_context(where);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::InvalidInput, std::string("malformed JSON: ") + e.what(), where);
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::InvalidInput, "out of memory while loading (corrupt sizes?)", where);
  } catch (const std::length_error& e) {
    throw Error(ErrorKind::InvalidInput, std::string("size out of range while loading: ") + e.what(), where);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Internal, std::string("unexpected error while loading: ") + e.what(), where);
  }
}

}  // namespace

Program load_program(const std::string& path) {
  return guarded(path, [&] { return load_archive(ZipReader::open(path), path); });
}

Program load_program_from_bytes(std::vector<uint8_t> bytes, const std::string& label) {
  return guarded(label, [&] { return load_archive(ZipReader::from_bytes(std::move(bytes), label), label); });
}

}  // namespace kiln::frontend
