// Graph construction, naming, lookup, inference and topological order.
#include "graph/graph.h"

#include "gtest/gtest.h"
#include "tests/graph/test_ops.h"

namespace tsr {
namespace {

using ::tsr::testing::TestRegistry;

AttrMap SrcAttrs(Shape shape, DType dtype = DType::kF32) {
  return {{"dtype", AttrValue::Type(dtype)}, {"shape", AttrValue::FromShape(std::move(shape))}};
}

TEST(GraphTest, AddNodeAndInferPropagatesTypes) {
  Graph g(TestRegistry());
  Node* x = *g.AddNodeAndInfer("x", "Src", {}, SrcAttrs(Shape{kBatchDim, 1}));
  Node* y = *g.AddNodeAndInfer("y", "Src", {}, SrcAttrs(Shape{1, 5}));
  absl::StatusOr<Node*> z = g.AddNodeAndInfer("z", "Pair", {x->output(), y->output()});
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ((*z)->output_type(0).ToString(), "f32[N,5]");
  EXPECT_EQ(g.num_nodes(), 3);
  EXPECT_EQ(g.FindNode("z"), *z);
  EXPECT_EQ(g.FindNode("nope"), nullptr);
  EXPECT_TRUE(g.Verify().ok());
}

TEST(GraphTest, FailedInferenceLeavesGraphUnchanged) {
  Graph g(TestRegistry());
  Node* x = *g.AddNodeAndInfer("x", "Src", {}, SrcAttrs(Shape{2, 3}));
  Node* y = *g.AddNodeAndInfer("y", "Src", {}, SrcAttrs(Shape{4}));
  absl::StatusOr<Node*> bad = g.AddNodeAndInfer("bad", "Pair", {x->output(), y->output()});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("node 'bad' (Pair)"), std::string::npos) << bad.status();
  EXPECT_NE(bad.status().message().find("[2,3] and [4]"), std::string::npos) << bad.status();
  EXPECT_EQ(g.num_nodes(), 2);
  EXPECT_EQ(g.FindNode("bad"), nullptr);
  // The name is free again.
  EXPECT_TRUE(g.AddNode("bad", "Src", {}, SrcAttrs(Shape{})).ok());
}

TEST(GraphTest, NamesAreUniqueAndNonEmpty) {
  Graph g(TestRegistry());
  ASSERT_TRUE(g.AddNode("a", "Src", {}, SrcAttrs(Shape{})).ok());
  EXPECT_EQ(g.AddNode("a", "Src", {}).status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_FALSE(g.AddNode("", "Src", {}).ok());
  EXPECT_EQ(g.UniqueName("a"), "a_1");
  EXPECT_EQ(g.UniqueName("b"), "b");
  ASSERT_TRUE(g.AddNode("a_1", "Src", {}, SrcAttrs(Shape{})).ok());
  EXPECT_EQ(g.UniqueName("a"), "a_2");
}

TEST(GraphTest, TensorNamesParseBack) {
  Graph g(TestRegistry());
  Node* x = *g.AddNodeAndInfer("x", "Src", {}, SrcAttrs(Shape{2}));
  Node* s = *g.AddNodeAndInfer("s", "Split2", {x->output()});
  EXPECT_EQ(g.TensorName(s->output(1)), "s:1");
  EXPECT_EQ(g.TensorName(s->output(0)), "s");
  EXPECT_EQ(*g.ParseTensorName("s:1"), s->output(1));
  EXPECT_EQ(*g.ParseTensorName("x"), x->output(0));
  EXPECT_FALSE(g.ParseTensorName("s:x").ok());
  EXPECT_FALSE(g.ParseTensorName("q:0").ok());
  EXPECT_EQ(g.TypeOf(s->output(1))->dtype, DType::kBool);
  EXPECT_EQ(g.TypeOf(TensorRef{s->id(), 2}), nullptr);
  EXPECT_EQ(g.Consumers(x->output()).size(), 1u);
}

TEST(GraphTest, TopologicalOrderIsDeterministicAndDetectsCycles) {
  Graph g(TestRegistry());
  // Added consumer-first: the order must still put producers first.
  Node* c = *g.AddNode("c", "Pair", {});
  Node* a = *g.AddNode("a", "Src", {}, SrcAttrs(Shape{2}));
  Node* b = *g.AddNode("b", "Src", {}, SrcAttrs(Shape{2}));
  c->add_input(a->output());
  c->add_input(b->output());
  absl::StatusOr<std::vector<const Node*>> order = g.TopologicalOrder();
  ASSERT_TRUE(order.ok());
  ASSERT_EQ(order->size(), 3u);
  EXPECT_EQ((*order)[0]->name(), "a");
  EXPECT_EQ((*order)[1]->name(), "b");
  EXPECT_EQ((*order)[2]->name(), "c");
  ASSERT_TRUE(g.InferAllTypes().ok());
  EXPECT_EQ(c->output_type(0).ToString(), "f32[2]");

  // d = Pair(c, e), e = Pair(d, a): a cycle d -> e -> d.
  Node* d = *g.AddNode("d", "Pair", {c->output()});
  Node* e = *g.AddNode("e", "Pair", {d->output(), a->output()});
  d->add_input(e->output());
  absl::StatusOr<std::vector<const Node*>> cyclic = g.TopologicalOrder();
  ASSERT_FALSE(cyclic.ok());
  EXPECT_EQ(cyclic.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(cyclic.status().message().find("cycle"), std::string::npos);
  EXPECT_TRUE(cyclic.status().message().find("'d'") != std::string::npos ||
              cyclic.status().message().find("'e'") != std::string::npos)
      << cyclic.status();
}

TEST(GraphTest, CloneIsDeep) {
  Graph g(TestRegistry());
  Node* x = *g.AddNodeAndInfer("x", "Src", {}, SrcAttrs(Shape{2}));
  ASSERT_TRUE(g.AddOutput("out", x->output()).ok());
  Graph copy = g.Clone();
  copy.FindNode("x")->set_attr("shape", AttrValue::FromShape(Shape{3}));
  EXPECT_EQ(g.FindNode("x")->FindAttr("shape")->shape(), (Shape{2}));
  EXPECT_EQ(copy.outputs().size(), 1u);
  EXPECT_EQ(copy.DebugString().find("x = Src()"), 0u);
}

TEST(GraphTest, SignatureRejectsDuplicatesAndMissingNodes) {
  Graph g(TestRegistry());
  Node* x = *g.AddNodeAndInfer("x", "Src", {}, SrcAttrs(Shape{2}));
  EXPECT_TRUE(g.AddOutput("y", x->output()).ok());
  EXPECT_EQ(g.AddOutput("y", x->output()).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_FALSE(g.AddOutput("z", TensorRef{7, 0}).ok());
  EXPECT_FALSE(g.AddInput("", x->output()).ok());
}

}  // namespace
}  // namespace tsr
