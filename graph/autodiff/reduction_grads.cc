// Gradients of the reductions: the output gradient is given back the reduced
// dimensions (as size 1) and broadcast over them; Mean divides by the count (read at
// run time when the symbolic batch was reduced), Max/Min send it to the elements
// equal to the result, split between ties; Prod multiplies by the other elements'
// product without dividing by zeros. L1, SumSquare, LogSum and LogSumExp scale the
// broadcast gradient by sign(x), 2x, 1/sum and exp(x - y). When no axes are given and
// noop_with_empty_axes=1, every Reduce* is the identity (as its kernel is), and so is
// its gradient.
//
// CumSum's gradient is the CumSum of dy the other way round (same exclusive, reverse
// flipped); TopK's scatters dValues back to the selected indices.
//
// Einsum: the gradient of input i is the Einsum of dY with the other inputs onto
// input i's labels ("ij,jk->ik" gives dA = "ik,jk->ij"); labels of input i that
// occur nowhere else were summed out, so the result is broadcast back over them.
// Terms with a repeated label (diagonals) or an ellipsis are not differentiable yet:
// an error names them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/autodiff/gradient_context.h"
#include "graph/autodiff/gradient_registry.h"
#include "graph/builder/ops.h"
#include "graph/ops/einsum_equation.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// The normalized reduced axes of the node; nullopt when the node is the identity
// (no axes and noop_with_empty_axes=1). Axes come from the constant input 1 (the
// shape function already required it constant).
std::optional<std::vector<int64_t>> ReducedAxes(GradientContext& ctx) {
  const int rank = ctx.input(0).rank();
  std::vector<int64_t> axes;
  const Tensor* value =
      ctx.num_inputs() > 1 && ctx.input(1).valid() ? ctx.b().graph().ConstantValue(ctx.input(1).ref()) : nullptr;
  if (value != nullptr) {
    for (int64_t i = 0; i < value->num_elements(); ++i) {
      int64_t a = value->GetAsInt64(i);
      axes.push_back(a < 0 ? a + rank : a);
    }
  }
  if (axes.empty()) {
    if (ctx.GetInt("noop_with_empty_axes") == 1) return std::nullopt;
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  return axes;
}

// The input's shape with the reduced axes set to 1 (what keepdims=1 gives).
Shape KeptShape(const Shape& in, const std::vector<int64_t>& axes) {
  Shape kept = in;
  for (int64_t a : axes) kept.set_dim(static_cast<int>(a), 1);
  return kept;
}

// `y` (an output or its gradient) in the keepdims=1 layout.
Output Kept(GradientContext& ctx, Output y, const std::vector<int64_t>& axes) {
  return ctx.ReshapeTo(y, KeptShape(ctx.input(0).shape(), axes));
}

absl::Status ReduceSumGrad(GradientContext& ctx) {
  std::optional<std::vector<int64_t>> axes = ReducedAxes(ctx);
  if (!axes) {
    ctx.set_input_grad(0, ctx.output_grad(0));
    return absl::OkStatus();
  }
  ctx.set_input_grad(0, ctx.BroadcastLike(Kept(ctx, ctx.output_grad(0), *axes), ctx.input(0)));
  return absl::OkStatus();
}

absl::Status ReduceMeanGrad(GradientContext& ctx) {
  std::optional<std::vector<int64_t>> axes = ReducedAxes(ctx);
  if (!axes) {
    ctx.set_input_grad(0, ctx.output_grad(0));
    return absl::OkStatus();
  }
  const Output x = ctx.input(0);
  const Output share = ops::Div(ctx.b(), Kept(ctx, ctx.output_grad(0), *axes), ctx.CountOf(x, *axes, x.dtype()));
  ctx.set_input_grad(0, ctx.BroadcastLike(share, x));
  return absl::OkStatus();
}

absl::Status ReduceExtremumGrad(GradientContext& ctx) {
  std::optional<std::vector<int64_t>> axes = ReducedAxes(ctx);
  if (!axes) {
    ctx.set_input_grad(0, ctx.output_grad(0));
    return absl::OkStatus();
  }
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0);
  const Output zero = ctx.Scalar(0.0, x), one = ctx.Scalar(1.0, x);
  const Output hit = ops::Equal(b, x, Kept(ctx, ctx.output(0), *axes));
  const Output ties = ops::ReduceSum(b, ops::Where(b, hit, one, zero), *axes, /*keepdims=*/true);
  const Output share = ops::Div(b, Kept(ctx, ctx.output_grad(0), *axes), ties);
  ctx.set_input_grad(0, ops::Where(b, hit, share, zero));
  return absl::OkStatus();
}

// y = sqrt(sum x^2): dx = dy x / y (0 where y = 0, the subgradient).
absl::Status ReduceL2Grad(GradientContext& ctx) {
  std::optional<std::vector<int64_t>> axes = ReducedAxes(ctx);
  if (!axes) {
    ctx.set_input_grad(0, ctx.output_grad(0));
    return absl::OkStatus();
  }
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), zero = ctx.Scalar(0.0, x);
  const Output y = Kept(ctx, ctx.output(0), *axes);
  const Output ratio = ops::Div(b, Kept(ctx, ctx.output_grad(0), *axes), y);
  const Output dx = ops::Mul(b, x, ratio);
  ctx.set_input_grad(0, ops::Where(b, ops::Equal(b, y, zero), zero, dx));
  return absl::OkStatus();
}

// y = prod x: dx_i = dy * (product of the others). Dividing y by x_i fails at zeros,
// so with p = the product of the non-zero elements and z = how many are zero:
//   z = 0: dx_i = dy p / x_i;   z = 1: dx_i = dy p at the zero, 0 elsewhere;   z > 1: 0.
absl::Status ReduceProdGrad(GradientContext& ctx) {
  std::optional<std::vector<int64_t>> axes = ReducedAxes(ctx);
  if (!axes) {
    ctx.set_input_grad(0, ctx.output_grad(0));
    return absl::OkStatus();
  }
  GraphBuilder& b = ctx.b();
  const Output x = ctx.input(0), zero = ctx.Scalar(0.0, x), one = ctx.Scalar(1.0, x);
  const Output is_zero = ops::Equal(b, x, zero);
  const Output nonzero_x = ops::Where(b, is_zero, one, x);
  const Output zeros = ops::ReduceSum(b, ops::Where(b, is_zero, one, zero), *axes, /*keepdims=*/true);
  const Output p = ops::Mul(b, ops::ReduceProd(b, nonzero_x, *axes, /*keepdims=*/true),
                            Kept(ctx, ctx.output_grad(0), *axes));  // dy * p
  const Output at_zero = ops::Where(b, ops::Equal(b, zeros, one), p, zero);
  const Output elsewhere = ops::Where(b, ops::Equal(b, zeros, zero), ops::Div(b, p, nonzero_x), zero);
  ctx.set_input_grad(0, ops::Where(b, is_zero, ctx.BroadcastLike(at_zero, x), elsewhere));
  return absl::OkStatus();
}

// dx = Broadcast(dy) * factor(x, y), with x the input and y the output in the
// keepdims layout; the identity reduction passes dy through.
template <typename Factor>
absl::Status ScaledReduceGrad(GradientContext& ctx, Factor factor) {
  std::optional<std::vector<int64_t>> axes = ReducedAxes(ctx);
  if (!axes) {
    ctx.set_input_grad(0, ctx.output_grad(0));
    return absl::OkStatus();
  }
  const Output x = ctx.input(0);
  const Output dy = ctx.BroadcastLike(Kept(ctx, ctx.output_grad(0), *axes), x);
  ctx.set_input_grad(0, ops::Mul(ctx.b(), dy, factor(x, Kept(ctx, ctx.output(0), *axes))));
  return absl::OkStatus();
}

// y = sum |x|: dx = dy sign(x) (0 at x = 0, the subgradient).
absl::Status ReduceL1Grad(GradientContext& ctx) {
  return ScaledReduceGrad(ctx, [&](Output x, Output) {
    GraphBuilder& b = ctx.b();
    const Output zero = ctx.Scalar(0.0, x);
    const Output positive = ops::Where(b, ops::Greater(b, x, zero), ctx.Scalar(1.0, x), zero);
    return ops::Where(b, ops::Less(b, x, zero), ctx.Scalar(-1.0, x), positive);
  });
}

absl::Status ReduceSumSquareGrad(GradientContext& ctx) {
  return ScaledReduceGrad(ctx, [&](Output x, Output) { return ops::Mul(ctx.b(), x, ctx.Scalar(2.0, x)); });
}

// y = log(sum x): dx = dy / sum x = dy / exp(y).
absl::Status ReduceLogSumGrad(GradientContext& ctx) {
  return ScaledReduceGrad(ctx, [&](Output, Output y) { return ops::Exp(ctx.b(), ops::Neg(ctx.b(), y)); });
}

// y = log(sum exp x): dx = dy exp(x - y) (the softmax over the reduced axes).
absl::Status ReduceLogSumExpGrad(GradientContext& ctx) {
  return ScaledReduceGrad(ctx, [&](Output x, Output y) { return ops::Exp(ctx.b(), ops::Sub(ctx.b(), x, y)); });
}

// Each y_j sums x_i over i <= j (or < j, or >= j, > j); so dx_i sums dy_j over the
// mirrored range: the same scan with `reverse` flipped.
absl::Status CumSumGrad(GradientContext& ctx) {
  AttrMap attrs;
  attrs["exclusive"] = AttrValue::Int(ctx.GetInt("exclusive"));
  attrs["reverse"] = AttrValue::Int(ctx.GetInt("reverse") == 1 ? 0 : 1);
  ctx.set_input_grad(0, ctx.b().Op1("CumSum", {ctx.output_grad(0), ctx.input(1)}, std::move(attrs)));
  return absl::OkStatus();
}

// Values = x at Indices along the axis: dx is dValues scattered to those positions
// (distinct within each line), zero elsewhere.
absl::Status TopKGrad(GradientContext& ctx) {
  const Output dvalues = ctx.output_grad(0);
  if (!dvalues.valid()) return absl::OkStatus();
  const Output x = ctx.input(0);
  ctx.set_input_grad(
      0, ops::ScatterElements(ctx.b(), ctx.ZerosLike(x), ctx.output(1), dvalues, ctx.GetInt("axis"), "none"));
  return absl::OkStatus();
}

// The letters of `term` as a string ("..." for the ellipsis).
std::string TermString(const EinsumEquation& eq, const std::vector<int>& term) {
  std::string out;
  for (int id : term) out += id == EinsumEquation::kEllipsis ? std::string("...") : std::string(1, eq.letters[id]);
  return out;
}

absl::Status EinsumGrad(GradientContext& ctx) {
  absl::StatusOr<EinsumEquation> eq = EinsumEquation::Parse(ctx.GetString("equation"), ctx.num_inputs());
  if (!eq.ok()) {
    ctx.Error(eq.status().message());
    return absl::OkStatus();
  }
  auto plain = [](const std::vector<int>& term) {
    for (size_t a = 0; a < term.size(); ++a) {
      if (term[a] == EinsumEquation::kEllipsis) return false;
      for (size_t c = a + 1; c < term.size(); ++c) {
        if (term[a] == term[c]) return false;
      }
    }
    return true;
  };
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.wants_input_grad(i)) continue;
    const std::vector<int>& mine = eq->inputs[i];
    if (!plain(mine) || !plain(eq->output)) {
      ctx.Error(absl::StrCat("the gradient of Einsum '", ctx.GetString("equation"),
                             "' is not supported: input and output terms with a repeated label or '...' are not "
                             "differentiable yet"));
      return absl::OkStatus();
    }
    // Operands of the gradient Einsum: dY, then the other inputs.
    std::vector<Output> operands = {ctx.output_grad(0)};
    std::vector<std::string> terms = {TermString(*eq, eq->output)};
    std::vector<bool> available(eq->letters.size(), false);
    for (int id : eq->output) available[id] = true;
    for (int j = 0; j < ctx.num_inputs(); ++j) {
      if (j == i) continue;
      operands.push_back(ctx.input(j));
      terms.push_back(TermString(*eq, eq->inputs[j]));
      for (int id : eq->inputs[j]) {
        if (id != EinsumEquation::kEllipsis) available[id] = true;
      }
    }
    // Input i's labels that can be produced; the others get size 1, then broadcast.
    std::vector<int> kept;
    Shape kept_shape;
    const Shape& shape = ctx.input(i).shape();
    for (size_t a = 0; a < mine.size(); ++a) {
      if (available[mine[a]]) kept.push_back(mine[a]);
      kept_shape.AddDim(available[mine[a]] ? shape.dim(static_cast<int>(a)) : 1);
    }
    const std::string equation = absl::StrCat(absl::StrJoin(terms, ","), "->", TermString(*eq, kept));
    Output grad = ops::Einsum(ctx.b(), operands, equation);
    if (kept.size() != mine.size()) grad = ctx.BroadcastLike(ctx.ReshapeTo(grad, kept_shape), ctx.input(i));
    ctx.set_input_grad(i, grad);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReductionGradients(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ReduceSum", ReduceSumGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ReduceMean", ReduceMeanGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ReduceMax", ReduceExtremumGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ReduceMin", ReduceExtremumGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ReduceL2", ReduceL2Grad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ReduceProd", ReduceProdGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ReduceL1", ReduceL1Grad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ReduceSumSquare", ReduceSumSquareGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ReduceLogSum", ReduceLogSumGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "ReduceLogSumExp", ReduceLogSumExpGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "CumSum", CumSumGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "TopK", TopKGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Einsum", EinsumGrad));
  return absl::OkStatus();
}

}  // namespace tsr
