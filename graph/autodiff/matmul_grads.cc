// Gradients of MatMul (numpy semantics: 1-D operands promoted, batch dimensions
// broadcast) and Gemm (transposes, alpha, beta, broadcast C).
#include <numeric>
#include <vector>

#include "graph/autodiff/gradient_context.h"
#include "graph/autodiff/gradient_registry.h"
#include "graph/builder/ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// x with its last two dimensions swapped.
Output SwapLastTwo(GraphBuilder& b, Output x) {
  std::vector<int64_t> perm(x.rank());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return ops::Transpose(b, x, perm);
}

// Y = A @ B. With A and B promoted to matrices (a 1-D A is a row [1, k], a 1-D B a
// column [k, 1]) and dY given back the dimensions the promotion removed:
// dA = dY @ B^T and dB = A^T @ dY, each summed over the batch dimensions its operand
// was broadcast along.
absl::Status MatMulGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output a = ctx.input(0), w = ctx.input(1);
  const bool a_vector = a.rank() == 1, w_vector = w.rank() == 1;
  const Output a2 = a_vector ? ops::Unsqueeze(b, a, std::vector<int64_t>{0}) : a;
  const Output w2 = w_vector ? ops::Unsqueeze(b, w, std::vector<int64_t>{1}) : w;
  Output dy = ctx.output_grad(0);
  if (a_vector) dy = ops::Unsqueeze(b, dy, std::vector<int64_t>{w_vector ? 0 : -2});
  if (w_vector) dy = ops::Unsqueeze(b, dy, std::vector<int64_t>{-1});
  if (ctx.wants_input_grad(0)) {
    const Output da = ctx.SumToShape(ops::MatMul(b, dy, SwapLastTwo(b, w2)), a2.shape());
    ctx.set_input_grad(0, ctx.ReshapeTo(da, a.shape()));
  }
  if (ctx.wants_input_grad(1)) {
    const Output dw = ctx.SumToShape(ops::MatMul(b, SwapLastTwo(b, a2), dy), w2.shape());
    ctx.set_input_grad(1, ctx.ReshapeTo(dw, w.shape()));
  }
  return absl::OkStatus();
}

// Y = alpha op(A) op(B) + beta C, with op(X) = X or X^T:
//   d op(A) = alpha dY op(B)^T,  d op(B) = alpha op(A)^T dY,  dC = beta dY (summed to C),
// each written as one Gemm whose transposes absorb the ones of the forward.
absl::Status GemmGrad(GradientContext& ctx) {
  GraphBuilder& b = ctx.b();
  const Output a = ctx.input(0), w = ctx.input(1), dy = ctx.output_grad(0);
  const bool ta = ctx.GetInt("transA") == 1, tb = ctx.GetInt("transB") == 1;
  const double alpha = ctx.GetFloat("alpha"), beta = ctx.GetFloat("beta");
  if (ctx.wants_input_grad(0)) {
    ctx.set_input_grad(0, ta ? ops::Gemm(b, w, dy, {.alpha = alpha, .trans_a = tb, .trans_b = true})
                             : ops::Gemm(b, dy, w, {.alpha = alpha, .trans_b = !tb}));
  }
  if (ctx.wants_input_grad(1)) {
    ctx.set_input_grad(1, tb ? ops::Gemm(b, dy, a, {.alpha = alpha, .trans_a = true, .trans_b = ta})
                             : ops::Gemm(b, a, dy, {.alpha = alpha, .trans_a = !ta}));
  }
  if (ctx.num_inputs() > 2 && ctx.wants_input_grad(2)) {
    const Output scaled = beta == 1.0 ? dy : ops::Mul(b, dy, ctx.Scalar(beta, dy));
    ctx.set_input_grad(2, ctx.SumToShape(scaled, ctx.input(2).shape()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterMatMulGradients(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(SetGradient(registry, "MatMul", MatMulGrad));
  TSR_RETURN_IF_ERROR(SetGradient(registry, "Gemm", GemmGrad));
  return absl::OkStatus();
}

}  // namespace tsr
