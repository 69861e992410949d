#pragma once
// How Attention kernels address their operands: the logical dims [.., L, E] of q, k, v and the output, and
// where each logical element lives in the buffer of the layer tensor (dense, or through an AttentionView made
// by the attention-view pass). Shared by shape inference, the reference, the cpu and the cuda kernels.

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/engine/layers.h"

namespace kiln::engine {

/// One operand of an Attention layer as its kernels see it.
struct AttentionOperand {
  Dims dims;                     // logical dims [.., L, E]
  std::vector<int64_t> strides;  // element strides of the logical dims in the tensor's buffer
  int64_t offset = 0;            // element offset of logical element 0
  int64_t group = 1;             // logical head h (dim -3) is head h / group of the buffer (GQA's k and v)
};

/// Operand `i` (0 q, 1 k, 2 v, 3 output) of a layer with params `p` whose layer tensor has dims `tensor_dims`
/// (known). Without a view: the tensor itself, dense. With p.kv_group > 1, k and v have kv_group times the
/// heads of their tensor (or view), each read kv_group times. The caller has validated the params (shape
/// inference).
AttentionOperand attention_operand(const AttentionParams& p, int i, const Dims& tensor_dims);

/// Row addressing of an operand, for kernels that walk (flat batch index, row, column): row r of batch b
/// starts at offset + (b / heads) * outer + ((b % heads) / group) * inner + r * row, columns have stride 1.
/// heads is the logical dim before L (1 for rank 2), group the operand's (GQA); the dims before it must
/// collapse into one stride (always true for dense operands and rank-4 views).
struct AttentionRows {
  int64_t heads = 1, group = 1, outer = 0, inner = 0, row = 0, offset = 0;
  int64_t start(int64_t b) const { return offset + (b / heads) * outer + ((b % heads) / group) * inner; }
};
AttentionRows attention_rows(const AttentionOperand& op);

/// Checks view `view` of operand `what` over a tensor of dims `tensor_dims` (entries < 0: unknown, then the
/// bounds are checked when the dims are known, at run time): rank 4, known dims, strides >= 0 with the last
/// 1, offset >= 0, every element inside the tensor. Throws kiln::Error naming `what`.
void check_attention_view(const AttentionView& view, const Dims& tensor_dims, const std::string& what);

/// Whether a view's element offsets form a permutation of [0, numel(view.dims)) (offset 0, strides those of a
/// dense layout of its dims in some order): an output view must write every element of its tensor once.
bool attention_view_is_permutation(const AttentionView& view);

}  // namespace kiln::engine
