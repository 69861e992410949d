#include "builder.h"

#include <cmath>

namespace kiln::lowering::detail {

using ir::Argument;
using ir::Value;

std::string Builder::base_of(const std::string& target) {
  const size_t first = target.find('.');
  const size_t second = target.find('.', first + 1);
  return target.substr(first + 1, second - first - 1);
}

Argument Builder::scalar(double value, DType dtype) {
  if ((is_integral(dtype) || dtype == DType::Bool) && std::floor(value) == value) {
    return Argument::int_(static_cast<int64_t>(value));
  }
  return Argument::float_(value);
}

Value* Builder::op(const std::string& target, std::vector<ir::NamedArgument> args, ir::TensorMeta meta,
                   const std::string& base) {
  return emit(graph_, before_, target, std::move(args), std::move(meta), base.empty() ? base_of(target) : base);
}

Value* Builder::unary(const std::string& target, Value* self) {
  return op(target, {named("self", Argument::tensor(self))}, with_sizes(self->meta(), self->meta().sizes), "");
}

Value* Builder::binary(const std::string& target, Value* self, Value* other) {
  return op(target, {named("self", Argument::tensor(self)), named("other", Argument::tensor(other))},
            with_sizes(self->meta(), broadcast_sizes(self->meta().sizes, other->meta().sizes)), "");
}

Value* Builder::add(Value* self, Value* other, double alpha) {
  return op("aten.add.Tensor",
            {named("self", Argument::tensor(self)), named("other", Argument::tensor(other)),
             named("alpha", scalar(alpha, DType::Int64), true)},
            with_sizes(self->meta(), broadcast_sizes(self->meta().sizes, other->meta().sizes)), "");
}

Value* Builder::sub(Value* self, Value* other, double alpha) {
  return op("aten.sub.Tensor",
            {named("self", Argument::tensor(self)), named("other", Argument::tensor(other)),
             named("alpha", scalar(alpha, DType::Int64), true)},
            with_sizes(self->meta(), broadcast_sizes(self->meta().sizes, other->meta().sizes)), "");
}

Value* Builder::add_scalar(Value* self, double other) {
  return op("aten.add.Scalar",
            {named("self", Argument::tensor(self)), named("other", scalar(other, self->meta().dtype)),
             named("alpha", Argument::int_(1))},
            with_sizes(self->meta(), self->meta().sizes), "");
}

Value* Builder::mul_scalar(Value* self, double other) {
  return op("aten.mul.Scalar", {named("self", Argument::tensor(self)), named("other", scalar(other, self->meta().dtype))},
            with_sizes(self->meta(), self->meta().sizes), "");
}

Value* Builder::div_scalar(Value* self, double other) {
  return op("aten.div.Scalar", {named("self", Argument::tensor(self)), named("other", scalar(other, self->meta().dtype))},
            with_sizes(self->meta(), self->meta().sizes), "");
}

Value* Builder::clamp(Value* self, std::optional<double> min, std::optional<double> max) {
  const DType dtype = self->meta().dtype;
  return op("aten.clamp.default",
            {named("self", Argument::tensor(self)), named("min", min ? scalar(*min, dtype) : Argument::none()),
             named("max", max ? scalar(*max, dtype) : Argument::none())},
            with_sizes(self->meta(), self->meta().sizes), "");
}

Value* Builder::permute(Value* self, const std::vector<int64_t>& dims) {
  std::vector<ir::SymExpr> sizes;
  for (int64_t d : dims) sizes.push_back(self->meta().sizes[static_cast<size_t>(d)]);
  return op("aten.permute.default", {named("self", Argument::tensor(self)), named("dims", Argument::ints(dims))},
            with_sizes(self->meta(), sizes), "");
}

Value* Builder::unsqueeze(Value* self, int64_t dim) {
  std::vector<ir::SymExpr> sizes = self->meta().sizes;
  sizes.insert(sizes.begin() + dim, ir::SymExpr(1));
  return op("aten.unsqueeze.default", {named("self", Argument::tensor(self)), named("dim", Argument::int_(dim))},
            with_sizes(self->meta(), sizes), "");
}

Value* Builder::slice(Value* self, int64_t dim, int64_t start, int64_t end, int64_t step) {
  std::vector<ir::SymExpr> sizes = self->meta().sizes;
  sizes[static_cast<size_t>(dim)] = end > start ? (end - start + step - 1) / step : 0;
  return op("aten.slice.Tensor",
            {named("self", Argument::tensor(self)), named("dim", Argument::int_(dim)),
             named("start", Argument::int_(start)), named("end", Argument::int_(end)),
             named("step", Argument::int_(step))},
            with_sizes(self->meta(), sizes), "");
}

Value* Builder::select(Value* self, int64_t dim, int64_t index) {
  std::vector<ir::SymExpr> sizes = self->meta().sizes;
  sizes.erase(sizes.begin() + dim);
  return op("aten.select.int",
            {named("self", Argument::tensor(self)), named("dim", Argument::int_(dim)),
             named("index", Argument::int_(index))},
            with_sizes(self->meta(), sizes), "");
}

Value* Builder::reduce(const std::string& target, Value* self, const std::vector<int64_t>& dims, bool keepdim) {
  return op(target,
            {named("self", Argument::tensor(self)), named("dim", Argument::ints(dims)),
             named("keepdim", Argument::bool_(keepdim)), named("dtype", Argument::none(), true)},
            with_sizes(self->meta(), reduced_sizes(self->meta().sizes, dims, keepdim)), "");
}

Value* Builder::where(Value* condition, Value* self, Value* other, const ir::TensorMeta& meta) {
  return op("aten.where.self",
            {named("condition", Argument::tensor(condition)), named("self", Argument::tensor(self)),
             named("other", Argument::tensor(other))},
            meta, "where");
}

}  // namespace kiln::lowering::detail
