// Tessera value <-> MLIR attribute/type conversions (see tsr_type_conversion.h).
#include "compiler/dialect/tsr_type_conversion.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

namespace mlir::tsr {
namespace {

std::string Print(Attribute attr) {
  std::string s;
  llvm::raw_string_ostream os(s);
  // Large constants would flood the message: print the type only.
  if (auto elements = llvm::dyn_cast<ElementsAttr>(attr)) {
    os << "elements of type " << elements.getType();
  } else {
    os << attr;
  }
  return s;
}

std::string Print(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

}  // namespace

Type ToElementType(MLIRContext* context, ::tsr::DType dtype) {
  Builder b(context);
  switch (dtype) {
    case ::tsr::DType::kF32:
      return b.getF32Type();
    case ::tsr::DType::kF64:
      return b.getF64Type();
    case ::tsr::DType::kF16:
      return b.getF16Type();
    case ::tsr::DType::kBF16:
      return b.getBF16Type();
    case ::tsr::DType::kI8:
      return b.getIntegerType(8);
    case ::tsr::DType::kU8:
      return b.getIntegerType(8, /*isSigned=*/false);
    case ::tsr::DType::kI32:
      return b.getI32Type();
    case ::tsr::DType::kI64:
      return b.getI64Type();
    case ::tsr::DType::kBool:
      return b.getI1Type();
    case ::tsr::DType::kInvalid:
      break;
  }
  return Type();
}

absl::StatusOr<::tsr::DType> ToDType(Type t) {
  if (t.isF32()) return ::tsr::DType::kF32;
  if (t.isF64()) return ::tsr::DType::kF64;
  if (t.isF16()) return ::tsr::DType::kF16;
  if (t.isBF16()) return ::tsr::DType::kBF16;
  if (t.isSignlessInteger(8)) return ::tsr::DType::kI8;
  if (t.isUnsignedInteger(8)) return ::tsr::DType::kU8;
  if (t.isSignlessInteger(32)) return ::tsr::DType::kI32;
  if (t.isSignlessInteger(64)) return ::tsr::DType::kI64;
  if (t.isSignlessInteger(1)) return ::tsr::DType::kBool;
  return absl::InvalidArgumentError(
      absl::StrCat("element type ", Print(t), " has no Tessera dtype (f32 f64 f16 bf16 i8 ui8 i32 i64 i1)"));
}

RankedTensorType ToTensorType(MLIRContext* context, const ::tsr::TensorType& type) {
  std::vector<int64_t> dims = type.shape.dims();
  for (int64_t& d : dims) {
    if (d == ::tsr::kBatchDim) d = ShapedType::kDynamic;
  }
  return RankedTensorType::get(dims, ToElementType(context, type.dtype));
}

absl::StatusOr<::tsr::TensorType> ToTesseraType(Type type) {
  auto ranked = llvm::dyn_cast<RankedTensorType>(type);
  if (!ranked) return absl::InvalidArgumentError(absl::StrCat("type ", Print(type), " is not a ranked tensor"));
  absl::StatusOr<::tsr::DType> dtype = ToDType(ranked.getElementType());
  if (!dtype.ok()) return dtype.status();
  std::vector<int64_t> dims(ranked.getShape().begin(), ranked.getShape().end());
  for (int64_t& d : dims) {
    if (ShapedType::isDynamic(d)) d = ::tsr::kBatchDim;
  }
  ::tsr::Shape shape(std::move(dims));
  if (absl::Status s = shape.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("type ", Print(type), ": ", s.message()));
  }
  return ::tsr::TensorType(*dtype, std::move(shape));
}

DenseElementsAttr ToElementsAttr(MLIRContext* context, const ::tsr::Tensor& tensor) {
  auto type = ToTensorType(context, tensor.type());
  if (tensor.dtype() == ::tsr::DType::kBool) {
    // MLIR packs i1 elements as bits; Tessera stores one byte each.
    const auto* bytes = static_cast<const uint8_t*>(tensor.raw_data());
    llvm::SmallVector<bool> values(bytes, bytes + tensor.num_elements());
    for (bool& v : values) v = v != 0;
    return DenseElementsAttr::get(type, llvm::ArrayRef<bool>(values));
  }
  const char* data = static_cast<const char*>(tensor.raw_data());
  const size_t bytes = tensor.num_bytes();
  // getFromRawBuffer takes a one-element buffer as a splat; a whole buffer whose elements are
  // all equal is stored as a splat too, which keeps big zero-initialized constants small.
  const size_t elem = bytes / std::max<int64_t>(tensor.num_elements(), 1);
  bool splat = tensor.num_elements() > 0;
  for (size_t off = elem; splat && off < bytes; off += elem) splat = std::memcmp(data, data + off, elem) == 0;
  return DenseElementsAttr::getFromRawBuffer(type, llvm::ArrayRef<char>(data, splat ? elem : bytes));
}

absl::StatusOr<::tsr::Tensor> ToTensor(ElementsAttr attr) {
  absl::StatusOr<::tsr::TensorType> type = ToTesseraType(attr.getType());
  if (!type.ok()) return type.status();
  if (!type->shape.is_static()) return absl::InvalidArgumentError("a constant tensor must have a static shape");
  absl::StatusOr<::tsr::Tensor> created = ::tsr::Tensor::Create(type->dtype, type->shape);
  if (!created.ok()) return created.status();
  ::tsr::Tensor tensor = *std::move(created);
  char* out = static_cast<char*>(tensor.raw_data());
  const size_t bytes = tensor.num_bytes();
  if (auto dense = llvm::dyn_cast<DenseElementsAttr>(attr)) {
    if (type->dtype == ::tsr::DType::kBool) {
      int64_t i = 0;
      for (bool v : dense.getValues<bool>()) out[i++] = v ? 1 : 0;
      return tensor;
    }
    llvm::ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat()) {
      const size_t elem = ::tsr::DTypeSize(type->dtype);
      for (size_t off = 0; off < bytes; off += elem) std::memcpy(out + off, raw.data(), elem);
    } else {
      std::memcpy(out, raw.data(), bytes);
    }
    return tensor;
  }
  if (auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob* blob = resource.getRawHandle().getBlob();
    if (blob == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("dense resource '", resource.getRawHandle().getKey().str(), "' holds no data"));
    }
    llvm::ArrayRef<char> raw = blob->getData();
    if (type->dtype == ::tsr::DType::kBool || raw.size() != bytes) {
      return absl::InvalidArgumentError(absl::StrCat("dense resource '", resource.getRawHandle().getKey().str(),
                                                     "' holds ", raw.size(), " bytes but ", Print(attr.getType()),
                                                     " needs ", bytes));
    }
    std::memcpy(out, raw.data(), bytes);
    return tensor;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("only dense and dense resource constants are supported, not ", Print(Attribute(attr))));
}

Attribute ToMlirAttribute(MLIRContext* context, const ::tsr::AttrValue& v) {
  Builder b(context);
  switch (v.type()) {
    case ::tsr::AttrType::kInt:
      return b.getI64IntegerAttr(v.i());
    case ::tsr::AttrType::kFloat:
      return b.getF64FloatAttr(v.f());
    case ::tsr::AttrType::kString:
      return b.getStringAttr(v.s());
    case ::tsr::AttrType::kBool:
      return b.getBoolAttr(v.b());
    case ::tsr::AttrType::kInts:
      return b.getDenseI64ArrayAttr(v.ints());
    case ::tsr::AttrType::kFloats:
      return b.getDenseF64ArrayAttr(v.floats());
    case ::tsr::AttrType::kStrings: {
      llvm::SmallVector<llvm::StringRef> strings(v.strings().begin(), v.strings().end());
      return b.getStrArrayAttr(strings);
    }
    case ::tsr::AttrType::kTensor:
      return ToElementsAttr(context, v.tensor());
    case ::tsr::AttrType::kType:
      return TypeAttr::get(ToElementType(context, v.dtype()));
    case ::tsr::AttrType::kShape:
      return b.getDenseI64ArrayAttr(v.shape().dims());
  }
  return Attribute();
}

absl::StatusOr<::tsr::AttrValue> ToAttrValue(Attribute attr, ::tsr::AttrType type) {
  auto mismatch = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("holds ", Print(attr), " but a ", ::tsr::AttrTypeName(type), " attribute is expected"));
  };
  switch (type) {
    case ::tsr::AttrType::kInt:
      if (auto i = llvm::dyn_cast<IntegerAttr>(attr); i && i.getType().isSignlessInteger(64)) {
        return ::tsr::AttrValue::Int(i.getInt());
      }
      return mismatch();
    case ::tsr::AttrType::kFloat:
      if (auto f = llvm::dyn_cast<FloatAttr>(attr)) return ::tsr::AttrValue::Float(f.getValueAsDouble());
      return mismatch();
    case ::tsr::AttrType::kString:
      if (auto s = llvm::dyn_cast<StringAttr>(attr)) return ::tsr::AttrValue::String(s.str());
      return mismatch();
    case ::tsr::AttrType::kBool:
      if (auto bv = llvm::dyn_cast<BoolAttr>(attr)) return ::tsr::AttrValue::Bool(bv.getValue());
      return mismatch();
    case ::tsr::AttrType::kInts:
      if (auto a = llvm::dyn_cast<DenseI64ArrayAttr>(attr)) {
        return ::tsr::AttrValue::Ints(std::vector<int64_t>(a.asArrayRef().begin(), a.asArrayRef().end()));
      }
      return mismatch();
    case ::tsr::AttrType::kFloats:
      if (auto a = llvm::dyn_cast<DenseF64ArrayAttr>(attr)) {
        return ::tsr::AttrValue::Floats(std::vector<double>(a.asArrayRef().begin(), a.asArrayRef().end()));
      }
      return mismatch();
    case ::tsr::AttrType::kStrings:
      if (auto a = llvm::dyn_cast<ArrayAttr>(attr)) {
        std::vector<std::string> strings;
        for (Attribute e : a) {
          auto s = llvm::dyn_cast<StringAttr>(e);
          if (!s) return mismatch();
          strings.push_back(s.str());
        }
        return ::tsr::AttrValue::Strings(std::move(strings));
      }
      return mismatch();
    case ::tsr::AttrType::kTensor:
      if (auto e = llvm::dyn_cast<ElementsAttr>(attr)) {
        absl::StatusOr<::tsr::Tensor> t = ToTensor(e);
        if (!t.ok()) return t.status();
        return ::tsr::AttrValue::FromTensor(*std::move(t));
      }
      return mismatch();
    case ::tsr::AttrType::kType:
      if (auto t = llvm::dyn_cast<TypeAttr>(attr)) {
        absl::StatusOr<::tsr::DType> d = ToDType(t.getValue());
        if (!d.ok()) return d.status();
        return ::tsr::AttrValue::Type(*d);
      }
      return mismatch();
    case ::tsr::AttrType::kShape:
      if (auto a = llvm::dyn_cast<DenseI64ArrayAttr>(attr)) {
        ::tsr::Shape shape(std::vector<int64_t>(a.asArrayRef().begin(), a.asArrayRef().end()));
        if (absl::Status s = shape.Validate(); !s.ok()) return s;
        return ::tsr::AttrValue::FromShape(std::move(shape));
      }
      return mismatch();
  }
  return mismatch();
}

}  // namespace mlir::tsr
