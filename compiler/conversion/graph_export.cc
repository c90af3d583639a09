// ExportGraph: tsr module -> Graph (see graph_tsr.h).
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/conversion/graph_tsr.h"
#include "compiler/conversion/op_names.h"
#include "compiler/dialect/tsr_dialect.h"
#include "compiler/dialect/tsr_op_signature.h"
#include "compiler/dialect/tsr_type_conversion.h"
#include "graph/op_registry.h"
#include "graph/status_macros.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tsr {
namespace {

absl::StatusOr<mlir::func::FuncOp> MainFunction(mlir::ModuleOp module) {
  mlir::func::FuncOp main, only;
  int count = 0;
  for (auto f : module.getOps<mlir::func::FuncOp>()) {
    ++count;
    only = f;
    if (f.getName() == "main") main = f;
  }
  if (main) return main;
  if (count == 1) return only;
  return absl::InvalidArgumentError(absl::StrCat("the module has ", count, " functions and none is named @main"));
}

class GraphExporter {
 public:
  absl::StatusOr<Graph> Run(mlir::ModuleOp module) {
    TSR_ASSIGN_OR_RETURN(mlir::func::FuncOp func, MainFunction(module));
    if (!func.getBody().hasOneBlock()) {
      return absl::InvalidArgumentError(absl::StrCat("@", func.getName().str(), " must have exactly one block"));
    }
    mlir::Block& body = func.getBody().front();
    for (mlir::BlockArgument arg : body.getArguments()) {
      const unsigned i = arg.getArgNumber();
      auto name_attr = func.getArgAttrOfType<mlir::StringAttr>(i, mlir::tsr::kNameAttrName);
      absl::StatusOr<TensorType> type = mlir::tsr::ToTesseraType(arg.getType());
      if (!type.ok()) return absl::InvalidArgumentError(absl::StrCat("argument ", i, ": ", type.status().message()));
      std::string node_name = NodeNameOf(arg.getLoc()).value_or(name_attr ? name_attr.str() : absl::StrCat("arg", i));
      TSR_ASSIGN_OR_RETURN(Node * node, AddNode(std::move(node_name), "Placeholder", {},
                                                {{"dtype", AttrValue::Type(type->dtype)},
                                                 {"shape", AttrValue::FromShape(type->shape)}}));
      values_[arg] = node->output(0);
      if (name_attr) TSR_RETURN_IF_ERROR(graph_.AddInput(name_attr.str(), node->output(0)));
    }
    for (mlir::Operation& op : body) {
      if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
        for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
          auto name_attr = func.getResultAttrOfType<mlir::StringAttr>(i, mlir::tsr::kNameAttrName);
          TSR_RETURN_IF_ERROR(graph_.AddOutput(name_attr ? name_attr.str() : absl::StrCat("output", i),
                                               values_.lookup(ret.getOperand(i))));
        }
        continue;
      }
      TSR_RETURN_IF_ERROR(ExportOp(&op));
    }
    return std::move(graph_);
  }

 private:
  absl::StatusOr<Node*> AddNode(std::string name, const std::string& op, std::vector<TensorRef> inputs, AttrMap attrs) {
    if (name.empty() || graph_.FindNode(name) != nullptr) name = graph_.UniqueName(name.empty() ? op : name);
    return graph_.AddNodeAndInfer(std::move(name), op, std::move(inputs), std::move(attrs));
  }

  absl::Status ExportOp(mlir::Operation* op) {
    if (op->getDialect() == nullptr || op->getDialect()->getNamespace() != "tsr") {
      return absl::InvalidArgumentError(absl::StrCat("op ", DescribeOp(op), " is not a tsr op; only tsr ops convert"));
    }
    const std::string op_name = op->getName().stripDialect().str();
    const OpDef* def = graph_.registry().Find(op_name);
    if (def == nullptr) return absl::InvalidArgumentError(absl::StrCat("op ", DescribeOp(op), " is not registered"));
    absl::StatusOr<std::vector<std::optional<mlir::Value>>> slots = mlir::tsr::InputSlots(op, *def);
    if (!slots.ok())
      return absl::InvalidArgumentError(absl::StrCat("op ", DescribeOp(op), ": ", slots.status().message()));
    std::vector<TensorRef> inputs;
    for (const std::optional<mlir::Value>& v : *slots) {
      inputs.push_back(v.has_value() ? values_.lookup(*v) : TensorRef::None());
    }
    absl::StatusOr<AttrMap> attrs = mlir::tsr::NodeAttrs(op, *def);
    if (!attrs.ok()) return absl::InvalidArgumentError(absl::StrCat("op ", DescribeOp(op), ": ", attrs.status().message()));
    absl::StatusOr<Node*> node =
        AddNode(NodeNameOf(op->getLoc()).value_or(""), op_name, std::move(inputs), *std::move(attrs));
    if (!node.ok()) return absl::InvalidArgumentError(absl::StrCat("op ", DescribeOp(op), ": ", node.status().message()));
    if ((*node)->num_outputs() != static_cast<int>(op->getNumResults())) {
      return absl::InvalidArgumentError(absl::StrCat("op ", DescribeOp(op), " has ", op->getNumResults(),
                                                     " results but the graph node infers ", (*node)->num_outputs()));
    }
    for (unsigned i = 0; i < op->getNumResults(); ++i) {
      const mlir::Type inferred = mlir::tsr::ToTensorType(op->getContext(), (*node)->output_type(i));
      if (inferred != op->getResult(i).getType()) {
        return absl::InvalidArgumentError(absl::StrCat("op ", DescribeOp(op), ": result ", i,
                                                       " has another type than the ",
                                                       (*node)->output_type(i).ToString(), " the registry infers"));
      }
      values_[op->getResult(i)] = (*node)->output(i);
    }
    return absl::OkStatus();
  }

  Graph graph_;
  llvm::DenseMap<mlir::Value, TensorRef> values_;
};

}  // namespace

absl::StatusOr<Graph> ExportGraph(mlir::ModuleOp module) { return GraphExporter().Run(module); }

}  // namespace tsr
