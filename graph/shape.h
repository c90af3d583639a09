// `Shape`: the dimensions of a tensor. Every dimension is static except, optionally,
// symbolic batch dimensions (`kBatchDim`), which stand for one batch size that is
// bound when a graph is compiled (`BindBatch`). Unknown ranks do not exist: graphs
// are static.
#ifndef TESSERA_GRAPH_SHAPE_H_
#define TESSERA_GRAPH_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace tsr {

// The symbolic batch dimension, printed as "N".
inline constexpr int64_t kBatchDim = -1;

// Largest rank any tensor may have; bounds what a hostile file can ask for.
inline constexpr int kMaxRank = 32;
// Largest element count of one tensor (2^40); bounds allocations from untrusted input.
inline constexpr int64_t kMaxElements = int64_t{1} << 40;

class Shape {
 public:
  Shape() = default;  // a scalar
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}
  explicit Shape(absl::Span<const int64_t> dims) : dims_(dims.begin(), dims.end()) {}

  static Shape Scalar() { return Shape(); }

  int rank() const { return static_cast<int>(dims_.size()); }
  bool is_scalar() const { return dims_.empty(); }
  int64_t dim(int i) const { return dims_[i]; }
  const std::vector<int64_t>& dims() const { return dims_; }
  std::vector<int64_t>& mutable_dims() { return dims_; }
  void set_dim(int i, int64_t d) { dims_[i] = d; }
  void AddDim(int64_t d) { dims_.push_back(d); }

  bool is_static() const;  // no symbolic dimension
  bool has_batch() const { return !is_static(); }

  // Product of the dims; an error when symbolic, negative or above kMaxElements.
  absl::StatusOr<int64_t> NumElements() const;
  // Product of the dims; requires is_static() and validity (checked by callers).
  int64_t num_elements() const;

  // Checks that every dim is >= 0 or kBatchDim, the rank is <= kMaxRank and the
  // static part of the element count is <= kMaxElements.
  absl::Status Validate() const;

  // Replaces every kBatchDim by `batch`.
  Shape BindBatch(int64_t batch) const;

  // "[N,784]", "[]" for a scalar.
  std::string ToString() const;

  friend bool operator==(const Shape& a, const Shape& b) { return a.dims_ == b.dims_; }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

 private:
  std::vector<int64_t> dims_;
};

// Numpy/ONNX multidirectional broadcasting. A symbolic dim broadcasts with 1 and with
// itself; against a static d > 1 it yields d (the batch must then be bound to 1 or d).
absl::StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b);

// Normalizes an axis in [-rank, rank) to [0, rank); an error naming the axis otherwise.
absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank);

// Dimension printed as in ToString ("N" for kBatchDim).
std::string DimToString(int64_t d);

}  // namespace tsr

#endif  // TESSERA_GRAPH_SHAPE_H_
