// CPU MatMul (numpy semantics: 1-D operands, broadcast batch dimensions) and Gemm
// (alpha * op(A) op(B) + beta * C, C broadcast to [M,N]) kernels for f32, on Sgemm.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm.h"
#include "kernels/kernel.h"
#include "kernels/matmul_geometry.h"

namespace tsr {

namespace {

absl::Status MatMulKernel(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  TSR_ASSIGN_OR_RETURN(const MatMulGeometry g, ComputeMatMulGeometry(ctx));
  const int64_t m = g.m, n = g.n, k = g.k, batch_count = g.batch_count();
  Tensor& y = ctx.output(0);
  const float* a_data = a.data<float>();
  const float* b_data = b.data<float>();
  float* y_data = y.data<float>();
  auto run = [&](int64_t p, const GemmOptions& options) {
    Sgemm(false, false, m, n, k, 1.0f, a_data + g.a_offset[p], k, b_data + g.b_offset[p], n, 0.0f, y_data + p * m * n,
          n, options);
  };
  // Small products: split over the batch, one single-threaded Sgemm per item;
  // large ones: one Sgemm at a time, each split over the threads.
  const int64_t flops = 2 * m * n * k;
  if (batch_count > 1 && flops < (1 << 22)) {
    ctx.ParallelFor(batch_count, flops, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) run(p, GemmOptions{});
    });
  } else {
    GemmOptions options;
    options.parallel_for = ctx.parallel_for();
    for (int64_t p = 0; p < batch_count; ++p) run(p, options);
  }
  return absl::OkStatus();
}

absl::Status GemmKernel(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const bool trans_a = ctx.GetInt("transA") == 1;
  const bool trans_b = ctx.GetInt("transB") == 1;
  const float alpha = static_cast<float>(ctx.GetFloat("alpha"));
  float beta = static_cast<float>(ctx.GetFloat("beta"));
  if (a.shape().rank() != 2 || b.shape().rank() != 2) {
    return ctx.Error(absl::StrCat("A ", a.shape().ToString(), " and B ", b.shape().ToString(), " must be matrices"));
  }
  const int64_t m = a.shape().dim(trans_a ? 1 : 0);
  const int64_t k = a.shape().dim(trans_a ? 0 : 1);
  const int64_t n = b.shape().dim(trans_b ? 0 : 1);
  if (b.shape().dim(trans_b ? 1 : 0) != k) {
    return ctx.Error(absl::StrCat("A ", a.shape().ToString(), " and B ", b.shape().ToString(),
                                  " have different contraction dimensions"));
  }
  Tensor& y = ctx.output(0);
  if (y.num_elements() != m * n) {
    return ctx.Error(absl::StrCat("output has ", y.num_elements(), " elements but ", m * n, " are computed"));
  }
  float* y_data = y.data<float>();
  GemmOptions options;
  options.parallel_for = ctx.parallel_for();
  std::vector<float> bias;
  if (ctx.has_input(2) && beta != 0.0f) {
    const Tensor& c = ctx.input(2);
    const float* c_data = c.data<float>();
    const int rank = c.shape().rank();
    if (rank > 2) return ctx.Error(absl::StrCat("C ", c.shape().ToString(), " must have rank <= 2"));
    const int64_t c_rows = rank == 2 ? c.shape().dim(0) : 1;
    const int64_t c_cols = rank >= 1 ? c.shape().dim(rank - 1) : 1;
    if ((c_rows != 1 && c_rows != m) || (c_cols != 1 && c_cols != n)) {
      return ctx.Error(absl::StrCat("C ", c.shape().ToString(), " does not broadcast to [", m, ",", n, "]"));
    }
    if (c_rows == 1) {
      // One row for every output row: a per-column bias (beta folded in), no C pass.
      bias.resize(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) bias[j] = beta * c_data[c_cols == 1 ? 0 : j];
      options.epilogue.bias = bias.data();
      beta = 0.0f;
    } else {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) y_data[i * n + j] = c_data[i * c_cols + (c_cols == 1 ? 0 : j)];
      }
    }
  } else {
    beta = 0.0f;
  }
  Sgemm(trans_a, trans_b, m, n, k, alpha, a.data<float>(), trans_a ? m : k, b.data<float>(), trans_b ? k : n, beta,
        y_data, n, options);
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterCpuMatMulKernels(KernelRegistry& registry) {
  TSR_RETURN_IF_ERROR(registry.Register("MatMul", kCpuDevice, DType::kF32, MatMulKernel));
  TSR_RETURN_IF_ERROR(registry.Register("Gemm", kCpuDevice, DType::kF32, GemmKernel));
  return absl::OkStatus();
}

}  // namespace tsr
