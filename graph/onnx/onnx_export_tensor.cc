// Tessera Tensors as ONNX TensorProtos: element types and raw little-endian data.
#include "graph/onnx/onnx_export_tensor.h"

#include <string>

#include "absl/base/config.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tsr {

static_assert(ABSL_IS_LITTLE_ENDIAN, "TensorToOnnx writes host-order bytes as ONNX's little-endian raw_data");

absl::StatusOr<int32_t> OnnxElemTypeFromDType(DType dtype) {
  using onnx::TensorProto;
  switch (dtype) {
    case DType::kF32:
      return TensorProto::FLOAT;
    case DType::kF64:
      return TensorProto::DOUBLE;
    case DType::kF16:
      return TensorProto::FLOAT16;
    case DType::kBF16:
      return TensorProto::BFLOAT16;
    case DType::kI8:
      return TensorProto::INT8;
    case DType::kU8:
      return TensorProto::UINT8;
    case DType::kI32:
      return TensorProto::INT32;
    case DType::kI64:
      return TensorProto::INT64;
    case DType::kBool:
      return TensorProto::BOOL;
    case DType::kInvalid:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat("dtype ", DTypeName(dtype), " has no ONNX element type"));
}

absl::StatusOr<onnx::TensorProto> TensorToOnnx(const Tensor& value, absl::string_view name) {
  if (!value.valid()) return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "' holds no value"));
  absl::StatusOr<int32_t> elem_type = OnnxElemTypeFromDType(value.dtype());
  if (!elem_type.ok()) return elem_type.status();
  onnx::TensorProto proto;
  proto.set_name(std::string(name));
  proto.set_data_type(*elem_type);
  for (int64_t d : value.shape().dims()) proto.add_dims(d);
  proto.set_raw_data(std::string(static_cast<const char*>(value.raw_data()), value.num_bytes()));
  return proto;
}

}  // namespace tsr
