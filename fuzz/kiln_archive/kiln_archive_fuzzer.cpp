// libFuzzer target: the .kiln loader's torch-free part (runtime read_module_archive: archive layout, format
// entries, module.json fields, graph.kir, constants against the graph, plans) on arbitrary bytes. What it
// leaves to runtime::load() is building the CompiledModule (bindings against the graph, the libtorch
// executors of PyTorch segments), which needs libtorch and is not fuzzed here (docs/fuzzing.md). Input: a
// bundle of entries (common/bundle.h) or raw archive bytes.

#include "common/bundle.h"
#include "common/fuzz_check.h"
#include "kiln/support/zip.h"
#include "runtime_core/module_archive_read.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<std::vector<uint8_t>> archive = kiln::fuzz::archive_bytes(data, size);
  if (!archive) return 0;
  kiln::fuzz::accepts([&] {
    kiln::ZipReader zip = kiln::ZipReader::from_bytes(std::move(*archive), "fuzz.kiln");
    kiln::runtime::read_module_archive(zip, "fuzz.kiln");
  });
  return 0;
}
