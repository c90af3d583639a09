// Matrix products: MatMul (numpy matmul, batched with broadcasting) and Gemm
// (alpha * op(A) * op(B) + beta * C on 2-D operands).
//
// The contraction dimension K must be equal on both sides. The symbolic batch
// dimension may stand for M, N or any batch dimension; as K it only matches another
// symbolic K, since a symbolic K against a static one would tie the batch size to a
// weight shape.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "graph/op_registry.h"
#include "graph/ops/op_helpers.h"
#include "graph/ops/register_ops.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

constexpr DType kMatMulDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI32, DType::kI64};

absl::Status InferMatMul(InferenceContext& ctx) {
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(1);
  if (a.rank() == 0 || b.rank() == 0) {
    return ctx.Error(absl::StrCat("operands must have rank >= 1 but A is ", a.ToString(), " and B is ", b.ToString()));
  }
  // numpy: a 1-D A is a row [1,K] and a 1-D B a column [K,1]; the added
  // dimension is dropped from the result.
  const int64_t k_a = a.dim(a.rank() - 1);
  const int64_t k_b = b.rank() == 1 ? b.dim(0) : b.dim(b.rank() - 2);
  if (k_a != k_b) {
    return ctx.Error(absl::StrCat("A ", a.ToString(), " and B ", b.ToString(),
                                  " cannot be multiplied: the contraction dimension is ", DimToString(k_a),
                                  " in A but ", DimToString(k_b), " in B"));
  }
  const Shape a_batch(absl::MakeConstSpan(a.dims()).first(std::max(a.rank() - 2, 0)));
  const Shape b_batch(absl::MakeConstSpan(b.dims()).first(std::max(b.rank() - 2, 0)));
  absl::StatusOr<Shape> batch = BroadcastShapes(a_batch, b_batch);
  if (!batch.ok()) {
    return ctx.Error(absl::StrCat("batch dimensions of A ", a.ToString(), " and B ", b.ToString(),
                                  " do not broadcast: ", batch.status().message()));
  }
  Shape out = *std::move(batch);
  if (a.rank() >= 2) out.AddDim(a.dim(a.rank() - 2));
  if (b.rank() >= 2) out.AddDim(b.dim(b.rank() - 1));
  ctx.set_output(0, ctx.input_dtype(0), std::move(out));
  return absl::OkStatus();
}

// One multiply-add per output element and contraction step.
int64_t MatMulFlops(const InferenceContext& ctx) {
  const Shape& a = ctx.input_shape(0);
  return SaturatingProduct({2, OutputElements(ctx), a.dim(a.rank() - 1)});
}

absl::Status InferGemm(InferenceContext& ctx) {
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "transA"));
  TSR_RETURN_IF_ERROR(CheckFlagAttr(ctx, "transB"));
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(1);
  for (int i = 0; i < 2; ++i) {
    if (ctx.input_rank(i) != 2) {
      return ctx.Error(absl::StrCat("input ", i, " ('", i == 0 ? "A" : "B", "') has shape ",
                                    ctx.input_shape(i).ToString(), " but a rank-2 matrix is required"));
    }
  }
  const bool trans_a = ctx.GetInt("transA") == 1;
  const bool trans_b = ctx.GetInt("transB") == 1;
  const int64_t m = a.dim(trans_a ? 1 : 0);
  const int64_t k_a = a.dim(trans_a ? 0 : 1);
  const int64_t k_b = b.dim(trans_b ? 1 : 0);
  const int64_t n = b.dim(trans_b ? 0 : 1);
  if (k_a != k_b) {
    return ctx.Error(absl::StrCat("A ", a.ToString(), " (transA=", trans_a, ") and B ", b.ToString(),
                                  " (transB=", trans_b, ") cannot be multiplied: the contraction dimension is ",
                                  DimToString(k_a), " in A but ", DimToString(k_b), " in B"));
  }
  const Shape out{m, n};
  if (ctx.has_input(2)) {
    // C broadcasts one way only: to [M,N], never the result to C.
    const Shape& c = ctx.input_shape(2);
    bool ok = c.rank() <= 2;
    for (int i = 0; ok && i < c.rank(); ++i) {
      const int64_t d = c.dim(i);
      ok = d == 1 || d == out.dim(2 - c.rank() + i);
    }
    if (!ok) {
      return ctx.Error(
          absl::StrCat("input 2 ('C') has shape ", c.ToString(), " but must broadcast to the result ", out.ToString()));
    }
  }
  ctx.set_output(0, ctx.input_dtype(0), out);
  return absl::OkStatus();
}

// The product only (2*M*N*K); the alpha/beta epilogue is O(M*N) and not counted.
int64_t GemmFlops(const InferenceContext& ctx) {
  const Shape& a = ctx.input_shape(0);
  return SaturatingProduct({2, OutputElements(ctx), a.dim(ctx.GetInt("transA") == 1 ? 0 : 1)});
}

}  // namespace

absl::Status RegisterMatMulOps(OpRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("MatMul")
                                            .Summary("Matrix product with numpy semantics (1-D operands, batch "
                                                     "dimensions broadcast).")
                                            .Input("A", "T")
                                            .Input("B", "T")
                                            .Output("Y", "T")
                                            .TypeConstraint("T", kMatMulDTypes)
                                            .Infer(InferMatMul)
                                            .Flops(MatMulFlops)
                                            .Build()));
  TSR_RETURN_IF_ERROR(registry.Register(OpDefBuilder("Gemm")
                                            .Summary("Y = alpha * op(A) * op(B) + beta * C, op = optional transpose; "
                                                     "C broadcasts to [M,N].")
                                            .Input("A", "T")
                                            .Input("B", "T")
                                            .OptionalInput("C", "T")
                                            .Output("Y", "T")
                                            .TypeConstraint("T", kMatMulDTypes)
                                            .Attr("alpha", AttrType::kFloat, AttrValue::Float(1.0))
                                            .Attr("beta", AttrType::kFloat, AttrValue::Float(1.0))
                                            .Attr("transA", AttrType::kInt, AttrValue::Int(0))
                                            .Attr("transB", AttrType::kInt, AttrValue::Int(0))
                                            .Infer(InferGemm)
                                            .Flops(GemmFlops)
                                            .Build()));
  return absl::OkStatus();
}

}  // namespace tsr
