// Conversions between Tessera's graph-level values and their MLIR form in the tsr dialect:
// dtypes <-> element types, TensorType <-> RankedTensorType (Tessera's symbolic batch
// dimension N is a dynamic dimension), Tensor <-> ElementsAttr and AttrValue <-> Attribute.
// Used by the shared op verifier and by Graph<->tsr conversion. MLIR-level header.
#ifndef TESSERA_COMPILER_DIALECT_TSR_TYPE_CONVERSION_H_
#define TESSERA_COMPILER_DIALECT_TSR_TYPE_CONVERSION_H_

#include "absl/status/statusor.h"
#include "graph/attribute.h"
#include "graph/tensor.h"
#include "graph/tensor_type.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

namespace mlir::tsr {

// f32 f64 f16 bf16 -> F32 F64 F16 BF16; i8 -> signless i8; u8 -> ui8; i32 i64 -> signless;
// bool -> i1.
Type ToElementType(MLIRContext* context, ::tsr::DType dtype);
absl::StatusOr<::tsr::DType> ToDType(Type element_type);

RankedTensorType ToTensorType(MLIRContext* context, const ::tsr::TensorType& type);
// Fails for unranked tensors, non-tensors and element types Tessera has no dtype for.
absl::StatusOr<::tsr::TensorType> ToTesseraType(Type type);

// A dense elements attribute holding a copy of the tensor's bytes.
DenseElementsAttr ToElementsAttr(MLIRContext* context, const ::tsr::Tensor& tensor);
// Dense and dense-resource attributes; splats are expanded.
absl::StatusOr<::tsr::Tensor> ToTensor(ElementsAttr attr);

// int -> i64, float -> f64, string -> string, bool -> bool, ints and shape -> array<i64>
// (shape: -1 is the batch dim), floats -> array<f64>, strings -> array of strings,
// tensor -> dense elements, dtype -> its element type as a TypeAttr.
Attribute ToMlirAttribute(MLIRContext* context, const ::tsr::AttrValue& value);
// Reads `attr` as an attribute of Tessera type `type`; fails naming the expectation.
absl::StatusOr<::tsr::AttrValue> ToAttrValue(Attribute attr, ::tsr::AttrType type);

}  // namespace mlir::tsr

#endif  // TESSERA_COMPILER_DIALECT_TSR_TYPE_CONVERSION_H_
