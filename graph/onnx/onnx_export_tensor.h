// Tessera DTypes and Tensors as ONNX element types and TensorProtos (the export side of
// onnx_tensor.h).
#ifndef TESSERA_GRAPH_ONNX_ONNX_EXPORT_TENSOR_H_
#define TESSERA_GRAPH_ONNX_ONNX_EXPORT_TENSOR_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/dtype.h"
#include "graph/tensor.h"
#include "onnx/onnx_pb.h"

namespace tsr {

// The TensorProto element type of `dtype`; an error for kInvalid.
absl::StatusOr<int32_t> OnnxElemTypeFromDType(DType dtype);

// `value` as a TensorProto named `name`, its bytes in raw_data (little-endian, bools one
// byte each, as ONNX stores them).
absl::StatusOr<onnx::TensorProto> TensorToOnnx(const Tensor& value, absl::string_view name);

}  // namespace tsr

#endif  // TESSERA_GRAPH_ONNX_ONNX_EXPORT_TENSOR_H_
