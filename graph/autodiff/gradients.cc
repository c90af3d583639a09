// The reverse-mode driver: which nodes lie between the requested tensors and the
// loss, the reverse visit, gradient accumulation, and the checks on what each
// gradient function returns.
#include "graph/autodiff/gradients.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "graph/autodiff/gradient_context.h"
#include "graph/autodiff/gradient_registry.h"
#include "graph/builder/ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

using TensorKey = std::pair<int, int>;  // (node id, output index)

bool Floating(const Graph& g, TensorRef ref) {
  const TensorType* t = g.TypeOf(ref);
  return t != nullptr && IsFloating(t->dtype);
}

// Sum of the contributions, in the order they arrived.
Output Sum(GraphBuilder& b, const std::vector<Output>& parts) {
  if (parts.empty()) return Output();
  Output total = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) total = ops::Add(b, total, parts[i]);
  return total;
}

}  // namespace

std::vector<Output> Gradients(GraphBuilder& b, Output loss, const std::vector<Output>& wrt,
                              const GradientOptions& options) {
  std::vector<Output> result(wrt.size());
  if (!b.ok()) return result;
  auto fail = [&](std::string message) {
    b.RecordError(absl::InvalidArgumentError(absl::StrCat("Gradients: ", message)));
    return std::vector<Output>(wrt.size());
  };
  if (!loss.valid() || loss.builder() != &b) return fail("the loss is not a valid Output of this builder");
  for (size_t i = 0; i < wrt.size(); ++i) {
    if (!wrt[i].valid() || wrt[i].builder() != &b) {
      return fail(absl::StrCat("requested tensor ", i, " is not a valid Output of this builder"));
    }
    if (!IsFloating(wrt[i].dtype())) {
      return fail(absl::StrCat("'", wrt[i].name(), "' is ", DTypeName(wrt[i].dtype()),
                               ": only floating-point tensors have gradients"));
    }
  }
  if (!IsFloating(loss.dtype())) {
    return fail(absl::StrCat("the loss '", loss.name(), "' is ", DTypeName(loss.dtype()), ", not floating point"));
  }
  if (!loss.shape().is_static()) {
    return fail(absl::StrCat("the loss '", loss.name(), "' has shape ", loss.shape().ToString(),
                             "; reduce it to a scalar (e.g. ReduceMean) first"));
  }
  const Graph& g = b.graph();
  absl::StatusOr<std::vector<const Node*>> order = g.TopologicalOrder();
  if (!order.ok()) {
    b.RecordError(order.status());
    return result;
  }
  const int num_nodes = g.num_nodes();  // forward nodes; gradient nodes come after

  // Tensors that depend on a requested one through floating-point edges.
  std::vector<std::vector<bool>> depends(num_nodes);
  for (const Node* node : *order) depends[node->id()].assign(node->num_outputs(), false);
  for (const Output& w : wrt) depends[w.ref().node][w.ref().index] = true;
  for (const Node* node : *order) {
    bool any = false;
    for (const TensorRef& in : node->inputs()) {
      if (in.valid() && depends[in.node][in.index] && Floating(g, in)) any = true;
    }
    if (!any) continue;
    for (int i = 0; i < node->num_outputs(); ++i) {
      if (IsFloating(node->output_type(i).dtype)) depends[node->id()][i] = true;
    }
  }
  // Nodes the loss depends on through floating-point edges.
  std::vector<bool> needed(num_nodes, false);
  needed[loss.ref().node] = true;
  for (auto it = order->rbegin(); it != order->rend(); ++it) {
    const Node* node = *it;
    if (!needed[node->id()]) continue;
    for (const TensorRef& in : node->inputs()) {
      if (in.valid() && Floating(g, in)) needed[in.node] = true;
    }
  }

  absl::flat_hash_map<TensorKey, std::vector<Output>> grads;
  auto gradients_scope = b.UniqueScope("gradients");
  // d(sum of loss)/d(loss) = 1.
  grads[{loss.ref().node, loss.ref().index}].push_back(ops::Fill(b, loss.dtype(), loss.shape(), 1.0, "seed"));

  for (auto it = order->rbegin(); it != order->rend() && b.ok(); ++it) {
    const Node& node = **it;
    if (!needed[node.id()]) continue;
    std::vector<Output> out_grads(node.num_outputs());
    bool any_grad = false;
    for (int i = 0; i < node.num_outputs(); ++i) {
      auto found = grads.find({node.id(), i});
      if (found == grads.end()) continue;
      out_grads[i] = Sum(b, found->second);
      any_grad = true;
    }
    if (!any_grad) continue;
    std::vector<bool> wants(node.num_inputs(), false);
    bool any_wanted = false;
    for (int i = 0; i < node.num_inputs(); ++i) {
      const TensorRef in = node.input(i);
      wants[i] = in.valid() && depends[in.node][in.index] && Floating(g, in);
      any_wanted = any_wanted || wants[i];
    }
    if (!any_wanted) continue;
    const OpDef* def = node.op_def();
    if (def == nullptr || !def->gradient) {
      b.RecordError(absl::UnimplementedError(absl::StrCat("Gradients: op '", node.op(), "' (node '", node.name(),
                                                          "') has no gradient function, and the loss '", loss.name(),
                                                          "' depends on a requested tensor through it")));
      break;
    }
    std::vector<GraphBuilder::NameScope> scopes;
    for (absl::string_view part : absl::StrSplit(node.name(), '/', absl::SkipEmpty())) scopes.push_back(b.Scope(part));
    GradientContext ctx(b, node, std::move(out_grads), wants);
    if (absl::Status s = def->gradient(ctx); !s.ok()) {
      b.RecordError(s);
      break;
    }
    if (!b.ok()) break;
    for (int i = 0; i < node.num_inputs(); ++i) {
      const Output grad = ctx.input_grads()[i];
      if (!wants[i] || !grad.valid()) continue;
      const Output input = ctx.input(i);
      if (grad.dtype() != input.dtype() || grad.shape() != input.shape()) {
        b.RecordError(absl::InternalError(
            absl::StrCat("Gradients: the gradient function of op '", node.op(), "' (node '", node.name(),
                         "') produced ", DTypeName(grad.dtype()), grad.shape().ToString(), " for input ", i,
                         " of type ", DTypeName(input.dtype()), input.shape().ToString())));
        break;
      }
      grads[{node.input(i).node, node.input(i).index}].push_back(grad);
    }
  }
  if (!b.ok()) return std::vector<Output>(wrt.size());

  for (size_t i = 0; i < wrt.size(); ++i) {
    auto found = grads.find({wrt[i].ref().node, wrt[i].ref().index});
    if (found != grads.end()) {
      result[i] = Sum(b, found->second);
    } else if (options.allow_unconnected) {
      result[i] = wrt[i].shape().is_static()
                      ? ops::Fill(b, wrt[i].dtype(), wrt[i].shape(), 0.0)
                      : ops::Where(b, ops::Equal(b, wrt[i], wrt[i]), ops::Scalar(b, 0.0, wrt[i].dtype()),
                                   ops::Scalar(b, 0.0, wrt[i].dtype()));
    } else {
      return fail(absl::StrCat("the loss '", loss.name(), "' does not depend on '", wrt[i].name(),
                               "' (set GradientOptions::allow_unconnected for zeros)"));
    }
  }
  if (!b.ok()) return std::vector<Output>(wrt.size());
  return result;
}

absl::Status SetGradient(OpRegistry& registry, absl::string_view op, GradientFn fn) {
  OpDef* def = registry.FindMutable(op);
  if (def == nullptr) return absl::NotFoundError(absl::StrCat("cannot attach a gradient to unknown op '", op, "'"));
  def->gradient = std::move(fn);
  return absl::OkStatus();
}

absl::Status RegisterBuiltinGradients(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(RegisterElementwiseGradients(registry));
  TSR_RETURN_IF_ERROR(RegisterActivationGradients(registry));
  TSR_RETURN_IF_ERROR(RegisterMathGradients(registry));
  TSR_RETURN_IF_ERROR(RegisterMatMulGradients(registry));
  TSR_RETURN_IF_ERROR(RegisterReductionGradients(registry));
  TSR_RETURN_IF_ERROR(RegisterShapeGradients(registry));
  TSR_RETURN_IF_ERROR(RegisterSoftmaxGradients(registry));
  TSR_RETURN_IF_ERROR(RegisterConvGradients(registry));
  TSR_RETURN_IF_ERROR(RegisterPoolGradients(registry));
  TSR_RETURN_IF_ERROR(RegisterNormalizationGradients(registry));
  TSR_RETURN_IF_ERROR(RegisterIndexingGradients(registry));
  TSR_RETURN_IF_ERROR(RegisterRandomGradients(registry));
  return absl::OkStatus();
}

}  // namespace tsr
