// `TensorType`: the static type of a graph edge — element type and shape.
#ifndef TESSERA_GRAPH_TENSOR_TYPE_H_
#define TESSERA_GRAPH_TENSOR_TYPE_H_

#include <string>

#include "graph/dtype.h"
#include "graph/shape.h"

namespace tsr {

struct TensorType {
  DType dtype = DType::kInvalid;
  Shape shape;

  TensorType() = default;
  TensorType(DType d, Shape s) : dtype(d), shape(std::move(s)) {}

  // "f32[N,784]"
  std::string ToString() const;
  friend bool operator==(const TensorType& a, const TensorType& b) { return a.dtype == b.dtype && a.shape == b.shape; }
  friend bool operator!=(const TensorType& a, const TensorType& b) { return !(a == b); }
};

}  // namespace tsr

#endif  // TESSERA_GRAPH_TENSOR_TYPE_H_
