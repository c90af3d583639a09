// SummarizeModel and its text rendering.
#include "graph/builder/model_summary.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

// Elements of a Variable's or Constant's value; 0 for other nodes.
int64_t HeldElements(const Node& node) {
  if (node.num_outputs() == 0) return 0;
  if (node.op() != "Variable" && node.op() != "Constant") return 0;
  return node.output_type(0).shape.is_static() ? node.output_type(0).shape.num_elements() : 0;
}

std::string TypesToString(const std::vector<TensorType>& types) {
  return absl::StrJoin(types, ", ", [](std::string* out, const TensorType& t) { out->append(t.ToString()); });
}

SignatureSummary Entry(const Graph& graph, const SignatureEntry& e) {
  const TensorType* t = graph.TypeOf(e.ref);
  return {e.name, graph.TensorName(e.ref), t == nullptr ? TensorType() : *t};
}

}  // namespace

absl::StatusOr<ModelSummary> SummarizeModel(const Graph& graph) {
  TSR_ASSIGN_OR_RETURN(std::vector<const Node*> order, graph.TopologicalOrder());
  ModelSummary s;
  s.num_nodes = graph.num_nodes();
  std::map<std::string, int> counts;
  for (const Node* n : order) {
    if (n->op_def() == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("node '", n->name(), "' has op '", n->op(), "', which is not registered"));
    }
    NodeSummary row{n->name(), n->op(), n->output_types()};
    row.params = HeldElements(*n);
    row.bytes = n->num_outputs() > 0 ? row.params * static_cast<int64_t>(DTypeSize(n->output_type(0).dtype)) : 0;
    row.flops = EstimateNodeFlops(graph, *n);
    if (n->op() == "Variable") {
      const AttrValue* trainable = n->FindAttr("trainable");
      const bool is_trainable = trainable == nullptr || trainable->type() != AttrType::kBool || trainable->b();
      (is_trainable ? s.trainable_params : s.non_trainable_params) += row.params;
      s.param_bytes += row.bytes;
    } else if (n->op() == "Constant") {
      s.constant_elements += row.params;
      s.constant_bytes += row.bytes;
    }
    s.flops += row.flops;
    ++counts[n->op()];
    s.nodes.push_back(std::move(row));
  }
  s.op_counts.assign(counts.begin(), counts.end());
  std::stable_sort(s.op_counts.begin(), s.op_counts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const SignatureEntry& e : graph.inputs()) s.inputs.push_back(Entry(graph, e));
  for (const SignatureEntry& e : graph.outputs()) s.outputs.push_back(Entry(graph, e));
  return s;
}

std::vector<const NodeSummary*> HeaviestNodes(const ModelSummary& summary, int top) {
  std::vector<const NodeSummary*> rows;
  for (const NodeSummary& n : summary.nodes) rows.push_back(&n);
  if (top < 0) return rows;
  std::stable_sort(rows.begin(), rows.end(), [](const NodeSummary* a, const NodeSummary* b) {
    return a->flops != b->flops ? a->flops > b->flops : a->params > b->params;
  });
  if (static_cast<size_t>(top) < rows.size()) rows.resize(top);
  return rows;
}

std::string FormatCount(int64_t n) {
  std::string digits = absl::StrCat(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return n < 0 ? "-" + out : out;
}

std::string FormatBytes(int64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  return absl::StrFormat("%.2f %s", value, units[unit]);
}

std::string FormatModelSummary(const ModelSummary& s, int top) {
  std::string out;
  absl::StrAppend(&out, "nodes: ", s.num_nodes, "\n");
  absl::StrAppend(&out, "ops: ",
                  absl::StrJoin(s.op_counts, ", ",
                                [](std::string* o, const auto& c) { absl::StrAppend(o, c.first, " ", c.second); }),
                  "\n");
  absl::StrAppend(&out, "parameters: ", FormatCount(s.params()), " (", FormatBytes(s.param_bytes), "): trainable ",
                  FormatCount(s.trainable_params), ", non-trainable ", FormatCount(s.non_trainable_params), "\n");
  absl::StrAppend(&out, "constants: ", FormatCount(s.constant_elements), " elements (", FormatBytes(s.constant_bytes),
                  ")\n");
  absl::StrAppend(&out, "FLOPs per example: ", FormatCount(s.flops), "\n");
  absl::StrAppend(&out, "signature:\n");
  for (const SignatureSummary& e : s.inputs) absl::StrAppend(&out, "  input  ", e.name, ": ", e.type.ToString(), "\n");
  for (const SignatureSummary& e : s.outputs) {
    absl::StrAppend(&out, "  output ", e.name, ": ", e.type.ToString(), " (", e.tensor, ")\n");
  }

  const std::vector<const NodeSummary*> rows = HeaviestNodes(s, top);
  std::vector<std::vector<std::string>> cells = {{"name", "op", "output", "params", "FLOPs"}};
  for (const NodeSummary* n : rows) {
    cells.push_back({n->name, n->op, TypesToString(n->outputs), FormatCount(n->params), FormatCount(n->flops)});
  }
  std::vector<size_t> width(5, 0);
  for (const auto& row : cells) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  absl::StrAppend(&out,
                  top < 0 ? "nodes (topological order):\n" : absl::StrCat("top ", rows.size(), " nodes by FLOPs:\n"));
  for (const auto& row : cells) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c) {
      // Text columns align left, numbers right.
      const bool numeric = c >= 3;
      const std::string pad(width[c] - row[c].size(), ' ');
      absl::StrAppend(&line, " ", numeric ? pad + row[c] : row[c] + (c + 1 < row.size() ? pad : ""));
      if (c + 1 < row.size()) line.push_back(' ');
    }
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

int64_t EstimateNodeFlops(const Graph& graph, const Node& node) {
  if (node.op_def() == nullptr) return 0;
  std::vector<std::optional<TensorType>> types;
  std::vector<const Tensor*> values;
  for (const TensorRef& ref : node.inputs()) {
    const TensorType* t = ref.valid() ? graph.TypeOf(ref) : nullptr;
    types.push_back(t == nullptr ? std::nullopt : std::optional<TensorType>(*t));
    values.push_back(ref.valid() ? graph.ConstantValue(ref) : nullptr);
  }
  return EstimateFlops(*node.op_def(), node.name(), node.attrs(), std::move(types), std::move(values),
                       node.output_types());
}

int64_t VariableBytes(const Graph& graph) {
  int64_t bytes = 0;
  for (const Node* node : graph.nodes()) {
    if (node->op() != "Variable" || node->num_outputs() == 0) continue;
    const TensorType& type = node->output_type(0);
    if (type.shape.is_static()) bytes += type.shape.num_elements() * static_cast<int64_t>(DTypeSize(type.dtype));
  }
  return bytes;
}

}  // namespace tsr
