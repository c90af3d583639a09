// ExpectStructurallyEqual: two graphs have the same nodes (matched by name) with the same ops,
// attributes (registry defaults applied: the tsr printer elides attributes equal to their
// default), input edges, output types and signature. Constant values compare bitwise.
#ifndef TESSERA_TESTS_COMPILER_CONVERSION_GRAPH_EQUALITY_H_
#define TESSERA_TESTS_COMPILER_CONVERSION_GRAPH_EQUALITY_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph.h"

namespace tsr {

inline AttrMap EffectiveAttrs(const Node& node) {
  AttrMap attrs = node.attrs();
  if (node.op_def() != nullptr) {
    for (const AttrDef& a : node.op_def()->attrs) {
      if (a.default_value.has_value()) attrs.emplace(a.name, *a.default_value);
    }
  }
  return attrs;
}

inline std::vector<std::string> InputNames(const Graph& g, const Node& node) {
  std::vector<std::string> names;
  for (const TensorRef& r : node.inputs()) names.push_back(r.valid() ? g.TensorName(r) : "<none>");
  while (!names.empty() && names.back() == "<none>") names.pop_back();
  return names;
}

// Empty when equal, else the first difference.
inline std::string GraphDifference(const Graph& a, const Graph& b) {
  if (a.num_nodes() != b.num_nodes()) return absl::StrCat("node counts ", a.num_nodes(), " vs ", b.num_nodes());
  for (const Node* n : a.nodes()) {
    const Node* m = b.FindNode(n->name());
    if (m == nullptr) return absl::StrCat("node '", n->name(), "' is missing");
    if (n->op() != m->op()) return absl::StrCat("node '", n->name(), "': op ", n->op(), " vs ", m->op());
    if (EffectiveAttrs(*n) != EffectiveAttrs(*m)) return absl::StrCat("node '", n->name(), "': attributes differ");
    if (InputNames(a, *n) != InputNames(b, *m)) return absl::StrCat("node '", n->name(), "': inputs differ");
    if (n->output_types() != m->output_types()) return absl::StrCat("node '", n->name(), "': output types differ");
  }
  auto signature = [](const Graph& g, const std::vector<SignatureEntry>& entries) {
    std::vector<std::string> out;
    for (const SignatureEntry& e : entries) out.push_back(absl::StrCat(e.name, "=", g.TensorName(e.ref)));
    return out;
  };
  if (signature(a, a.inputs()) != signature(b, b.inputs())) return "signature inputs differ";
  if (signature(a, a.outputs()) != signature(b, b.outputs())) return "signature outputs differ";
  return "";
}

}  // namespace tsr

#endif  // TESSERA_TESTS_COMPILER_CONVERSION_GRAPH_EQUALITY_H_
