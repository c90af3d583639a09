// `Allocator`: the CPU device's memory, 64-byte-aligned buffers handed out as Tensors
// (Tensor::Wrap) with statistics — bytes in use, peak bytes, allocation count — kept
// while any tensor from it lives, even past the allocator itself.
#ifndef TESSERA_RUNTIME_ALLOCATOR_H_
#define TESSERA_RUNTIME_ALLOCATOR_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "graph/tensor.h"

namespace tsr {

struct AllocatorStats {
  int64_t bytes_in_use = 0;
  int64_t peak_bytes = 0;       // highest bytes_in_use since creation or ResetPeak()
  int64_t num_allocations = 0;  // buffers handed out since creation
  int64_t bytes_allocated = 0;  // total bytes handed out since creation
};

class Allocator {
 public:
  Allocator();

  // A zero-filled tensor of static `shape`; ResourceExhausted when memory runs out.
  absl::StatusOr<Tensor> Allocate(DType dtype, const Shape& shape);

  AllocatorStats stats() const;
  // Starts a new peak measurement at the current bytes in use.
  void ResetPeak();

 private:
  struct Counters {
    std::atomic<int64_t> in_use{0};
    std::atomic<int64_t> peak{0};
    std::atomic<int64_t> count{0};
    std::atomic<int64_t> total{0};
  };
  // Shared with every buffer's deleter, so tensors may outlive the allocator.
  std::shared_ptr<Counters> counters_;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_ALLOCATOR_H_
