// ONNX element types and TensorProtos as Tessera DTypes and Tensors.
//
// A TensorProto is untrusted: its dims are validated (rank, non-negative, element
// count) and the bytes they need are compared with the data present — raw_data, the
// typed field of its type, or external data — BEFORE anything is allocated, so a tensor
// claiming [2^40, 2^40] costs nothing. Values that do not fit the type (an int32_data
// entry of 300 for uint8) are errors, and bools are normalized to 0/1.
#ifndef TESSERA_GRAPH_ONNX_ONNX_TENSOR_H_
#define TESSERA_GRAPH_ONNX_ONNX_TENSOR_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/dtype.h"
#include "graph/tensor.h"
#include "onnx/onnx_pb.h"

namespace tsr {

// "FLOAT", "INT16", ... or "type 42" for an unknown code.
std::string OnnxElemTypeName(int32_t elem_type);

// The DType of an ONNX element type; an error naming the type when Tessera has none
// (int16, uint16, uint32, uint64, string, complex).
absl::StatusOr<DType> DTypeFromOnnx(int32_t elem_type);

struct OnnxTensorOptions {
  int64_t max_tensor_bytes = int64_t{4} << 30;
  // The model's folder, for external data; empty: external data is refused.
  std::string model_dir;
};

// Converts `proto`. Errors name the tensor (`what` when the proto has no name, e.g.
// "attribute 'value' of node 'c'").
absl::StatusOr<Tensor> TensorFromOnnx(const onnx::TensorProto& proto, const OnnxTensorOptions& options,
                                      absl::string_view what = "");

// A rank-0 tensor of floating-point `dtype` holding `value` (rounded to it), for the
// constants import converters and export rules add; an error for other dtypes.
absl::StatusOr<Tensor> FloatScalarTensor(DType dtype, double value);

}  // namespace tsr

#endif  // TESSERA_GRAPH_ONNX_ONNX_TENSOR_H_
