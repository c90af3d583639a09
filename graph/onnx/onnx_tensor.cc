// TensorFromOnnx and the ONNX element-type table.
#include "graph/onnx/onnx_tensor.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "graph/float16.h"
#include "graph/onnx/onnx_external_data.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

using onnx::TensorProto;

absl::StatusOr<ExternalDataRef> ParseExternalData(const TensorProto& proto, absl::string_view name) {
  ExternalDataRef ref;
  bool has_location = false;
  for (const onnx::StringStringEntryProto& entry : proto.external_data()) {
    const std::string& key = entry.key();
    if (key == "location") {
      ref.location = entry.value();
      has_location = true;
    } else if (key == "offset" || key == "length") {
      int64_t v = 0;
      if (!absl::SimpleAtoi(entry.value(), &v)) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor '", name, "': external data ", key, " '", entry.value(), "' is not an integer"));
      }
      if (key == "offset") {
        ref.offset = v;
      } else {
        ref.length = v;
      }
    }
    // "checksum" (and keys newer writers may add) do not change where the bytes are.
  }
  if (!has_location) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "': external data without a 'location'"));
  }
  return ref;
}

// Copies `count` typed values into `out`, checking that each fits the storage type.
template <typename T, typename Field>
absl::Status CopyChecked(const Field& field, int64_t lo, int64_t hi, T* out, absl::string_view name,
                         absl::string_view type) {
  for (int i = 0; i < field.size(); ++i) {
    const int64_t v = field.Get(i);
    if (v < lo || v > hi) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor '", name, "': value ", v, " at index ", i, " does not fit type ", type));
    }
    out[i] = static_cast<T>(v);
  }
  return absl::OkStatus();
}

// Fills `t` from the typed field that `elem_type` uses (int32_data holds every type of
// 32 bits or fewer, 16-bit floats as their bit patterns).
absl::Status FillFromTypedField(const TensorProto& proto, Tensor& t, absl::string_view name) {
  const std::string type = OnnxElemTypeName(proto.data_type());
  auto check_count = [&](int size, absl::string_view field) -> absl::Status {
    if (size != t.num_elements()) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "' of type ", type, " and dims ",
                                                     t.shape().ToString(), " needs ", t.num_elements(), " values but ",
                                                     field, " holds ", size));
    }
    return absl::OkStatus();
  };
  switch (proto.data_type()) {
    case TensorProto::FLOAT:
      TSR_RETURN_IF_ERROR(check_count(proto.float_data_size(), "float_data"));
      std::copy(proto.float_data().begin(), proto.float_data().end(), t.data<float>());
      return absl::OkStatus();
    case TensorProto::DOUBLE:
      TSR_RETURN_IF_ERROR(check_count(proto.double_data_size(), "double_data"));
      std::copy(proto.double_data().begin(), proto.double_data().end(), t.data<double>());
      return absl::OkStatus();
    case TensorProto::INT64:
      TSR_RETURN_IF_ERROR(check_count(proto.int64_data_size(), "int64_data"));
      std::copy(proto.int64_data().begin(), proto.int64_data().end(), t.data<int64_t>());
      return absl::OkStatus();
    default:
      break;
  }
  TSR_RETURN_IF_ERROR(check_count(proto.int32_data_size(), "int32_data"));
  const auto& f = proto.int32_data();
  switch (proto.data_type()) {
    case TensorProto::INT32:
      std::copy(f.begin(), f.end(), t.data<int32_t>());
      return absl::OkStatus();
    case TensorProto::INT8:
      return CopyChecked(f, -128, 127, t.data<int8_t>(), name, type);
    case TensorProto::UINT8:
      return CopyChecked(f, 0, 255, t.data<uint8_t>(), name, type);
    case TensorProto::BOOL: {
      bool* out = t.data<bool>();
      for (int i = 0; i < f.size(); ++i) out[i] = f.Get(i) != 0;
      return absl::OkStatus();
    }
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16: {
      std::vector<uint16_t> bits(static_cast<size_t>(f.size()));
      TSR_RETURN_IF_ERROR(CopyChecked(f, 0, 0xffff, bits.data(), name, type));
      std::memcpy(t.raw_data(), bits.data(), bits.size() * sizeof(uint16_t));
      return absl::OkStatus();
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "': type ", type, " is not supported"));
  }
}

// Raw little-endian bytes (this host is little-endian, as ONNX's format). Bool bytes
// other than 0 and 1 are normalized: a bool holding 2 would be undefined behaviour.
void FillFromRaw(absl::string_view bytes, Tensor& t) {
  std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  if (t.dtype() == DType::kBool) {
    unsigned char* p = static_cast<unsigned char*>(t.raw_data());
    for (size_t i = 0; i < bytes.size(); ++i) p[i] = p[i] != 0 ? 1 : 0;
  }
}

}  // namespace

std::string OnnxElemTypeName(int32_t elem_type) {
  if (onnx::TensorProto_DataType_IsValid(elem_type)) {
    return onnx::TensorProto_DataType_Name(static_cast<TensorProto::DataType>(elem_type));
  }
  return absl::StrCat("type ", elem_type);
}

absl::StatusOr<DType> DTypeFromOnnx(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT:
      return DType::kF32;
    case TensorProto::DOUBLE:
      return DType::kF64;
    case TensorProto::FLOAT16:
      return DType::kF16;
    case TensorProto::BFLOAT16:
      return DType::kBF16;
    case TensorProto::INT8:
      return DType::kI8;
    case TensorProto::UINT8:
      return DType::kU8;
    case TensorProto::INT32:
      return DType::kI32;
    case TensorProto::INT64:
      return DType::kI64;
    case TensorProto::BOOL:
      return DType::kBool;
    default:
      return absl::UnimplementedError(
          absl::StrCat("ONNX element type ", OnnxElemTypeName(elem_type),
                       " is not supported (Tessera has FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT8, UINT8, INT32, "
                       "INT64, BOOL)"));
  }
}

absl::StatusOr<Tensor> TensorFromOnnx(const TensorProto& proto, const OnnxTensorOptions& options,
                                      absl::string_view what) {
  const std::string name = proto.name().empty() ? std::string(what) : proto.name();
  auto error = [&](absl::string_view message) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "': ", message));
  };
  if (proto.has_segment()) return absl::UnimplementedError(absl::StrCat("tensor '", name, "': segments"));
  absl::StatusOr<DType> dtype = DTypeFromOnnx(proto.data_type());
  if (!dtype.ok()) return absl::UnimplementedError(absl::StrCat("tensor '", name, "': ", dtype.status().message()));
  if (proto.dims_size() > kMaxRank) return error(absl::StrCat("rank ", proto.dims_size(), " is above ", kMaxRank));
  Shape shape;
  for (int64_t d : proto.dims()) {
    if (d < 0) return error(absl::StrCat("dims hold the negative size ", d));
    shape.AddDim(d);
  }
  if (absl::Status s = shape.Validate(); !s.ok()) return error(s.message());
  // Validate bounds the count by 2^40, so this cannot overflow.
  const int64_t bytes = shape.num_elements() * static_cast<int64_t>(DTypeSize(*dtype));
  if (bytes > options.max_tensor_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("tensor '", name, "' ", TensorType(*dtype, shape).ToString(), " needs ", bytes,
                     " bytes, above the limit max_tensor_bytes=", options.max_tensor_bytes));
  }

  const bool external = proto.data_location() == TensorProto::EXTERNAL;
  if (external && proto.has_raw_data()) return error("has both raw_data and external data");
  std::string external_bytes;
  if (external) {
    TSR_ASSIGN_OR_RETURN(ExternalDataRef ref, ParseExternalData(proto, name));
    TSR_ASSIGN_OR_RETURN(external_bytes,
                         ReadExternalData(options.model_dir, ref, bytes, options.max_tensor_bytes, name));
  }
  if (external || proto.has_raw_data()) {
    const absl::string_view raw = external ? absl::string_view(external_bytes) : absl::string_view(proto.raw_data());
    if (static_cast<int64_t>(raw.size()) != bytes) {
      return error(absl::StrCat(TensorType(*dtype, shape).ToString(), " needs ", bytes, " bytes but raw_data holds ",
                                raw.size()));
    }
    TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(*dtype, shape));
    FillFromRaw(raw, t);
    return t;
  }
  // The typed field's size is checked against the dims before the buffer is allocated:
  // the counts are known from the proto alone.
  int typed_count = 0;
  switch (proto.data_type()) {
    case TensorProto::FLOAT:
      typed_count = proto.float_data_size();
      break;
    case TensorProto::DOUBLE:
      typed_count = proto.double_data_size();
      break;
    case TensorProto::INT64:
      typed_count = proto.int64_data_size();
      break;
    default:
      typed_count = proto.int32_data_size();
      break;
  }
  if (typed_count != shape.num_elements()) {
    return error(absl::StrCat(TensorType(*dtype, shape).ToString(), " needs ", shape.num_elements(),
                              " values but the tensor holds ", typed_count, " (and no raw_data)"));
  }
  TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(*dtype, shape));
  TSR_RETURN_IF_ERROR(FillFromTypedField(proto, t, name));
  return t;
}

absl::StatusOr<Tensor> FloatScalarTensor(DType dtype, double value) {
  Tensor t(dtype, Shape());
  switch (dtype) {
    case DType::kF32:
      *t.data<float>() = static_cast<float>(value);
      return t;
    case DType::kF64:
      *t.data<double>() = value;
      return t;
    case DType::kF16:
      *t.data<Float16>() = Float16::FromFloat(static_cast<float>(value));
      return t;
    case DType::kBF16:
      *t.data<BFloat16>() = BFloat16::FromFloat(static_cast<float>(value));
      return t;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("a floating-point constant of dtype ", DTypeName(dtype), " is not supported"));
  }
}

}  // namespace tsr
