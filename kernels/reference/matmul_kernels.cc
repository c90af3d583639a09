// Reference MatMul (numpy semantics: 1-D operands, broadcast batch dimensions) and
// Gemm (alpha * op(A) * op(B) + beta * C) kernels: plain loops that accumulate in
// double (int64 for integer dtypes), the oracle optimized kernels are tested against.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/kernel.h"
#include "kernels/matmul_geometry.h"
#include "kernels/reference/convert.h"
#include "kernels/register_kernels.h"

namespace tsr {

namespace {

constexpr DType kFloatKernelDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};
constexpr DType kIntKernelDTypes[] = {DType::kI32, DType::kI64};

template <typename T>
constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// All elements of `t` widened to Acc (double or int64).
template <typename Acc>
std::vector<Acc> Widen(const Tensor& t) {
  std::vector<Acc> out(static_cast<size_t>(t.num_elements()));
  VisitDType(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) {
      if constexpr (kIsHalf<T>) {
        out[i] = static_cast<Acc>(p[i].ToFloat());
      } else {
        out[i] = static_cast<Acc>(p[i]);
      }
    }
  });
  return out;
}

// Narrows `values` into `t` (floats round as kernels/reference/convert.h says; integers wrap).
template <typename Acc>
void Narrow(const std::vector<Acc>& values, Tensor& t) {
  VisitDType(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) {
      if constexpr (std::is_integral_v<Acc> && std::is_integral_v<T>) {
        p[i] = static_cast<T>(values[i]);  // two's-complement wrap (C++20)
      } else {
        p[i] = reference::FromDouble<T>(static_cast<double>(values[i]));
      }
    }
  });
}

// sum + a * b; integers wrap on overflow (computed unsigned, so it is defined).
template <typename Acc>
Acc MulAdd(Acc sum, Acc a, Acc b) {
  if constexpr (std::is_integral_v<Acc>) {
    return static_cast<Acc>(static_cast<uint64_t>(sum) + static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return sum + a * b;
  }
}

// Y[batch..., M, N] = sum_k A[batch..., M, K] * B[batch..., K, N] with numpy's
// promotion of 1-D operands and broadcasting of the batch dimensions.
template <typename Acc>
absl::Status MatMulKernel(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  TSR_ASSIGN_OR_RETURN(const MatMulGeometry g, ComputeMatMulGeometry(ctx));
  const int64_t m = g.m, n = g.n, k = g.k;
  Tensor& y = ctx.output(0);
  const std::vector<Acc> av = Widen<Acc>(a);
  const std::vector<Acc> bv = Widen<Acc>(b);
  std::vector<Acc> yv(static_cast<size_t>(y.num_elements()), Acc{0});
  for (int64_t p = 0; p < g.batch_count(); ++p) {
    const int64_t a_off = g.a_offset[p], b_off = g.b_offset[p];
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        Acc sum{0};
        for (int64_t t = 0; t < k; ++t) sum = MulAdd(sum, av[a_off + i * k + t], bv[b_off + t * n + j]);
        yv[(p * m + i) * n + j] = sum;
      }
    }
  }
  Narrow(yv, y);
  return absl::OkStatus();
}

// Y = alpha * op(A) op(B) + beta * C; the products are summed in Acc and the
// epilogue is computed in double (alpha and beta are floats even for integer dtypes).
template <typename Acc>
absl::Status GemmKernel(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const bool trans_a = ctx.GetInt("transA") == 1;
  const bool trans_b = ctx.GetInt("transB") == 1;
  const double alpha = ctx.GetFloat("alpha");
  const double beta = ctx.GetFloat("beta");
  const int64_t m = a.shape().dim(trans_a ? 1 : 0);
  const int64_t k = a.shape().dim(trans_a ? 0 : 1);
  const int64_t n = b.shape().dim(trans_b ? 0 : 1);
  if (b.shape().dim(trans_b ? 1 : 0) != k) {
    return ctx.Error(absl::StrCat("A ", a.shape().ToString(), " and B ", b.shape().ToString(),
                                  " have different contraction dimensions"));
  }
  const std::vector<Acc> av = Widen<Acc>(a);
  const std::vector<Acc> bv = Widen<Acc>(b);
  std::vector<double> cv;
  int64_t c_rows = 1, c_cols = 1;
  if (ctx.has_input(2)) {
    const Tensor& c = ctx.input(2);
    cv = Widen<double>(c);
    if (c.shape().rank() == 2) {
      c_rows = c.shape().dim(0);
      c_cols = c.shape().dim(1);
    } else if (c.shape().rank() == 1) {
      c_cols = c.shape().dim(0);
    }
  }
  std::vector<Acc> yv(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      Acc sum{0};
      for (int64_t t = 0; t < k; ++t) {
        const Acc x = av[trans_a ? t * m + i : i * k + t];
        const Acc w = bv[trans_b ? j * k + t : t * n + j];
        sum = MulAdd(sum, x, w);
      }
      double v = alpha * static_cast<double>(sum);
      if (!cv.empty()) v += beta * cv[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)];
      if constexpr (std::is_integral_v<Acc>) {
        yv[i * n + j] = reference::FromDouble<Acc>(v);  // truncates, saturating
      } else {
        yv[i * n + j] = v;
      }
    }
  }
  Narrow(yv, ctx.output(0));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReferenceMatMulKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("MatMul", kReferenceDevice, kFloatKernelDTypes, MatMulKernel<double>));
  TSR_RETURN_IF_ERROR(registry.Register("MatMul", kReferenceDevice, kIntKernelDTypes, MatMulKernel<int64_t>));
  TSR_RETURN_IF_ERROR(registry.Register("Gemm", kReferenceDevice, kFloatKernelDTypes, GemmKernel<double>));
  TSR_RETURN_IF_ERROR(registry.Register("Gemm", kReferenceDevice, kIntKernelDTypes, GemmKernel<int64_t>));
  return absl::OkStatus();
}

}  // namespace tsr
