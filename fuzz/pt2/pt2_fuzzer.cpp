// libFuzzer target: the .pt2 loader (frontend load_program_from_bytes: archive layout, model.json, weights
// configs, sympy sizes, op schemas) on a bundle of entries (common/bundle.h) or raw archive bytes. A program
// it accepts verifies (ir::verify) and its graph prints to IR text that parses back (what compile writes into
// a .kiln as graph.kir).

#include "common/bundle.h"
#include "common/fuzz_check.h"
#include "kiln/frontend/program.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<std::vector<uint8_t>> archive = kiln::fuzz::archive_bytes(data, size);
  if (!archive) return 0;
  kiln::frontend::Program program;
  if (!kiln::fuzz::accepts(
          [&] { program = kiln::frontend::load_program_from_bytes(std::move(*archive), "fuzz.pt2"); })) {
    return 0;
  }
  kiln::fuzz::invariant("a loaded program verifies", [&] {
    kiln::ir::verify(*program.graph);
    return true;
  });
  kiln::fuzz::invariant("a loaded graph's IR text parses back", [&] {
    return kiln::ir::parse_graph(kiln::ir::print_graph(*program.graph)) != nullptr;
  });
  return 0;
}
