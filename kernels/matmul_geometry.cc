// ComputeMatMulGeometry: numpy MatMul promotion and batch broadcasting.
#include "kernels/matmul_geometry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tsr {

absl::StatusOr<MatMulGeometry> ComputeMatMulGeometry(KernelContext& ctx) {
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
  const Tensor& y = ctx.output(0);
  if (y.num_elements() != batch_count * m * n) {
    return ctx.Error(
        absl::StrCat("output has ", y.num_elements(), " elements but ", batch_count * m * n, " are computed"));
  }
  MatMulGeometry g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a_offset.assign(batch_count, 0);
  g.b_offset.assign(batch_count, 0);
  std::vector<int64_t> index(batch_rank, 0);
  for (int64_t p = 0; p < batch_count; ++p) {
    for (int i = 0; i < batch_rank; ++i) {
      g.a_offset[p] += index[i] * a_stride[i];
      g.b_offset[p] += index[i] * b_stride[i];
    }
    for (int i = batch_rank - 1; i >= 0; --i) {
      if (++index[i] < batch[i]) break;
      index[i] = 0;
    }
  }
  return g;
}

}  // namespace tsr
