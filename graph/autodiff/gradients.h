// Reverse-mode automatic differentiation over the graph: `Gradients` adds to the graph
// being built the nodes that compute d(loss)/d(x) for each requested tensor x, by
// visiting the nodes between them in reverse topological order and calling each op's
// gradient function (OpDef::gradient; see gradient_context.h), summing the gradients
// of tensors read by several consumers.
//
//   GraphBuilder b;  ... Output loss = ops::SoftmaxCrossEntropyLoss(b, logits, labels);
//   std::vector<Output> grads = Gradients(b, loss, {w1, b1, w2, b2});
//
// Gradients flow only through floating-point tensors. New nodes are named
// "gradients/<forward node name>/...". Errors (recorded in the builder, sticky) name
// the op without a gradient function and the tensor the gradient was needed for, or
// the requested tensor the loss does not depend on.
#ifndef TESSERA_GRAPH_AUTODIFF_GRADIENTS_H_
#define TESSERA_GRAPH_AUTODIFF_GRADIENTS_H_

#include <vector>

#include "absl/status/status.h"
#include "graph/builder/graph_builder.h"

namespace tsr {

class OpRegistry;

struct GradientOptions {
  // A requested tensor the loss does not depend on gets zeros instead of an error.
  bool allow_unconnected = false;
};

// `loss` must be floating point with a static shape (usually a scalar); a non-scalar
// loss is differentiated as the sum of its elements. One gradient per `wrt`, of the
// same type; invalid Outputs after an error.
std::vector<Output> Gradients(GraphBuilder& b, Output loss, const std::vector<Output>& wrt,
                              const GradientOptions& options = {});

// Attaches the gradient functions of the built-in ops (called by OpRegistry::Global()).
absl::Status RegisterBuiltinGradients(OpRegistry& registry);

}  // namespace tsr

#endif  // TESSERA_GRAPH_AUTODIFF_GRADIENTS_H_
