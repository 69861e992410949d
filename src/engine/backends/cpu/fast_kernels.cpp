// The fast CPU kernels' registration: one line per kernel file (see kernel_registry.h for the contract).

#include "engine/backends/cpu/kernel_registry.h"
#include "engine/backends/cpu/fast_kernels.h"
#include "engine/backends/cpu/onednn/register.h"

namespace kiln::engine::cpu {

void register_fast_kernels(KernelTable& registry) {
  onednn::register_onednn_convolution(registry);
  onednn::register_onednn_int8_convolution(registry);
  onednn::register_onednn_matmul(registry);
  onednn::register_onednn_matmul_conv1x1(registry);  // after "onednn": preferred to it (where it applies)
  onednn::register_onednn_int8_matmul(registry);
  onednn::register_onednn_reformat(registry);
  fast::register_normalization(registry);
  fast::register_pooling(registry);
  fast::register_softmax(registry);
  fast::register_reduce(registry);
  fast::register_pointwise(registry);
  fast::register_attention(registry);
  fast::register_movement(registry);
  fast::register_slice(registry);
  fast::register_gather(registry);
}

}  // namespace kiln::engine::cpu
