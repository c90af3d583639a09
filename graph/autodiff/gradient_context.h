// `GradientContext`: what an op's gradient function (OpDef::gradient) sees while
// reverse-mode autodiff (graph/autodiff/gradients.h) visits one forward node: the
// node's attributes (with defaults), its inputs and outputs as builder Outputs, the
// gradients flowing into its outputs, and which inputs want a gradient. It builds
// the gradient nodes with the GraphBuilder (tsr::ops helpers; errors are sticky)
// and sets one gradient per wanted input.
#ifndef TESSERA_GRAPH_AUTODIFF_GRADIENT_CONTEXT_H_
#define TESSERA_GRAPH_AUTODIFF_GRADIENT_CONTEXT_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "graph/attr_reader.h"
#include "graph/builder/graph_builder.h"
#include "graph/graph.h"

namespace tsr {

class GradientContext : public AttrReader {
 public:
  GradientContext(GraphBuilder& builder, const Node& node, std::vector<Output> output_grads,
                  std::vector<bool> wants_input_grad);

  GraphBuilder& b() { return builder_; }
  const Node& node() const { return node_; }

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  // Invalid for an absent optional input.
  Output input(int i) const { return inputs_[i]; }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  Output output(int i) const { return outputs_[i]; }
  // The gradient of the loss w.r.t. output i; invalid when none flows into it.
  Output output_grad(int i) const { return output_grads_[i]; }

  bool wants_input_grad(int i) const { return i < num_inputs() && wants_input_grad_[i]; }
  // The gradient of input i (same dtype, and shape as the input).
  void set_input_grad(int i, Output grad);
  const std::vector<Output>& input_grads() const { return input_grads_; }

  // Records InvalidArgument "gradient of node 'name' (Op): message" in the builder.
  void Error(absl::string_view message);

  // Helpers shared by the gradient functions.
  // `grad` summed over the dimensions numpy broadcasting added or stretched to reach
  // it from `shape` (the inverse of broadcasting), reshaped to `shape`.
  Output SumToShape(Output grad, const Shape& shape);
  // `x` reshaped to `shape` (same element count; the symbolic batch is inferred).
  Output ReshapeTo(Output x, const Shape& shape);
  // A scalar constant of `like`'s dtype.
  Output Scalar(double value, const Output& like);
  // `x` broadcast to `like`'s shape (symbolic batch included) without arithmetic on
  // `like`'s values.
  Output BroadcastLike(Output x, const Output& like);
  // A tensor of `like`'s type filled with zeros (for outputs no gradient reached).
  Output ZerosLike(const Output& like);
  // The product of `x`'s dimensions `axes` as a scalar of `dtype`, computed at run time
  // when one of them is the symbolic batch.
  Output CountOf(const Output& x, const std::vector<int64_t>& axes, DType dtype);

 private:
  GraphBuilder& builder_;
  const Node& node_;
  std::vector<Output> inputs_;
  std::vector<Output> outputs_;
  std::vector<Output> output_grads_;
  std::vector<bool> wants_input_grad_;
  std::vector<Output> input_grads_;
};

}  // namespace tsr

#endif  // TESSERA_GRAPH_AUTODIFF_GRADIENT_CONTEXT_H_
