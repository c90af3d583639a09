// The geometry of a (batched) MatMul with numpy semantics — 1-D operands promoted,
// batch dimensions broadcast — shared by every MatMul kernel so they agree on it.
#ifndef TESSERA_KERNELS_MATMUL_GEOMETRY_H_
#define TESSERA_KERNELS_MATMUL_GEOMETRY_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/kernel.h"

namespace tsr {

struct MatMulGeometry {
  int64_t m = 0, n = 0, k = 0;
  // Flat element offsets of A and B for each batch item, row-major over the
  // broadcast batch; item p writes Y at p * m * n.
  std::vector<int64_t> a_offset;
  std::vector<int64_t> b_offset;
  int64_t batch_count() const { return static_cast<int64_t>(a_offset.size()); }
};

// From inputs 0 (A) and 1 (B) and output 0 (Y) of ctx; errors name the node.
absl::StatusOr<MatMulGeometry> ComputeMatMulGeometry(KernelContext& ctx);

}  // namespace tsr

#endif  // TESSERA_KERNELS_MATMUL_GEOMETRY_H_
