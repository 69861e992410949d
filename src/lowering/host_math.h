#pragma once
// Host tensor arithmetic for constant folding and weight folding (double precision, converted to the result
// dtype). Small and simple: it runs once per weight at compile time.

#include <functional>
#include <vector>

#include "kiln/support/host_tensor.h"

namespace kiln::lowering::detail {

/// Permutes dimensions (dims is a permutation of 0..rank-1).
HostTensor host_permute(const HostTensor& t, const std::vector<int64_t>& dims);
/// Broadcasts to `sizes` (numpy rules).
HostTensor host_expand(const HostTensor& t, const std::vector<int64_t>& sizes);
/// Applies `fn` elementwise with broadcasting; the result has dtype `out`.
HostTensor host_binary(const HostTensor& a, const HostTensor& b, DType out,
                       const std::function<double(double, double)>& fn);
/// Applies `fn` to every element; the result has dtype `out`.
HostTensor host_unary(const HostTensor& t, DType out, const std::function<double(double)>& fn);
/// Elements start, start+step, ... < end along `dim` (bounds already normalized to [0, size]).
HostTensor host_slice(const HostTensor& t, int64_t dim, int64_t start, int64_t end, int64_t step);
/// Concatenates along `dim`.
HostTensor host_cat(const std::vector<HostTensor>& ts, int64_t dim, DType out);
/// Broadcast shape of two static shapes; throws kiln::Error(InvalidInput) when they do not broadcast.
std::vector<int64_t> broadcast_static(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

}  // namespace kiln::lowering::detail
