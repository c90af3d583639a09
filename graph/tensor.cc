// Tensor storage and element access.
#include "graph/tensor.h"

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "graph/tensor_type.h"

namespace tsr {

std::string TensorType::ToString() const { return absl::StrCat(DTypeName(dtype), shape.ToString()); }

namespace {

std::shared_ptr<void> AllocateAligned(size_t bytes) {
  // aligned_alloc requires a size that is a multiple of the alignment; keep at least
  // one line so that empty tensors still have a unique, valid pointer.
  size_t rounded = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  if (rounded == 0) rounded = kTensorAlignment;
  void* p = std::aligned_alloc(kTensorAlignment, rounded);
  if (p == nullptr) return nullptr;
  std::memset(p, 0, rounded);
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

}  // namespace

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  assert(IsValidDType(dtype_) && shape_.is_static());
  num_elements_ = shape_.num_elements();
  buffer_ = AllocateAligned(num_bytes());
  data_ = buffer_.get();
}

absl::StatusOr<Tensor> Tensor::Create(DType dtype, const Shape& shape) {
  if (!IsValidDType(dtype)) return absl::InvalidArgumentError("tensor has an invalid dtype");
  absl::StatusOr<int64_t> n = shape.NumElements();
  if (!n.ok()) return n.status();
  const size_t bytes = static_cast<size_t>(*n) * DTypeSize(dtype);
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.num_elements_ = *n;
  t.buffer_ = AllocateAligned(bytes);
  if (t.buffer_ == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", bytes, " bytes for tensor ", t.type().ToString()));
  }
  t.data_ = t.buffer_.get();
  return t;
}

Tensor Tensor::Wrap(DType dtype, Shape shape, std::shared_ptr<void> owner, void* data) {
  assert(IsValidDType(dtype) && shape.is_static());
  assert(reinterpret_cast<uintptr_t>(data) % kTensorAlignment == 0);
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.num_elements_ = t.shape_.num_elements();
  t.buffer_ = std::move(owner);
  t.data_ = data;
  return t;
}

double Tensor::GetAsDouble(int64_t i) const {
  return VisitDType(dtype_, [&](auto tag) -> double {
    using T = decltype(tag);
    const T v = static_cast<const T*>(data_)[i];
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      return v.ToFloat();
    } else {
      return static_cast<double>(v);
    }
  });
}

int64_t Tensor::GetAsInt64(int64_t i) const {
  return VisitDType(dtype_, [&](auto tag) -> int64_t {
    using T = decltype(tag);
    const T v = static_cast<const T*>(data_)[i];
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      return static_cast<int64_t>(v.ToFloat());
    } else {
      return static_cast<int64_t>(v);
    }
  });
}

std::vector<int64_t> Tensor::ToInt64Vector() const {
  std::vector<int64_t> out(static_cast<size_t>(num_elements_));
  for (int64_t i = 0; i < num_elements_; ++i) out[i] = GetAsInt64(i);
  return out;
}

Tensor Tensor::Clone() const {
  if (!valid()) return Tensor();
  Tensor t(dtype_, shape_);
  std::memcpy(t.data_, data_, num_bytes());
  return t;
}

absl::StatusOr<Tensor> Tensor::Reshaped(const Shape& shape) const {
  absl::StatusOr<int64_t> n = shape.NumElements();
  if (!n.ok()) return n.status();
  if (*n != num_elements_) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot reshape ", type().ToString(), " (", num_elements_, " elements) to ", shape.ToString()));
  }
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

bool Tensor::BitwiseEquals(const Tensor& other) const {
  if (dtype_ != other.dtype_ || shape_ != other.shape_) return false;
  if (!valid()) return true;
  return std::memcmp(data_, other.data_, num_bytes()) == 0;
}

std::string Tensor::DebugString(int max_elements) const {
  if (!valid()) return "<invalid tensor>";
  std::string out = absl::StrCat(type().ToString(), " {");
  const int64_t shown = std::min<int64_t>(num_elements_, max_elements);
  for (int64_t i = 0; i < shown; ++i) {
    if (i > 0) out += ", ";
    if (IsFloating(dtype_)) {
      absl::StrAppend(&out, GetAsDouble(i));
    } else {
      absl::StrAppend(&out, GetAsInt64(i));
    }
  }
  if (shown < num_elements_) out += ", ...";
  out += "}";
  return out;
}

}  // namespace tsr
