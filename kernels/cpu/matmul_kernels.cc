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

namespace tsr {

namespace {

// Forwards Sgemm's splitting to the runtime's threads.
ParallelForFn ContextParallelFor(const KernelContext& ctx) {
  return [&ctx](int64_t n, int64_t cost, const std::function<void(int64_t, int64_t)>& fn) {
    ctx.ParallelFor(n, cost, fn);
  };
}

absl::Status MatMulKernel(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  // Promote to rank >= 2: a 1-D A is [1,K], a 1-D B is [K,1].
  std::vector<int64_t> a_dims = a.shape().dims();
  std::vector<int64_t> b_dims = b.shape().dims();
  if (a_dims.empty() || b_dims.empty()) {
    return ctx.Error(
        absl::StrCat("A ", a.shape().ToString(), " and B ", b.shape().ToString(), " must both have rank >= 1"));
  }
  if (a_dims.size() == 1) a_dims.insert(a_dims.begin(), 1);
  if (b_dims.size() == 1) b_dims.push_back(1);
  const int64_t m = a_dims[a_dims.size() - 2];
  const int64_t k = a_dims[a_dims.size() - 1];
  const int64_t n = b_dims[b_dims.size() - 1];
  if (b_dims[b_dims.size() - 2] != k) {
    return ctx.Error(absl::StrCat("A ", a.shape().ToString(), " and B ", b.shape().ToString(),
                                  " have different contraction dimensions"));
  }
  // Batch dims right-aligned; a missing or size-1 dim broadcasts (stride 0).
  const int a_batch_rank = static_cast<int>(a_dims.size()) - 2;
  const int b_batch_rank = static_cast<int>(b_dims.size()) - 2;
  const int batch_rank = std::max(a_batch_rank, b_batch_rank);
  std::vector<int64_t> batch(batch_rank), a_stride(batch_rank, 0), b_stride(batch_rank, 0);
  int64_t a_step = m * k, b_step = k * n;
  for (int i = batch_rank - 1; i >= 0; --i) {
    const int ai = i - (batch_rank - a_batch_rank);
    const int bi = i - (batch_rank - b_batch_rank);
    const int64_t ad = ai >= 0 ? a_dims[ai] : 1;
    const int64_t bd = bi >= 0 ? b_dims[bi] : 1;
    if (ad != bd && ad != 1 && bd != 1) {
      return ctx.Error(absl::StrCat("batch dimensions of A ", a.shape().ToString(), " and B ", b.shape().ToString(),
                                    " do not broadcast"));
    }
    batch[i] = ad == 1 ? bd : ad;
    a_stride[i] = ad == 1 ? 0 : a_step;
    b_stride[i] = bd == 1 ? 0 : b_step;
    a_step *= ad;
    b_step *= bd;
  }
  int64_t batch_count = 1;
  for (int64_t d : batch) batch_count *= d;
  Tensor& y = ctx.output(0);
  if (y.num_elements() != batch_count * m * n) {
    return ctx.Error(
        absl::StrCat("output has ", y.num_elements(), " elements but ", batch_count * m * n, " are computed"));
  }
  const float* a_data = a.data<float>();
  const float* b_data = b.data<float>();
  float* y_data = y.data<float>();
  // The flat offsets of A and B for each batch index, row-major over `batch`.
  std::vector<int64_t> a_off(batch_count), b_off(batch_count);
  std::vector<int64_t> index(batch_rank, 0);
  for (int64_t p = 0; p < batch_count; ++p) {
    a_off[p] = b_off[p] = 0;
    for (int i = 0; i < batch_rank; ++i) {
      a_off[p] += index[i] * a_stride[i];
      b_off[p] += index[i] * b_stride[i];
    }
    for (int i = batch_rank - 1; i >= 0; --i) {
      if (++index[i] < batch[i]) break;
      index[i] = 0;
    }
  }
  auto run = [&](int64_t p, const GemmOptions& options) {
    Sgemm(false, false, m, n, k, 1.0f, a_data + a_off[p], k, b_data + b_off[p], n, 0.0f, y_data + p * m * n, n,
          options);
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
    options.parallel_for = ContextParallelFor(ctx);
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
  options.parallel_for = ContextParallelFor(ctx);
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
