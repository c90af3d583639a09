// BindBatch (see bind_batch.h).
#include "graph/bind_batch.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace tsr {

absl::StatusOr<Graph> BindBatch(const Graph& graph, int64_t batch) {
  if (batch < 1) return absl::InvalidArgumentError(absl::StrCat("the batch size must be >= 1, got ", batch));
  Graph bound = graph.Clone();
  for (Node* node : bound.nodes()) {
    std::vector<std::pair<std::string, AttrValue>> rebound;
    for (const auto& [name, value] : node->attrs()) {
      if (value.type() == AttrType::kShape && value.shape().has_batch()) {
        rebound.emplace_back(name, AttrValue::FromShape(value.shape().BindBatch(batch)));
      }
    }
    for (auto& [name, value] : rebound) node->set_attr(name, std::move(value));
  }
  if (absl::Status s = bound.InferAllTypes(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("with batch size ", batch, ": ", s.message()));
  }
  for (const Node* node : bound.nodes()) {
    for (int i = 0; i < node->num_outputs(); ++i) {
      if (!node->output_type(i).shape.is_static()) {
        return absl::InvalidArgumentError(absl::StrCat("with batch size ", batch, ", output ", i, " of node '",
                                                       node->name(), "' (", node->op(), ") has the shape ",
                                                       node->output_type(i).shape.ToString(),
                                                       ", which is not static; only static graphs compile"));
      }
    }
  }
  return bound;
}

}  // namespace tsr
