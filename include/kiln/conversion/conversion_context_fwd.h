#pragma once
// Forward declarations for converter signatures, so the registry can name a converter's type before the
// interpreter defines what a converter receives.
//
// A converter is called by the interpreter once per node of an engine segment, in topological order. It gets
// the ConversionContext (network being built, settings, weight refit map), the node, and the node's arguments
// as the interpreter resolved them (ConverterArgs: engine tensors, frozen weights or scalars, one per schema
// argument). It returns one engine tensor per node output (nullptr for an output it does not produce).
// ConversionContext and ConverterArgs are defined by the conversion interpreter; nothing here needs them to be
// complete, so the registry and partitioning compile without the engine.

#include <functional>
#include <vector>

namespace kiln::engine {
class Tensor;
}  // namespace kiln::engine

namespace kiln::ir {
class Node;
}  // namespace kiln::ir

namespace kiln::conversion {

class ConversionContext;
class ConverterArgs;

/// The converter implementation signature.
using ConverterImpl =
    std::function<std::vector<engine::Tensor*>(ConversionContext&, const ir::Node&, const ConverterArgs&)>;

}  // namespace kiln::conversion
