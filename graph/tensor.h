// `Tensor`: a dense host tensor with a 64-byte-aligned buffer.
//
// Copies share the buffer (like TensorFlow's Tensor); `Clone()` makes a deep copy.
// Shapes are always static here: a Tensor holds real data.
#ifndef TESSERA_GRAPH_TENSOR_H_
#define TESSERA_GRAPH_TENSOR_H_

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graph/dtype.h"
#include "graph/shape.h"
#include "graph/tensor_type.h"

namespace tsr {

inline constexpr size_t kTensorAlignment = 64;

class Tensor {
 public:
  // An empty tensor with dtype kInvalid (`valid()` is false).
  Tensor() = default;
  // A zero-filled tensor. `shape` must be static and valid (use Create for untrusted input).
  Tensor(DType dtype, Shape shape);

  // Checks dtype and shape (static, within limits) before allocating.
  static absl::StatusOr<Tensor> Create(DType dtype, const Shape& shape);

  // A tensor over memory owned by `owner` (e.g. a runtime allocator's buffer);
  // `data` must be kTensorAlignment-aligned and hold the shape's bytes.
  static Tensor Wrap(DType dtype, Shape shape, std::shared_ptr<void> owner, void* data);

  template <typename T>
  static Tensor FromVector(Shape shape, const std::vector<T>& values) {
    Tensor t(DTypeOf<T>::value, std::move(shape));
    assert(static_cast<size_t>(t.num_elements()) == values.size());
    T* out = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
    return t;
  }
  template <typename T>
  static Tensor Scalar(T value) {
    return FromVector<T>(Shape(), {value});
  }

  bool valid() const { return dtype_ != DType::kInvalid; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  TensorType type() const { return TensorType(dtype_, shape_); }
  int64_t num_elements() const { return num_elements_; }
  size_t num_bytes() const { return static_cast<size_t>(num_elements_) * DTypeSize(dtype_); }

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }

  template <typename T>
  T* data() {
    assert(DTypeOf<T>::value == dtype_);
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    assert(DTypeOf<T>::value == dtype_);
    return static_cast<const T*>(data_);
  }
  template <typename T>
  absl::Span<T> flat() {
    return absl::Span<T>(data<T>(), static_cast<size_t>(num_elements_));
  }
  template <typename T>
  absl::Span<const T> flat() const {
    return absl::Span<const T>(data<T>(), static_cast<size_t>(num_elements_));
  }

  // Element i converted to double / int64 (any dtype); for tests, printing and
  // shape inference on small constant tensors.
  double GetAsDouble(int64_t i) const;
  int64_t GetAsInt64(int64_t i) const;
  // All elements as int64 (for shape-like tensors such as Reshape's `shape`).
  std::vector<int64_t> ToInt64Vector() const;

  Tensor Clone() const;
  // Same buffer, different static shape with the same element count.
  absl::StatusOr<Tensor> Reshaped(const Shape& shape) const;

  // Same dtype, shape and bytes.
  bool BitwiseEquals(const Tensor& other) const;

  // "f32[2,3] {1, 2, 3, 4, 5, 6}" with at most `max_elements` values shown.
  std::string DebugString(int max_elements = 16) const;

 private:
  DType dtype_ = DType::kInvalid;
  Shape shape_;
  int64_t num_elements_ = 0;
  std::shared_ptr<void> buffer_;
  void* data_ = nullptr;
};

}  // namespace tsr

#endif  // TESSERA_GRAPH_TENSOR_H_
