// `Allocator`: the CPU device's memory. 64-byte-aligned buffers handed out as Tensors
// (Tensor::Wrap), from a caching arena: a freed buffer goes to a free list of its size
// class and the next request of that class takes it back, so a graph run repeatedly
// (every training step, every inference) stops calling the system allocator after its
// first run. Statistics — bytes in use, peak, reserved, cache hits — are kept while
// any tensor from it lives, even past the allocator itself.
//
// Buffers are NOT zeroed: kernels write every element of their outputs (RunOp's
// poisoning checks that in the kernel tests). `poison` fills each buffer with the
// poison pattern (kernels/poison.h) for debugging.
#ifndef TESSERA_RUNTIME_ALLOCATOR_H_
#define TESSERA_RUNTIME_ALLOCATOR_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "graph/tensor.h"

namespace tsr {

struct AllocatorOptions {
  // Freed buffers are kept for reuse up to this many bytes in total; beyond it they go
  // back to the system. 0 disables the cache.
  int64_t max_cached_bytes = int64_t{1} << 30;
  // Fill every buffer handed out with NaN / all-ones bits (kernels/poison.h).
  bool poison = false;
};

struct AllocatorStats {
  int64_t bytes_in_use = 0;            // requested bytes of the live tensors
  int64_t peak_bytes = 0;              // highest bytes_in_use since creation or ResetPeak()
  int64_t num_allocations = 0;         // buffers handed out since creation
  int64_t bytes_allocated = 0;         // total requested bytes handed out since creation
  int64_t bytes_reserved = 0;          // system memory held: live buffers + the cache, by size class
  int64_t bytes_cached = 0;            // freed buffers kept for reuse
  int64_t num_system_allocations = 0;  // requests the cache could not serve
};

class Allocator {
 public:
  explicit Allocator(AllocatorOptions options = {});

  // A tensor of static `shape` with unspecified contents (poisoned when asked);
  // ResourceExhausted when memory runs out.
  absl::StatusOr<Tensor> Allocate(DType dtype, const Shape& shape);

  AllocatorStats stats() const;
  // Starts a new peak measurement at the current bytes in use.
  void ResetPeak();
  // Returns every cached buffer to the system.
  void ReleaseCached();

  // The size class a request of `bytes` is served from: a multiple of 64, at most 25%
  // (and 64 bytes) above the request.
  static int64_t SizeClass(int64_t bytes);

 private:
  struct Arena;
  // Shared with every buffer's deleter, so tensors may outlive the allocator.
  std::shared_ptr<Arena> arena_;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_ALLOCATOR_H_
