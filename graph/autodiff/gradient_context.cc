// GradientContext: the view of one forward node, and the helpers gradient functions share.
#include "graph/autodiff/gradient_context.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "graph/builder/ops.h"

namespace tsr {

GradientContext::GradientContext(GraphBuilder& builder, const Node& node, std::vector<Output> output_grads,
                                 std::vector<bool> wants_input_grad)
    : AttrReader(*node.op_def(), node.attrs()),
      builder_(builder),
      node_(node),
      output_grads_(std::move(output_grads)),
      wants_input_grad_(std::move(wants_input_grad)),
      input_grads_(node.num_inputs()) {
  for (const TensorRef& in : node.inputs()) inputs_.push_back(in.valid() ? builder.Wrap(in) : Output());
  for (int i = 0; i < node.num_outputs(); ++i) outputs_.push_back(builder.Wrap(node.output(i)));
}

void GradientContext::set_input_grad(int i, Output grad) {
  if (i < 0 || i >= num_inputs()) {
    Error(absl::StrCat("the gradient function set input ", i, " of ", num_inputs()));
    return;
  }
  input_grads_[i] = grad;
}

void GradientContext::Error(absl::string_view message) {
  builder_.RecordError(
      absl::InvalidArgumentError(absl::StrCat("gradient of node '", node_.name(), "' (", node_.op(), "): ", message)));
}

namespace {

// `shape` as a Reshape target: the symbolic batch becomes -1 (inferred). Empty when
// more than one dimension is symbolic.
std::optional<std::vector<int64_t>> ReshapeTarget(const Shape& shape) {
  std::vector<int64_t> dims(shape.dims().begin(), shape.dims().end());
  int symbolic = 0;
  for (int64_t& d : dims) {
    if (d == kBatchDim) {
      d = -1;
      ++symbolic;
    }
  }
  if (symbolic > 1) return std::nullopt;
  return dims;
}

}  // namespace

Output GradientContext::SumToShape(Output grad, const Shape& shape) {
  if (!grad.valid()) return grad;
  const Shape& from = grad.shape();
  if (from == shape) return grad;
  const int offset = from.rank() - shape.rank();
  if (offset < 0) {
    Error(
        absl::StrCat("cannot sum a gradient of shape ", from.ToString(), " to the larger rank of ", shape.ToString()));
    return Output();
  }
  std::vector<int64_t> axes;
  for (int i = 0; i < from.rank(); ++i) {
    if (i < offset || (shape.dim(i - offset) == 1 && from.dim(i) != 1)) axes.push_back(i);
  }
  return ReshapeTo(axes.empty() ? grad : ops::ReduceSum(b(), grad, axes, /*keepdims=*/true), shape);
}

Output GradientContext::ReshapeTo(Output x, const Shape& shape) {
  if (!x.valid() || x.shape() == shape) return x;
  std::optional<std::vector<int64_t>> target = ReshapeTarget(shape);
  if (!target.has_value()) {
    Error(absl::StrCat("cannot reshape a gradient to ", shape.ToString(), ": more than one symbolic dimension"));
    return Output();
  }
  return ops::Reshape(b(), x, *target);
}

Output GradientContext::Scalar(double value, const Output& like) { return ops::Scalar(b(), value, like.dtype()); }

Output GradientContext::BroadcastLike(Output x, const Output& like) {
  if (!x.valid() || !like.valid()) return Output();
  if (x.shape() == like.shape()) return x;
  const Shape& target = like.shape();
  // Expand broadcasts a 1 in its shape argument against any size, so a symbolic
  // batch can stay in x when x already carries it at that position.
  bool expandable = target.rank() >= x.rank();
  std::vector<int64_t> dims(target.dims().begin(), target.dims().end());
  for (int i = 0; expandable && i < target.rank(); ++i) {
    if (dims[i] != kBatchDim) continue;
    const int xi = i - (target.rank() - x.rank());
    if (xi < 0 || x.shape().dim(xi) != kBatchDim) expandable = false;
    dims[i] = 1;
  }
  if (expandable) return ops::Expand(b(), x, dims);
  // Where(cond, x, x) has the broadcast shape of cond and x, and x's values: cond
  // only contributes its (run-time) shape.
  Output cond = ops::Equal(b(), like, like);
  return ops::Where(b(), cond, x, x);
}

Output GradientContext::ZerosLike(const Output& like) {
  if (!like.valid()) return Output();
  if (like.shape().is_static()) return ops::Fill(b(), like.dtype(), like.shape(), 0.0);
  return BroadcastLike(Scalar(0.0, like), like);
}

Output GradientContext::CountOf(const Output& x, const std::vector<int64_t>& axes, DType dtype) {
  if (!x.valid()) return Output();
  double count = 1;
  bool symbolic = false;
  for (int64_t a : axes) {
    const int64_t d = x.shape().dim(static_cast<int>(a));
    if (d == kBatchDim) {
      symbolic = true;
    } else {
      count *= static_cast<double>(d);
    }
  }
  if (!symbolic) return ops::Scalar(b(), count, dtype);
  Output dims = ops::Gather(b(), ops::Shape(b(), x), ops::Const(b(), axes));
  return ops::Cast(b(), ops::ReduceProd(b(), dims, std::vector<int64_t>{0}, /*keepdims=*/false), dtype);
}

}  // namespace tsr
