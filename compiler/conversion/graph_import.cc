// ImportGraph: Graph -> tsr module (see graph_tsr.h).
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/conversion/graph_tsr.h"
#include "compiler/conversion/mlir_diagnostics.h"
#include "compiler/dialect/tsr_dialect.h"
#include "compiler/dialect/tsr_op_signature.h"
#include "compiler/dialect/tsr_type_conversion.h"
#include "graph/status_macros.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

namespace tsr {
namespace {

using mlir::tsr::ToTensorType;

std::string NodeError(const Node& node, absl::string_view message) {
  return absl::StrCat("node '", node.name(), "' (", node.op(), "): ", message);
}

class GraphImporter {
 public:
  GraphImporter(mlir::MLIRContext& context, const Graph& graph)
      : context_(context), graph_(graph), builder_(&context) {}

  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> Run() {
    TSR_ASSIGN_OR_RETURN(std::vector<const Node*> order, graph_.TopologicalOrder());
    mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(builder_.getUnknownLoc());
    TSR_RETURN_IF_ERROR(CollectArguments(order));

    llvm::SmallVector<mlir::Type> arg_types;
    llvm::SmallVector<mlir::Location> arg_locs;
    for (const Node* p : arguments_) {
      if (p->num_outputs() != 1) return absl::InvalidArgumentError(NodeError(*p, "has no inferred type"));
      arg_types.push_back(ToTensorType(&context_, p->output_type(0)));
      arg_locs.push_back(Loc(*p));
    }
    llvm::SmallVector<mlir::Type> result_types;
    for (const SignatureEntry& out : graph_.outputs()) {
      const TensorType* t = graph_.TypeOf(out.ref);
      if (t == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("graph output '", out.name, "' has no inferred type"));
      }
      result_types.push_back(ToTensorType(&context_, *t));
    }
    builder_.setInsertionPointToEnd(module->getBody());
    auto func = builder_.create<mlir::func::FuncOp>(builder_.getUnknownLoc(), "main",
                                                    builder_.getFunctionType(arg_types, result_types));
    mlir::Block* body = func.addEntryBlock();
    for (size_t i = 0; i < arguments_.size(); ++i) {
      body->getArgument(i).setLoc(arg_locs[i]);
      values_[arguments_[i]->output(0)] = body->getArgument(i);
      if (auto it = input_names_.find(arguments_[i]->id()); it != input_names_.end()) {
        func.setArgAttr(i, mlir::tsr::kNameAttrName, builder_.getStringAttr(it->second));
      }
    }
    builder_.setInsertionPointToEnd(body);
    for (const Node* node : order) {
      if (node->op() == "Placeholder") continue;
      TSR_RETURN_IF_ERROR(ImportNode(*node));
    }
    llvm::SmallVector<mlir::Value> results;
    for (size_t i = 0; i < graph_.outputs().size(); ++i) {
      const SignatureEntry& out = graph_.outputs()[i];
      auto it = values_.find(out.ref);
      if (it == values_.end()) {
        return absl::InvalidArgumentError(absl::StrCat("graph output '", out.name, "' refers to a missing tensor"));
      }
      results.push_back(it->second);
      func.setResultAttr(i, mlir::tsr::kNameAttrName, builder_.getStringAttr(out.name));
    }
    builder_.create<mlir::func::ReturnOp>(builder_.getUnknownLoc(), results);

    DiagnosticCollector diagnostics(context_);
    if (mlir::failed(mlir::verify(*module))) return diagnostics.Error("the imported module does not verify");
    return module;
  }

 private:
  mlir::Location Loc(const Node& node) { return mlir::NameLoc::get(builder_.getStringAttr(node.name())); }

  // Placeholders become function arguments: signature inputs first, in signature order.
  absl::Status CollectArguments(const std::vector<const Node*>& order) {
    for (const SignatureEntry& in : graph_.inputs()) {
      const Node* node = graph_.node(in.ref.node);
      if (node == nullptr || node->op() != "Placeholder" || in.ref.index != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "graph input '", in.name, "' must name a Placeholder's output (it is '", graph_.TensorName(in.ref), "')"));
      }
      if (!input_names_.emplace(node->id(), in.name).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("Placeholder '", node->name(), "' is fed by two graph inputs; one argument each"));
      }
      arguments_.push_back(node);
    }
    for (const Node* node : order) {
      if (node->op() == "Placeholder" && !input_names_.contains(node->id())) arguments_.push_back(node);
    }
    return absl::OkStatus();
  }

  absl::Status ImportNode(const Node& node) {
    const OpDef* def = node.op_def();
    if (def == nullptr) return absl::InvalidArgumentError(NodeError(node, "the op is not registered"));
    if (node.num_outputs() == 0 && def->min_outputs() > 0) {
      return absl::InvalidArgumentError(NodeError(node, "has no inferred output types (run InferAllTypes)"));
    }
    std::vector<std::optional<mlir::Value>> slots;
    for (int i = 0; i < node.num_inputs(); ++i) {
      const TensorRef ref = node.input(i);
      if (!ref.valid()) {
        slots.push_back(std::nullopt);
        continue;
      }
      auto it = values_.find(ref);
      if (it == values_.end()) {
        return absl::InvalidArgumentError(NodeError(
            node, absl::StrCat("input ", i, " refers to '", graph_.TensorName(ref), "', which has no value")));
      }
      slots.push_back(it->second);
    }
    absl::StatusOr<mlir::tsr::OperandLayout> layout = mlir::tsr::OperandsFromSlots(*def, slots);
    if (!layout.ok()) return absl::InvalidArgumentError(NodeError(node, layout.status().message()));

    mlir::OperationState state(Loc(node), absl::StrCat("tsr.", node.op()));
    state.addOperands(layout->operands);
    for (const TensorType& t : node.output_types()) state.addTypes(ToTensorType(&context_, t));
    for (const auto& [name, value] : node.attrs()) {
      if (def->FindAttr(name) == nullptr) {
        return absl::InvalidArgumentError(NodeError(node, absl::StrCat("unknown attribute '", name, "'")));
      }
      if (value.type() == AttrType::kTensor && !value.tensor().valid()) {
        return absl::InvalidArgumentError(NodeError(node, absl::StrCat("attribute '", name, "' holds no tensor")));
      }
      state.addAttribute(name, mlir::tsr::ToMlirAttribute(&context_, value));
    }
    if (mlir::tsr::NeedsSegmentSizes(def->inputs)) {
      state.addAttribute("operandSegmentSizes", builder_.getDenseI32ArrayAttr(layout->segment_sizes));
    }
    if (mlir::tsr::NeedsSegmentSizes(def->outputs)) {
      absl::StatusOr<llvm::SmallVector<int32_t>> sizes = mlir::tsr::ResultSegmentSizes(*def, node.num_outputs());
      if (!sizes.ok()) return absl::InvalidArgumentError(NodeError(node, sizes.status().message()));
      state.addAttribute("resultSegmentSizes", builder_.getDenseI32ArrayAttr(*sizes));
    }
    mlir::Operation* op = builder_.create(state);
    for (int i = 0; i < node.num_outputs(); ++i) values_[node.output(i)] = op->getResult(i);
    return absl::OkStatus();
  }

  mlir::MLIRContext& context_;
  const Graph& graph_;
  mlir::OpBuilder builder_;
  std::vector<const Node*> arguments_;
  absl::flat_hash_map<int, std::string> input_names_;  // Placeholder id -> signature name
  absl::flat_hash_map<TensorRef, mlir::Value> values_;
};

}  // namespace

void RegisterGraphDialects(mlir::DialectRegistry& registry) {
  registry.insert<mlir::tsr::TsrDialect, mlir::func::FuncDialect>();
}

absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> ImportGraph(mlir::MLIRContext& context, const Graph& graph) {
  context.loadDialect<mlir::tsr::TsrDialect, mlir::func::FuncDialect>();
  return GraphImporter(context, graph).Run();
}

}  // namespace tsr
