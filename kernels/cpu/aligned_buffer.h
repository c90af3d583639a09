// `AlignedFloatBuffer`: a 64-byte aligned float buffer that grows on demand and keeps
// its memory from call to call. Kernels hold one per thread (thread_local) for their
// packing and transform scratch: buffers of megabytes are mmapped, and faulting fresh
// pages in on every call would cost as much as the packing itself.
#ifndef TESSERA_KERNELS_CPU_ALIGNED_BUFFER_H_
#define TESSERA_KERNELS_CPU_ALIGNED_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace tsr {

class AlignedFloatBuffer {
 public:
  // At least `floats` floats; the contents are unspecified (kept from earlier calls
  // unless the buffer grew).
  float* Get(int64_t floats) {
    if (floats > capacity_) {
      const size_t bytes = (static_cast<size_t>(floats) * sizeof(float) + 63) / 64 * 64;
      data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
      capacity_ = floats;
    }
    return data_.get();
  }
  // What the last Get returned (null before any).
  const float* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> data_;
  int64_t capacity_ = 0;
};

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_ALIGNED_BUFFER_H_
