// Allocator: a caching arena of 64-byte-aligned buffers, one free list per size class.
#include "runtime/allocator.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "kernels/poison.h"

namespace tsr {

struct Allocator::Arena {
  explicit Arena(const AllocatorOptions& o) : options(o) {}
  ~Arena() { FreeCachedLocked(); }

  // Puts a buffer of `class_bytes` back on its free list, or frees it when the cache
  // is full.
  void Release(void* p, int64_t class_bytes, int64_t bytes) {
    std::lock_guard<std::mutex> lock(mu);
    stats.bytes_in_use -= bytes;
    if (stats.bytes_cached + class_bytes <= options.max_cached_bytes) {
      free_lists[class_bytes].push_back(p);
      stats.bytes_cached += class_bytes;
    } else {
      std::free(p);
      stats.bytes_reserved -= class_bytes;
    }
  }

  void FreeCachedLocked() {
    for (auto& [class_bytes, list] : free_lists) {
      for (void* p : list) std::free(p);
      stats.bytes_reserved -= class_bytes * static_cast<int64_t>(list.size());
      stats.bytes_cached -= class_bytes * static_cast<int64_t>(list.size());
    }
    free_lists.clear();
  }

  const AllocatorOptions options;
  std::mutex mu;
  AllocatorStats stats;
  absl::flat_hash_map<int64_t, std::vector<void*>> free_lists;  // size class -> buffers
};

Allocator::Allocator(AllocatorOptions options) : arena_(std::make_shared<Arena>(options)) {}

int64_t Allocator::SizeClass(int64_t bytes) {
  const int64_t b = std::max<int64_t>(bytes, 1);
  if (b <= 256) return (b + 63) / 64 * 64;
  // Four classes per power of two: p, 1.25p, 1.5p, 1.75p (p >= 256, so each is a
  // multiple of 64).
  int64_t p = 256;
  while (p * 2 <= b) p *= 2;
  const int64_t step = p / 4;
  return (b + step - 1) / step * step;
}

absl::StatusOr<Tensor> Allocator::Allocate(DType dtype, const Shape& shape) {
  if (!IsValidDType(dtype)) return absl::InvalidArgumentError("cannot allocate a tensor of invalid dtype");
  if (!shape.is_static()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot allocate shape ", shape.ToString(), ": it is not static"));
  }
  absl::StatusOr<int64_t> elements = shape.NumElements();
  if (!elements.ok()) return elements.status();
  const int64_t bytes = *elements * static_cast<int64_t>(DTypeSize(dtype));
  const int64_t class_bytes = SizeClass(bytes);
  Arena& arena = *arena_;
  void* data = nullptr;
  {
    std::lock_guard<std::mutex> lock(arena.mu);
    auto it = arena.free_lists.find(class_bytes);
    if (it != arena.free_lists.end() && !it->second.empty()) {
      data = it->second.back();
      it->second.pop_back();
      arena.stats.bytes_cached -= class_bytes;
    }
  }
  if (data == nullptr) {
    data = std::aligned_alloc(kTensorAlignment, static_cast<size_t>(class_bytes));
    if (data == nullptr) {
      // The cache may hold the memory this request needs: give it back and retry once.
      ReleaseCached();
      data = std::aligned_alloc(kTensorAlignment, static_cast<size_t>(class_bytes));
    }
    if (data == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrCat("out of memory allocating ", bytes, " bytes for ", DTypeName(dtype), shape.ToString()));
    }
    std::lock_guard<std::mutex> lock(arena.mu);
    arena.stats.bytes_reserved += class_bytes;
    ++arena.stats.num_system_allocations;
  }
  {
    std::lock_guard<std::mutex> lock(arena.mu);
    AllocatorStats& s = arena.stats;
    s.bytes_in_use += bytes;
    s.peak_bytes = std::max(s.peak_bytes, s.bytes_in_use);
    ++s.num_allocations;
    s.bytes_allocated += bytes;
  }
  std::shared_ptr<void> owner(data,
                              [arena = arena_, class_bytes, bytes](void* p) { arena->Release(p, class_bytes, bytes); });
  Tensor t = Tensor::Wrap(dtype, shape, std::move(owner), data);
  if (arena.options.poison) FillWithPoison(t);
  return t;
}

AllocatorStats Allocator::stats() const {
  std::lock_guard<std::mutex> lock(arena_->mu);
  return arena_->stats;
}

void Allocator::ResetPeak() {
  std::lock_guard<std::mutex> lock(arena_->mu);
  arena_->stats.peak_bytes = arena_->stats.bytes_in_use;
}

void Allocator::ReleaseCached() {
  std::lock_guard<std::mutex> lock(arena_->mu);
  arena_->FreeCachedLocked();
}

}  // namespace tsr
