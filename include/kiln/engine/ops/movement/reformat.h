#pragma once
// Reformat layers (made by the builder): a change of memory format between kernels.

#include "kiln/engine/ops/params.h"
#include "kiln/engine/ops/tensor_format.h"

namespace kiln::engine {

/// A change of memory format (made by the builder, never by users): the output holds the input's values in
/// format `to`; the input is in format `from`. Dims and dtype are kept.
struct ReformatParams {
  TensorFormat from = TensorFormat::Plain;
  TensorFormat to = TensorFormat::Plain;
  KILN_VISIT_FIELDS(v("from", from); v("to", to))
};

}  // namespace kiln::engine
