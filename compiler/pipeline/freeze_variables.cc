// FreezeVariables (see freeze_variables.h).
#include "compiler/pipeline/freeze_variables.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/conversion/op_names.h"
#include "compiler/dialect/tsr_dialect.h"
#include "compiler/dialect/tsr_type_conversion.h"
#include "graph/op_registry.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"

namespace tsr {

absl::StatusOr<mlir::ElementsAttr> VariableValue(mlir::Operation* op, const std::map<std::string, Tensor>& values) {
  const std::string name = NodeNameOf(op->getLoc()).value_or(DescribeOp(op));
  mlir::ElementsAttr value;
  if (std::optional<mlir::Attribute> attr = op->getInherentAttr("value"); attr.has_value() && *attr) {
    value = llvm::dyn_cast<mlir::ElementsAttr>(*attr);
  } else if (auto it = values.find(name); it != values.end()) {
    value = mlir::tsr::ToElementsAttr(op->getContext(), it->second);
  }
  if (!value) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Variable '", name, "' holds no value: compile a model saved after training, or give its values"));
  }
  const mlir::Type type = op->getResult(0).getType();
  if (value.getType() != type) {
    std::string want, got;
    llvm::raw_string_ostream(want) << type;
    llvm::raw_string_ostream(got) << value.getType();
    return absl::InvalidArgumentError(absl::StrCat("Variable '", name, "' is ", want, " but its value is ", got));
  }
  return value;
}

void DropUntargetedUpdates(mlir::ModuleOp module, const std::vector<std::string>& targets) {
  std::vector<mlir::Operation*> dropped;
  module.walk([&](mlir::Operation* op) {
    if (op->getDialect() == nullptr || op->getDialect()->getNamespace() != "tsr") return;
    const OpDef* def = OpRegistry::Global().Find(op->getName().stripDialect().str());
    if (def == nullptr || def->variable_updates.empty() || !op->use_empty()) return;
    const std::optional<std::string> name = NodeNameOf(op->getLoc());
    if (name.has_value() && std::find(targets.begin(), targets.end(), *name) != targets.end()) return;
    dropped.push_back(op);
  });
  for (mlir::Operation* op : dropped) op->erase();
}

absl::Status FreezeVariables(mlir::ModuleOp module, const std::map<std::string, Tensor>& values) {
  std::vector<mlir::Operation*> variables;
  module.walk([&](mlir::Operation* op) {
    if (op->getName().getStringRef() == "tsr.Variable") variables.push_back(op);
  });
  mlir::OpBuilder builder(module.getContext());
  for (mlir::Operation* op : variables) {
    absl::StatusOr<mlir::ElementsAttr> value = VariableValue(op, values);
    if (!value.ok()) return value.status();
    const mlir::Type type = op->getResult(0).getType();
    builder.setInsertionPoint(op);
    auto constant = builder.create<mlir::tsr::ConstantOp>(op->getLoc(), type, *value);
    op->getResult(0).replaceAllUsesWith(constant.getResult());
    op->erase();
  }
  return absl::OkStatus();
}

}  // namespace tsr
