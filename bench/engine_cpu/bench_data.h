#pragma once
// Shared shapes and deterministic weights for the engine-vs-libtorch benchmark pairs (no torch here).

#include <cstdint>
#include <random>
#include <vector>

namespace kiln::bench {

// Thread count: the benchmark argument of every case (1 and 2: this machine has 2 cores), the same on both sides.

/// ResNet basic block: 64 channels, 56x56, batch 1, batch norm folded into the convolutions' bias.
inline constexpr int64_t kBlockC = 64, kBlockHW = 56;
/// Transformer MLP block: 128 tokens x 768, hidden 3072.
inline constexpr int64_t kTokens = 128, kModel = 768, kHidden = 3072;

inline std::vector<float> random_floats(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

struct BlockWeights {
  std::vector<float> k1 = random_floats(kBlockC * kBlockC * 9, 1, 0.05f), b1 = random_floats(kBlockC, 2, 0.1f);
  std::vector<float> k2 = random_floats(kBlockC * kBlockC * 9, 3, 0.05f), b2 = random_floats(kBlockC, 4, 0.1f);
  std::vector<float> x = random_floats(kBlockC * kBlockHW * kBlockHW, 5, 1.0f);
};

/// Linear weights stored [out, in] like torch.nn.Linear.
struct MlpWeights {
  std::vector<float> w1 = random_floats(kHidden * kModel, 11, 0.03f), b1 = random_floats(kHidden, 12, 0.1f);
  std::vector<float> w2 = random_floats(kModel * kHidden, 13, 0.02f), b2 = random_floats(kModel, 14, 0.1f);
  std::vector<float> gamma = random_floats(kModel, 15, 0.5f), beta = random_floats(kModel, 16, 0.1f);
  std::vector<float> x = random_floats(kTokens * kModel, 17, 1.0f);
  MlpWeights() {
    for (auto& g : gamma) g += 1.0f;
  }
};

}  // namespace kiln::bench
