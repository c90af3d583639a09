// BuildExecutableSteps (see executable_builder.h).
#include "compiler/pipeline/executable_builder.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/conversion/op_names.h"
#include "compiler/dialect/tsr_dialect.h"
#include "compiler/dialect/tsr_op_signature.h"
#include "compiler/dialect/tsr_type_conversion.h"
#include "compiler/pipeline/freeze_variables.h"
#include "graph/op_registry.h"
#include "graph/status_macros.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/SymbolTable.h"

namespace tsr {
namespace {

// A call the outliner gave the function of one block (tsr.tile_callee, tsr.tiles): the step
// calls that function once per block instead; an argument whose type differs from the block
// function's is cut into `tiles` back-to-back blocks of the block type's size.
absl::Status UseTileFunction(mlir::func::CallOp call, ExecutableStep* step) {
  auto callee = call->getAttrOfType<mlir::FlatSymbolRefAttr>(mlir::tsr::kTileCalleeAttrName);
  if (!callee) return absl::OkStatus();
  const std::string where = absl::StrCat("the call of @", step->name, " (tiled as @", callee.getValue().str(), ")");
  auto tiles = call->getAttrOfType<mlir::IntegerAttr>(mlir::tsr::kTilesAttrName);
  if (!tiles || tiles.getInt() < 2) return absl::InvalidArgumentError(absl::StrCat(where, " has no tile count >= 2"));
  auto f = mlir::SymbolTable::lookupNearestSymbolFrom<mlir::func::FuncOp>(call, callee.getAttr());
  if (!f) return absl::InvalidArgumentError(absl::StrCat(where, ": the tile function is not defined"));
  const mlir::FunctionType type = f.getFunctionType();
  if (type.getNumInputs() != call.getNumOperands() || type.getNumResults() != call.getNumResults()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": the tile function's arity differs"));
  }
  const int64_t count = tiles.getInt();
  const auto stride = [&](mlir::Type whole, mlir::Type block) -> absl::StatusOr<int64_t> {
    if (whole == block) return 0;
    auto w = llvm::dyn_cast<mlir::RankedTensorType>(whole);
    auto b = llvm::dyn_cast<mlir::RankedTensorType>(block);
    if (!w || !b || !w.hasStaticShape() || !b.hasStaticShape() || w.getElementType() != b.getElementType() ||
        b.getNumElements() * count != w.getNumElements()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": a block type does not cut its argument into ", count));
    }
    return b.getNumElements() * ((b.getElementTypeBitWidth() + 7) / 8);
  };
  std::vector<int64_t> strides;
  for (auto [operand, block] : llvm::zip(call.getOperandTypes(), type.getInputs())) {
    TSR_ASSIGN_OR_RETURN(int64_t s, stride(operand, block));
    strides.push_back(s);
  }
  for (auto [result, block] : llvm::zip(call.getResultTypes(), type.getResults())) {
    TSR_ASSIGN_OR_RETURN(int64_t s, stride(result, block));
    strides.push_back(s);
  }
  step->name = callee.getValue().str();
  step->tiles = count;
  step->tile_strides = std::move(strides);
  return absl::OkStatus();
}

class StepBuilder {
 public:
  explicit StepBuilder(const std::map<std::string, Tensor>& variable_values) : variable_values_(variable_values) {}

  absl::StatusOr<Executable> Run(mlir::func::FuncOp main) {
    if (!main.getBody().hasOneBlock()) {
      return absl::InvalidArgumentError(absl::StrCat("@", main.getName().str(), " must have exactly one block"));
    }
    mlir::Block& body = main.getBody().front();
    auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(body.getTerminator());
    if (!ret) return absl::InvalidArgumentError("@main does not end with func.return");
    // The first return of each op result makes it an output in place.
    for (mlir::Value v : ret.getOperands()) {
      mlir::Operation* def = v.getDefiningOp();
      if (def != nullptr && !llvm::isa<mlir::tsr::ConstantOp>(def) && def->getName().getStringRef() != "tsr.Variable") {
        returned_.insert(v);
      }
    }

    for (mlir::BlockArgument arg : body.getArguments()) {
      const unsigned i = arg.getArgNumber();
      auto name_attr = main.getArgAttrOfType<mlir::StringAttr>(i, mlir::tsr::kNameAttrName);
      // A Placeholder outside the signature (nn::TrainingFlag's "training") is fed by its
      // node name, as Session::Run feeds it.
      const std::string name =
          name_attr ? name_attr.str() : NodeNameOf(arg.getLoc()).value_or(absl::StrCat("input", i));
      TSR_ASSIGN_OR_RETURN(int id, AddValue(arg, NodeNameOf(arg.getLoc()).value_or(name), ValueLocation::kInput,
                                            absl::StrCat("argument ", i, " ('", name, "')")));
      e_.inputs.push_back({name, id});
    }
    for (mlir::Operation& op : body) {
      if (&op == ret.getOperation()) continue;
      TSR_RETURN_IF_ERROR(AddOp(&op));
    }
    llvm::DenseSet<int> claimed;
    for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
      auto name_attr = main.getResultAttrOfType<mlir::StringAttr>(i, mlir::tsr::kNameAttrName);
      const std::string name = name_attr ? name_attr.str() : absl::StrCat("output", i);
      int id = ids_.lookup(ret.getOperand(i));
      if (e_.values[id].location != ValueLocation::kOutput || !claimed.insert(id).second) {
        // An input, a constant or a value returned twice: copied into an output of its own.
        ExecutableValue copy = e_.values[id];
        copy.name = name;
        copy.location = ValueLocation::kOutput;
        e_.values.push_back(std::move(copy));
        const int out = static_cast<int>(e_.values.size()) - 1;
        ExecutableStep step;
        step.name = "Identity";
        step.inputs = {id};
        step.outputs = {out};
        e_.steps.push_back(std::move(step));
        id = out;
        claimed.insert(id);
      }
      e_.outputs.push_back({name, id});
    }
    // New variable values, after every step that reads the old ones -- or written by the
    // update itself where nothing after it reads the old value.
    for (const auto& [variable, value] : commits_) {
      if (UpdatesInPlace(variable, value)) continue;
      ExecutableStep step;
      step.name = "Identity";
      step.inputs = {value};
      step.outputs = {variable};
      e_.steps.push_back(std::move(step));
    }
    // Highest first, so that removing one renumbers none of those still to go.
    for (auto it = commit_variable_.rbegin(); it != commit_variable_.rend(); ++it) ReplaceValue(it->first, it->second);
    return std::move(e_);
  }

 private:
  // Whether the update step writing `value` (the new value of `variable`) may write it
  // into the variable directly: no step after it reads the variable's old value or the
  // new one (a variable is read only before its write: ValidateExecutable), the value is
  // a temporary (not also returned), and the step reads the variable only at the input
  // its output updates (an update kernel reads each element of its state
  // before writing the same element, so it runs in place). An SGD-with-momentum step
  // then writes the weights and velocities once instead of into temporaries copied at
  // the end of the run (the MLP's 2 MB a step).
  bool UpdatesInPlace(int variable, int value) {
    if (e_.values[value].location != ValueLocation::kArena) return false;
    int writer = -1;
    for (int s = 0; s < static_cast<int>(e_.steps.size()) && writer < 0; ++s) {
      if (absl::c_linear_search(e_.steps[s].outputs, value)) writer = s;
    }
    if (writer < 0) return false;
    const ExecutableStep& update = e_.steps[writer];
    const OpDef* def = OpRegistry::Global().Find(update.name);
    if (update.kind != ExecutableStep::Kind::kKernel || def == nullptr) return false;
    for (size_t i = 0; i < update.inputs.size(); ++i) {
      if (update.inputs[i] != variable) continue;
      const auto slot = absl::c_find(def->variable_updates, static_cast<int>(i));
      if (slot == def->variable_updates.end() || update.outputs[slot - def->variable_updates.begin()] != value) {
        return false;
      }
    }
    for (size_t s = writer + 1; s < e_.steps.size(); ++s) {
      const std::vector<int>& inputs = e_.steps[s].inputs;
      if (absl::c_linear_search(inputs, variable) || absl::c_linear_search(inputs, value)) return false;
    }
    commit_variable_[value] = variable;
    return true;
  }

  // Every use of value `from` becomes one of `to`, and `from` leaves the values (the
  // ids above it, `to` included, move down by one).
  void ReplaceValue(int from, int to) {
    if (to > from) --to;
    const auto renumber = [&](int& id) {
      if (id == from) {
        id = to;
      } else if (id > from) {
        --id;
      }
    };
    for (ExecutableStep& step : e_.steps) {
      for (int& id : step.inputs) renumber(id);
      for (int& id : step.outputs) renumber(id);
    }
    for (NamedValue& v : e_.inputs) renumber(v.value);
    for (NamedValue& v : e_.outputs) renumber(v.value);
    for (ExecutableConstant& c : e_.constants) renumber(c.value);
    for (auto& [value, variable] : commit_variable_) {
      if (variable > from) --variable;
    }
    e_.values.erase(e_.values.begin() + from);
  }

  absl::StatusOr<int> AddValue(mlir::Value v, std::string name, ValueLocation location, const std::string& what) {
    absl::StatusOr<TensorType> type = mlir::tsr::ToTesseraType(v.getType());
    if (!type.ok()) return absl::InvalidArgumentError(absl::StrCat(what, ": ", type.status().message()));
    if (!type->shape.is_static()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " has the shape ", type->shape.ToString(), ", which is not static"));
    }
    ExecutableValue value;
    value.name = std::move(name);
    value.dtype = type->dtype;
    value.shape = type->shape;
    value.location = location;
    e_.values.push_back(std::move(value));
    const int id = static_cast<int>(e_.values.size()) - 1;
    ids_[v] = id;
    return id;
  }

  // Values for the op's results: outputs where @main returns them, else temporaries.
  absl::StatusOr<std::vector<int>> AddResults(mlir::Operation* op, const std::string& base) {
    std::vector<int> ids;
    for (unsigned i = 0; i < op->getNumResults(); ++i) {
      mlir::Value r = op->getResult(i);
      const ValueLocation where = returned_.contains(r) ? ValueLocation::kOutput : ValueLocation::kArena;
      TSR_ASSIGN_OR_RETURN(int id, AddValue(r, i == 0 ? base : absl::StrCat(base, ":", i), where,
                                            absl::StrCat("result ", i, " of ", DescribeOp(op))));
      ids.push_back(id);
    }
    return ids;
  }

  absl::StatusOr<std::vector<int>> OperandIds(mlir::Operation* op,
                                              const std::vector<std::optional<mlir::Value>>& slots) {
    std::vector<int> ids;
    for (const std::optional<mlir::Value>& v : slots) {
      if (!v.has_value()) {
        ids.push_back(-1);
        continue;
      }
      auto it = ids_.find(*v);
      if (it == ids_.end()) {
        return absl::InvalidArgumentError(absl::StrCat(DescribeOp(op), " reads a value defined outside @main's body"));
      }
      ids.push_back(it->second);
    }
    return ids;
  }

  std::string BaseName(mlir::Operation* op, absl::string_view fallback) {
    if (std::optional<std::string> name = NodeNameOf(op->getLoc())) return *name;
    return absl::StrCat(fallback, "_", unnamed_++);
  }

  absl::Status AddOp(mlir::Operation* op) {
    if (auto constant = llvm::dyn_cast<mlir::tsr::ConstantOp>(op)) return AddConstant(constant);
    if (auto cast = llvm::dyn_cast<mlir::UnrealizedConversionCastOp>(op)) {
      // The outliner's view of bool data as bytes (fusion_outlining.h): the same buffer.
      if (cast.getNumOperands() != 1 || cast.getNumResults() != 1 || !ids_.count(cast.getOperand(0))) {
        return absl::InvalidArgumentError(absl::StrCat(DescribeOp(op), " is not a one-to-one reinterpretation"));
      }
      ids_[cast.getResult(0)] = ids_.lookup(cast.getOperand(0));
      return absl::OkStatus();
    }
    if (auto call = llvm::dyn_cast<mlir::func::CallOp>(op)) {
      ExecutableStep step;
      step.kind = ExecutableStep::Kind::kFunction;
      step.name = call.getCallee().str();
      std::vector<std::optional<mlir::Value>> operands(call.getOperands().begin(), call.getOperands().end());
      TSR_ASSIGN_OR_RETURN(step.inputs, OperandIds(op, operands));
      TSR_ASSIGN_OR_RETURN(step.outputs, AddResults(op, BaseName(op, step.name)));
      TSR_RETURN_IF_ERROR(UseTileFunction(call, &step));
      e_.steps.push_back(std::move(step));
      return absl::OkStatus();
    }
    if (op->getDialect() == nullptr || op->getDialect()->getNamespace() != "tsr") {
      return absl::InvalidArgumentError(
          absl::StrCat(DescribeOp(op), " is neither a tsr op nor a call of a compiled function"));
    }
    const std::string op_name = op->getName().stripDialect().str();
    const OpDef* def = OpRegistry::Global().Find(op_name);
    if (def == nullptr) return absl::InvalidArgumentError(absl::StrCat(DescribeOp(op), " is not a registered op"));
    if (op_name == "Variable") return AddVariable(op);
    ExecutableStep step;
    step.name = op_name;
    absl::StatusOr<std::vector<std::optional<mlir::Value>>> slots = mlir::tsr::InputSlots(op, *def);
    if (!slots.ok()) return absl::InvalidArgumentError(absl::StrCat(DescribeOp(op), ": ", slots.status().message()));
    TSR_ASSIGN_OR_RETURN(step.inputs, OperandIds(op, *slots));
    absl::StatusOr<AttrMap> attrs = mlir::tsr::NodeAttrs(op, *def);
    if (!attrs.ok()) return absl::InvalidArgumentError(absl::StrCat(DescribeOp(op), ": ", attrs.status().message()));
    step.attrs = *std::move(attrs);
    TSR_ASSIGN_OR_RETURN(step.outputs, AddResults(op, BaseName(op, op_name)));
    for (size_t i = 0; i < def->variable_updates.size() && i < step.outputs.size(); ++i) {
      const int slot = def->variable_updates[i];
      const int variable = slot < static_cast<int>(step.inputs.size()) ? step.inputs[slot] : -1;
      if (variable < 0 || e_.values[variable].location != ValueLocation::kVariable) {
        return absl::InvalidArgumentError(
            absl::StrCat(DescribeOp(op), ": input ", slot, " must be a Variable, which output ", i, " updates"));
      }
      for (const auto& [earlier, unused] : commits_) {
        if (earlier == variable) {
          return absl::InvalidArgumentError(absl::StrCat(DescribeOp(op), " updates Variable '",
                                                         e_.values[variable].name, "', which another op updates"));
        }
      }
      commits_.emplace_back(variable, step.outputs[i]);
    }
    e_.steps.push_back(std::move(step));
    return absl::OkStatus();
  }

  // A Variable kept as state, named by its graph node, with its initial value.
  absl::Status AddVariable(mlir::Operation* op) {
    absl::StatusOr<mlir::ElementsAttr> attr = VariableValue(op, variable_values_);
    if (!attr.ok()) return attr.status();
    absl::StatusOr<Tensor> value = mlir::tsr::ToTensor(*attr);
    if (!value.ok()) return absl::InvalidArgumentError(absl::StrCat(DescribeOp(op), ": ", value.status().message()));
    TSR_ASSIGN_OR_RETURN(
        int id, AddValue(op->getResult(0), BaseName(op, "variable"), ValueLocation::kVariable, DescribeOp(op)));
    e_.constants.push_back({id, std::string(static_cast<const char*>(value->raw_data()), value->num_bytes())});
    return absl::OkStatus();
  }

  absl::Status AddConstant(mlir::tsr::ConstantOp constant) {
    mlir::Operation* op = constant.getOperation();
    absl::StatusOr<Tensor> value = mlir::tsr::ToTensor(constant.getValue());
    if (!value.ok()) return absl::InvalidArgumentError(absl::StrCat(DescribeOp(op), ": ", value.status().message()));
    TSR_ASSIGN_OR_RETURN(
        int id, AddValue(constant.getResult(), BaseName(op, "constant"), ValueLocation::kConstant, DescribeOp(op)));
    if (e_.values[id].size_bytes() != static_cast<int64_t>(value->num_bytes())) {
      return absl::InternalError(absl::StrCat(DescribeOp(op), ": the value holds ", value->num_bytes(),
                                              " bytes but its type needs ", e_.values[id].size_bytes()));
    }
    e_.constants.push_back({id, std::string(static_cast<const char*>(value->raw_data()), value->num_bytes())});
    return absl::OkStatus();
  }

  Executable e_;
  llvm::DenseMap<mlir::Value, int> ids_;
  llvm::DenseSet<mlir::Value> returned_;
  // (variable, new value) per optimizer update output, in step order.
  std::vector<std::pair<int, int>> commits_;
  // The variable each value written in place (UpdatesInPlace) goes into.
  std::map<int, int> commit_variable_;
  const std::map<std::string, Tensor>& variable_values_;
  int unnamed_ = 0;
};

}  // namespace

absl::StatusOr<Executable> BuildExecutableSteps(mlir::func::FuncOp main,
                                                const std::map<std::string, Tensor>& variable_values) {
  return StepBuilder(variable_values).Run(main);
}

}  // namespace tsr
