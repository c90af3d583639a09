// Graph comparison and GraphDef round-trip assertions shared by tests.
#ifndef TESSERA_TESTS_GRAPH_GRAPH_TEST_UTIL_H_
#define TESSERA_TESTS_GRAPH_GRAPH_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph.h"
#include "graph/proto/graph_def_io.h"
#include "gtest/gtest.h"

namespace tsr::testing {

// Node by node (ids, names, ops, inputs, attributes, output types), then the signature.
inline void ExpectSameGraph(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.num_nodes(), b.num_nodes());
  for (int id = 0; id < a.num_nodes(); ++id) {
    const Node& na = *a.node(id);
    const Node& nb = *b.node(id);
    SCOPED_TRACE(absl::StrCat("node ", id, " '", na.name(), "'"));
    EXPECT_EQ(na.name(), nb.name());
    EXPECT_EQ(na.op(), nb.op());
    EXPECT_EQ(na.inputs(), nb.inputs());
    ASSERT_EQ(na.attrs().size(), nb.attrs().size());
    for (const auto& [name, value] : na.attrs()) {
      const AttrValue* other = nb.FindAttr(name);
      ASSERT_NE(other, nullptr) << "attribute " << name << " is missing";
      EXPECT_TRUE(value == *other) << name << ": " << value.ToString() << " vs " << other->ToString();
    }
    EXPECT_EQ(na.output_types(), nb.output_types());
  }
  auto same_entries = [](const std::vector<SignatureEntry>& x, const std::vector<SignatureEntry>& y) {
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(x[i].name, y[i].name);
      EXPECT_EQ(x[i].ref, y[i].ref) << x[i].name;
    }
  };
  same_entries(a.inputs(), b.inputs());
  same_entries(a.outputs(), b.outputs());
}

// Serialize -> parse gives the same graph, and serializing the copy gives the same bytes.
inline void ExpectRoundTrip(const Graph& g, GraphFormat format) {
  absl::StatusOr<std::string> bytes = SerializeGraph(g, format);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<Graph> back = ParseGraph(*bytes, format);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << (format == GraphFormat::kText ? *bytes : "");
  ExpectSameGraph(g, *back);
  absl::StatusOr<std::string> again = SerializeGraph(*back, format);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*bytes, *again);
}

}  // namespace tsr::testing

#endif  // TESSERA_TESTS_GRAPH_GRAPH_TEST_UTIL_H_
