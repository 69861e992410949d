// libFuzzer target: the IR text parser (ir parse_graph; a .kiln's graph.kir) on arbitrary text. A graph it
// accepts prints to text that parses back and prints the same (the printer and parser agree).

#include <string_view>

#include "common/fuzz_check.h"
#include "kiln/ir/text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<kiln::ir::Graph> graph;
  if (!kiln::fuzz::accepts([&] {
        graph = kiln::ir::parse_graph(std::string_view(reinterpret_cast<const char*>(data), size));
      })) {
    return 0;
  }
  kiln::fuzz::invariant("print(parse(print(g))) == print(g)", [&] {
    const std::string text = kiln::ir::print_graph(*graph);
    return kiln::ir::print_graph(*kiln::ir::parse_graph(text)) == text;
  });
  return 0;
}
