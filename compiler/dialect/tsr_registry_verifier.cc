// VerifyWithRegistry: the one verifier of every registry-generated tsr op. The op registry stays
// the single source of shape semantics: the op's operand types and attributes are converted
// back to Tessera's and the op's shape function decides the result types.
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/dialect/tsr_dialect.h"
#include "compiler/dialect/tsr_op_signature.h"
#include "compiler/dialect/tsr_type_conversion.h"
#include "graph/op_registry.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

namespace mlir::tsr {
namespace {

// Shape functions read constant inputs (Reshape's shape, Slice's starts); those are small.
// Larger constants are not converted on every verification (weights would cost a copy each
// time) and reach the shape function as non-constant inputs.
constexpr int64_t kMaxInferenceConstantElements = int64_t{1} << 16;

absl::string_view View(llvm::StringRef s) { return absl::string_view(s.data(), s.size()); }
// Diagnostics stream llvm::StringRef; an absl::string_view would print as a list of chars.
llvm::StringRef Ref(absl::string_view s) { return llvm::StringRef(s.data(), s.size()); }

// The graph node name: the op's NameLoc (possibly inside a FusedLoc or CallSiteLoc), else "".
std::string NodeName(Location loc) {
  if (auto name = llvm::dyn_cast<NameLoc>(loc)) return name.getName().str();
  if (auto fused = llvm::dyn_cast<FusedLoc>(loc)) {
    for (Location l : fused.getLocations()) {
      if (std::string n = NodeName(l); !n.empty()) return n;
    }
  }
  if (auto call = llvm::dyn_cast<CallSiteLoc>(loc)) return NodeName(call.getCallee());
  return "";
}

}  // namespace

LogicalResult VerifyWithRegistry(Operation* op) {
  const llvm::StringRef op_name = op->getName().stripDialect();
  const ::tsr::OpDef* def = ::tsr::OpRegistry::Global().Find(View(op_name));
  if (def == nullptr) return op->emitOpError() << "has no graph op '" << op_name << "' in the op registry";

  absl::StatusOr<std::vector<std::optional<Value>>> slots = InputSlots(op, *def);
  if (!slots.ok()) return op->emitOpError() << Ref(slots.status().message());
  std::vector<std::optional<::tsr::TensorType>> input_types;
  std::vector<::tsr::Tensor> constants;
  constants.reserve(slots->size());
  std::vector<const ::tsr::Tensor*> input_values;
  for (size_t i = 0; i < slots->size(); ++i) {
    const std::optional<Value>& v = (*slots)[i];
    if (!v.has_value()) {
      input_types.push_back(std::nullopt);
      input_values.push_back(nullptr);
      continue;
    }
    absl::StatusOr<::tsr::TensorType> type = ToTesseraType(v->getType());
    if (!type.ok()) return op->emitOpError() << "input " << i << ": " << Ref(type.status().message());
    input_types.push_back(*type);
    const ::tsr::Tensor* value = nullptr;
    if (auto constant = v->getDefiningOp<ConstantOp>()) {
      ElementsAttr elements = constant.getValue();
      if (elements.getNumElements() <= kMaxInferenceConstantElements) {
        absl::StatusOr<::tsr::Tensor> t = ToTensor(elements);
        if (t.ok()) {
          constants.push_back(*std::move(t));
          value = &constants.back();
        }
      }
    }
    input_values.push_back(value);
  }

  ::tsr::AttrMap attrs;
  for (const ::tsr::AttrDef& a : def->attrs) {
    std::optional<Attribute> attr = op->getInherentAttr(a.name);
    if (!attr.has_value() || !*attr) continue;
    absl::StatusOr<::tsr::AttrValue> value = ToAttrValue(*attr, a.type);
    if (!value.ok()) return op->emitOpError() << "attribute '" << a.name << "' " << Ref(value.status().message());
    attrs.emplace(a.name, *std::move(value));
  }

  std::string node_name = NodeName(op->getLoc());
  if (node_name.empty()) node_name = op_name.str();
  absl::StatusOr<std::vector<::tsr::TensorType>> inferred =
      ::tsr::InferOutputTypes(*def, node_name, attrs, std::move(input_types), std::move(input_values));
  if (!inferred.ok()) return op->emitOpError() << Ref(inferred.status().message());

  if (inferred->size() != op->getNumResults()) {
    return op->emitOpError() << "has " << op->getNumResults() << " results but the op registry infers "
                             << inferred->size();
  }
  for (unsigned i = 0; i < op->getNumResults(); ++i) {
    const Type expected = ToTensorType(op->getContext(), (*inferred)[i]);
    if (op->getResult(i).getType() != expected) {
      return op->emitOpError() << "result " << i << " has type " << op->getResult(i).getType()
                               << " but the op registry infers " << expected << " (" << (*inferred)[i].ToString()
                               << ")";
    }
  }
  return success();
}

}  // namespace mlir::tsr
