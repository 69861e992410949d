// run_module MODULE.kiln IO.npz: runs a compiled module on the npz's input_K and checks output_K (atol 1e-4).
#include <kiln/runtime/host_module.h>
#include <kiln/support/npz.h>
#include <cmath>
#include <cstdio>
int main(int argc, char** argv) {
  if (argc != 3) return std::fprintf(stderr, "usage: run_module MODULE.kiln IO.npz\n"), 2;
  auto io = kiln::read_npz(argv[2]);
  std::vector<kiln::HostTensor> inputs, outputs;
  for (int k = 0; io.count("input_" + std::to_string(k)); ++k) inputs.push_back(io.at("input_" + std::to_string(k)));
  outputs = kiln::runtime::HostModule::load(argv[1])->execute(inputs);
  double worst = 0;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const kiln::HostTensor &want = io.at("output_" + std::to_string(k)), &got = outputs[k];
    if (got.sizes() != want.sizes()) return std::fprintf(stderr, "output %zu: other shape\n", k), 1;
    for (int64_t i = 0; i < want.numel(); ++i)
      worst = std::fmax(worst, std::fabs(got.get_as_double(i) - want.get_as_double(i)));
  }
  return std::printf("%zu outputs, max abs error %g\n", outputs.size(), worst), worst <= 1e-4 ? 0 : 1;
}
