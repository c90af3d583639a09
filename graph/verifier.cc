// Graph::Verify: the full structural and type check of a graph.
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
  return VerifySignature(*this);
}

}  // namespace tsr
