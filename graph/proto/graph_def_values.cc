// Dtypes, shapes, tensors and attribute values to and from GraphDef protos.
#include "graph/proto/graph_def_values.h"

#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace tsr {

// raw_data is little-endian and is copied as is: a big-endian host would need swaps.
static_assert(std::endian::native == std::endian::little, "GraphDef raw_data I/O assumes a little-endian host");

// The proto numbering is the C++ numbering, so conversions are casts.
static_assert(proto::DT_INVALID == static_cast<int>(DType::kInvalid));
static_assert(proto::DT_F32 == static_cast<int>(DType::kF32));
static_assert(proto::DT_F64 == static_cast<int>(DType::kF64));
static_assert(proto::DT_F16 == static_cast<int>(DType::kF16));
static_assert(proto::DT_BF16 == static_cast<int>(DType::kBF16));
static_assert(proto::DT_I8 == static_cast<int>(DType::kI8));
static_assert(proto::DT_U8 == static_cast<int>(DType::kU8));
static_assert(proto::DT_I32 == static_cast<int>(DType::kI32));
static_assert(proto::DT_I64 == static_cast<int>(DType::kI64));
static_assert(proto::DT_BOOL == static_cast<int>(DType::kBool));
static_assert(proto::AttrValue::kI == static_cast<int>(AttrType::kInt));
static_assert(proto::AttrValue::kF == static_cast<int>(AttrType::kFloat));
static_assert(proto::AttrValue::kS == static_cast<int>(AttrType::kString));
static_assert(proto::AttrValue::kB == static_cast<int>(AttrType::kBool));
static_assert(proto::AttrValue::kInts == static_cast<int>(AttrType::kInts));
static_assert(proto::AttrValue::kFloats == static_cast<int>(AttrType::kFloats));
static_assert(proto::AttrValue::kStrings == static_cast<int>(AttrType::kStrings));
static_assert(proto::AttrValue::kTensor == static_cast<int>(AttrType::kTensor));
static_assert(proto::AttrValue::kType == static_cast<int>(AttrType::kType));
static_assert(proto::AttrValue::kShape == static_cast<int>(AttrType::kShape));

namespace {

proto::DataType DataTypeToProto(DType dtype) { return static_cast<proto::DataType>(static_cast<int>(dtype)); }

absl::StatusOr<Shape> DimsFromProto(const google::protobuf::RepeatedField<int64_t>& dims) {
  // Checked before copying so that a million-entry dim list costs nothing more.
  if (dims.size() > kMaxRank) {
    return absl::InvalidArgumentError(absl::StrCat("shape has rank ", dims.size(), ", above the limit of ", kMaxRank));
  }
  Shape shape(std::vector<int64_t>(dims.begin(), dims.end()));
  TSR_RETURN_IF_ERROR(shape.Validate());
  return shape;
}

}  // namespace

void ShapeToProto(const Shape& shape, proto::ShapeProto* out) {
  out->mutable_dim()->Add(shape.dims().begin(), shape.dims().end());
}

void TensorTypeToProto(const TensorType& type, proto::TensorTypeProto* out) {
  out->set_dtype(DataTypeToProto(type.dtype));
  ShapeToProto(type.shape, out->mutable_shape());
}

void TensorToProto(const Tensor& tensor, proto::TensorProto* out) {
  out->set_dtype(DataTypeToProto(tensor.dtype()));
  out->mutable_dims()->Add(tensor.shape().dims().begin(), tensor.shape().dims().end());
  if (tensor.valid()) out->set_raw_data(static_cast<const char*>(tensor.raw_data()), tensor.num_bytes());
}

void AttrValueToProto(const AttrValue& value, proto::AttrValue* out) {
  switch (value.type()) {
    case AttrType::kInt:
      out->set_i(value.i());
      return;
    case AttrType::kFloat:
      out->set_f(value.f());
      return;
    case AttrType::kString:
      out->set_s(value.s());
      return;
    case AttrType::kBool:
      out->set_b(value.b());
      return;
    case AttrType::kInts:
      out->mutable_ints()->mutable_value()->Add(value.ints().begin(), value.ints().end());
      return;
    case AttrType::kFloats:
      out->mutable_floats()->mutable_value()->Add(value.floats().begin(), value.floats().end());
      return;
    case AttrType::kStrings: {
      proto::AttrValue::StringList* list = out->mutable_strings();
      for (const std::string& s : value.strings()) list->add_value(s);
      return;
    }
    case AttrType::kTensor:
      TensorToProto(value.tensor(), out->mutable_tensor());
      return;
    case AttrType::kType:
      out->set_type(DataTypeToProto(value.dtype()));
      return;
    case AttrType::kShape:
      ShapeToProto(value.shape(), out->mutable_shape());
      return;
  }
}

absl::StatusOr<DType> DTypeFromProto(int value) {
  // Range-check before the cast: DType is 8 bits wide.
  if (value <= 0 || value > 255 || !IsValidDType(static_cast<DType>(value))) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown dtype ", value, " (expected 1..9: f32, f64, f16, bf16, i8, u8, i32, i64, bool)"));
  }
  return static_cast<DType>(value);
}

absl::StatusOr<Shape> ShapeFromProto(const proto::ShapeProto& shape) { return DimsFromProto(shape.dim()); }

absl::StatusOr<TensorType> TensorTypeFromProto(const proto::TensorTypeProto& type) {
  TSR_ASSIGN_OR_RETURN(DType dtype, DTypeFromProto(type.dtype()));
  TSR_ASSIGN_OR_RETURN(Shape shape, ShapeFromProto(type.shape()));
  return TensorType(dtype, std::move(shape));
}

absl::StatusOr<Tensor> TensorFromProto(const proto::TensorProto& tensor) {
  TSR_ASSIGN_OR_RETURN(DType dtype, DTypeFromProto(tensor.dtype()));
  TSR_ASSIGN_OR_RETURN(Shape shape, DimsFromProto(tensor.dims()));
  if (!shape.is_static()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor dims ", shape.ToString(), " must be static (no batch dimension -1)"));
  }
  // Validate() bounded the element count by 2^40, so this product cannot overflow.
  const int64_t needed = shape.num_elements() * static_cast<int64_t>(DTypeSize(dtype));
  const std::string& raw = tensor.raw_data();
  if (static_cast<int64_t>(raw.size()) != needed) {
    return absl::InvalidArgumentError(absl::StrCat("tensor raw_data has ", raw.size(), " bytes but ",
                                                   TensorType(dtype, shape).ToString(), " needs ", needed));
  }
  if (dtype == DType::kBool) {
    // Any other byte would be an invalid bool object once read.
    for (size_t i = 0; i < raw.size(); ++i) {
      const unsigned char byte = static_cast<unsigned char>(raw[i]);
      if (byte > 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor raw_data byte ", i, " is ", byte, " but bool elements must be 0 or 1"));
      }
    }
  }
  TSR_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(dtype, shape));
  if (!raw.empty()) std::memcpy(out.raw_data(), raw.data(), raw.size());
  return out;
}

absl::StatusOr<AttrValue> AttrValueFromProto(const proto::AttrValue& value) {
  switch (value.value_case()) {
    case proto::AttrValue::kI:
      return AttrValue::Int(value.i());
    case proto::AttrValue::kF:
      return AttrValue::Float(value.f());
    case proto::AttrValue::kS:
      return AttrValue::String(value.s());
    case proto::AttrValue::kB:
      return AttrValue::Bool(value.b());
    case proto::AttrValue::kInts:
      return AttrValue::Ints(std::vector<int64_t>(value.ints().value().begin(), value.ints().value().end()));
    case proto::AttrValue::kFloats:
      return AttrValue::Floats(std::vector<double>(value.floats().value().begin(), value.floats().value().end()));
    case proto::AttrValue::kStrings:
      return AttrValue::Strings(
          std::vector<std::string>(value.strings().value().begin(), value.strings().value().end()));
    case proto::AttrValue::kTensor: {
      TSR_ASSIGN_OR_RETURN(Tensor tensor, TensorFromProto(value.tensor()));
      return AttrValue::FromTensor(std::move(tensor));
    }
    case proto::AttrValue::kType: {
      TSR_ASSIGN_OR_RETURN(DType dtype, DTypeFromProto(value.type()));
      return AttrValue::Type(dtype);
    }
    case proto::AttrValue::kShape: {
      TSR_ASSIGN_OR_RETURN(Shape shape, ShapeFromProto(value.shape()));
      return AttrValue::FromShape(std::move(shape));
    }
    case proto::AttrValue::VALUE_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      "attribute value is empty (none of i, f, s, b, ints, floats, strings, "
      "tensor, type, shape is set)");
}

}  // namespace tsr
