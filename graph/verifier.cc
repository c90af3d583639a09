// Graph::Verify: the full structural and type check of a graph.
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

std::string Where(const Node& n) { return absl::StrCat("node '", n.name(), "' (", n.op(), ")"); }

absl::Status VerifyInputsExist(const Graph& g, const Node& n) {
  for (int i = 0; i < n.num_inputs(); ++i) {
    const TensorRef ref = n.input(i);
    if (!ref.valid()) continue;  // absent optional input: checked against the OpDef later
    const Node* producer = g.node(ref.node);
    if (producer == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(Where(n), ": input ", i, " refers to node id ", ref.node, ", which does not exist"));
    }
    if (ref.index < 0 || (producer->num_outputs() > 0 && ref.index >= producer->num_outputs())) {
      return absl::InvalidArgumentError(absl::StrCat(Where(n), ": input ", i, " refers to output ", ref.index, " of '",
                                                     producer->name(), "', which has ", producer->num_outputs(),
                                                     " outputs"));
    }
  }
  return absl::OkStatus();
}

absl::Status VerifySignature(const Graph& g) {
  for (const SignatureEntry& e : g.inputs()) {
    const Node* n = g.node(e.ref.node);
    if (n == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("signature input '", e.name, "' refers to a missing node"));
    }
    if (n->op() != "Placeholder") {
      return absl::InvalidArgumentError(
          absl::StrCat("signature input '", e.name, "' refers to ", Where(*n), ", but inputs must be Placeholders"));
    }
  }
  for (const SignatureEntry& e : g.outputs()) {
    if (g.TypeOf(e.ref) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("signature output '", e.name, "' refers to '", g.TensorName(e.ref), "', which does not exist"));
    }
  }
  return absl::OkStatus();
}

// Variable updates (optimizer ops): each updated input is a Variable node's output of
// the output's type, and no Variable is updated by two nodes (their order would be
// arbitrary).
absl::Status VerifyVariableUpdates(const Graph& g) {
  absl::flat_hash_map<int, std::string> updater;  // Variable node id -> updating node
  for (const Node* n : g.nodes()) {
    const std::vector<int>& updates = n->op_def()->variable_updates;
    for (size_t i = 0; i < updates.size(); ++i) {
      const int input = updates[i];
      if (input >= n->num_inputs() || !n->input(input).valid()) continue;  // the input checks report it
      const Node* var = g.node(n->input(input).node);
      if (var->op() != "Variable") {
        return absl::InvalidArgumentError(absl::StrCat(Where(*n), ": input ", input, " ('", var->name(),
                                                       "') must be read directly from a Variable, which it updates"));
      }
      if (static_cast<int>(i) < n->num_outputs() && n->output_type(static_cast<int>(i)) != var->output_type(0)) {
        return absl::InvalidArgumentError(
            absl::StrCat(Where(*n), ": output ", i, " is ", n->output_type(static_cast<int>(i)).ToString(),
                         " but it updates Variable '", var->name(), "' of type ", var->output_type(0).ToString()));
      }
      auto [it, inserted] = updater.emplace(var->id(), n->name());
      if (!inserted) {
        return absl::InvalidArgumentError(absl::StrCat("Variable '", var->name(), "' is updated by both '", it->second,
                                                       "' and '", n->name(), "'; at most one node may update it"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Graph::Verify() const {
  for (const Node* n : nodes()) {
    if (n->op_def() == nullptr) {
      absl::StatusOr<const OpDef*> def = registry().Lookup(n->op());
      return absl::NotFoundError(absl::StrCat("node '", n->name(), "': ", def.status().message()));
    }
    TSR_RETURN_IF_ERROR(VerifyInputsExist(*this, *n));
  }
  TSR_ASSIGN_OR_RETURN(std::vector<const Node*> order, TopologicalOrder());
  for (const Node* n : order) {
    TSR_ASSIGN_OR_RETURN(std::vector<TensorType> expected, InferredTypes(*n));
    if (n->num_outputs() != static_cast<int>(expected.size())) {
      return absl::InvalidArgumentError(absl::StrCat(Where(*n), ": has ", n->num_outputs(),
                                                     " recorded outputs but inference gives ", expected.size()));
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      if (n->output_type(i) != expected[i]) {
        return absl::InvalidArgumentError(absl::StrCat(Where(*n), ": output ", i, " is recorded as ",
                                                       n->output_type(i).ToString(), " but its inputs give ",
                                                       expected[i].ToString()));
      }
    }
  }
  TSR_RETURN_IF_ERROR(VerifyVariableUpdates(*this));
  return VerifySignature(*this);
}

}  // namespace tsr
