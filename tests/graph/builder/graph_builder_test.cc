// GraphBuilder: signature inputs and outputs, node naming and scopes, sticky errors.
#include "graph/builder/graph_builder.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "graph/builder/ops.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

TEST(GraphBuilderTest, InputIsAPlaceholderInTheSignature) {
  GraphBuilder b;
  Output x = b.Input("image", DType::kF32, {kBatchDim, 784});
  ASSERT_TRUE(x.valid());
  EXPECT_EQ(x.type().ToString(), "f32[N,784]");
  EXPECT_EQ(x.dtype(), DType::kF32);
  EXPECT_EQ(x.shape(), Shape({kBatchDim, 784}));
  EXPECT_EQ(x.rank(), 2);
  EXPECT_EQ(x.name(), "image");
  ASSERT_NE(x.node(), nullptr);
  EXPECT_EQ(x.node()->op(), "Placeholder");
  b.MarkOutput("features", ops::Relu(b, x));

  absl::StatusOr<Graph> g = b.Finish();
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->inputs().size(), 1u);
  EXPECT_EQ(g->inputs()[0].name, "image");
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(g->outputs()[0].name, "features");
  EXPECT_EQ(g->TensorName(g->outputs()[0].ref), "Relu");
}

TEST(GraphBuilderTest, AutoNamesAreTheOpNameMadeUnique) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {2, 3});
  Output a = ops::Relu(b, x);
  Output c = ops::Relu(b, a);
  Output d = ops::Relu(b, c, "named");
  Output e = ops::Relu(b, d);
  EXPECT_EQ(a.name(), "Relu");
  EXPECT_EQ(c.name(), "Relu_1");
  EXPECT_EQ(d.name(), "named");
  EXPECT_EQ(e.name(), "Relu_2");
  EXPECT_TRUE(b.Finish().ok());
}

TEST(GraphBuilderTest, ScopesPrefixNamesAndUnwind) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {2, 3});
  {
    auto block = b.Scope("block1");
    EXPECT_EQ(b.scope_prefix(), "block1/");
    x = ops::Relu(b, x);
    EXPECT_EQ(x.name(), "block1/Relu");
    {
      auto inner = b.Scope("attn");
      EXPECT_EQ(ops::Tanh(b, x, "t").name(), "block1/attn/t");
    }
    EXPECT_EQ(ops::Sigmoid(b, x).name(), "block1/Sigmoid");
  }
  EXPECT_EQ(b.scope_prefix(), "");
  EXPECT_EQ(ops::Relu(b, x).name(), "Relu");
  {
    // Re-entering a scope is allowed; names stay unique.
    auto again = b.Scope("block1");
    EXPECT_EQ(ops::Relu(b, x).name(), "block1/Relu_1");
  }
  EXPECT_TRUE(b.Finish().ok());
}

TEST(GraphBuilderTest, MovedScopeUnwindsOnce) {
  GraphBuilder b;
  std::vector<GraphBuilder::NameScope> scopes;
  scopes.push_back(b.Scope("outer"));
  EXPECT_EQ(b.scope_prefix(), "outer/");
  scopes.clear();
  EXPECT_EQ(b.scope_prefix(), "");
}

TEST(GraphBuilderTest, UniqueScopeSkipsUsedScopesAndNodes) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {2, 3});
  ops::Relu(b, x, "dense_1");  // a node that takes the second candidate name
  {
    auto s = b.UniqueScope("dense");
    EXPECT_EQ(b.scope_prefix(), "dense/");
  }
  {
    auto s = b.UniqueScope("dense");
    EXPECT_EQ(b.scope_prefix(), "dense_2/");
  }
  {
    auto outer = b.Scope("block");
    auto s = b.UniqueScope("dense");
    EXPECT_EQ(b.scope_prefix(), "block/dense/");
  }
  // An auto-named node does not take a scope's name either.
  { auto s = b.Scope("Relu"); }
  EXPECT_EQ(ops::Relu(b, x).name(), "Relu_1");
  EXPECT_TRUE(b.Finish().ok());
}

TEST(GraphBuilderTest, InvalidScopeNameIsRecorded) {
  GraphBuilder b;
  {
    auto s = b.Scope("a/b");
    EXPECT_EQ(b.scope_prefix(), "");
  }
  EXPECT_THAT(b.status().message(), HasSubstr("scope name 'a/b' is invalid"));
}

TEST(GraphBuilderTest, FirstErrorIsStickyAndNamesTheNode) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 784});
  Output w = ops::Variable(b, "w", DType::kF32, {100, 10});
  Output y = ops::MatMul(b, x, w, "bad_matmul");
  EXPECT_FALSE(y.valid());
  EXPECT_EQ(y.type().dtype, DType::kInvalid);
  EXPECT_EQ(y.name(), "");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(b.status().message(), HasSubstr("node 'bad_matmul' (MatMul)"));

  // Later calls do nothing: no node is added, the first error stays.
  const int nodes = b.graph().num_nodes();
  Output z = ops::Relu(b, ops::Variable(b, "v", DType::kF32, {3}));
  EXPECT_FALSE(z.valid());
  b.MarkOutput("z", z);
  EXPECT_EQ(b.graph().num_nodes(), nodes);
  EXPECT_THAT(b.status().message(), HasSubstr("bad_matmul"));

  absl::StatusOr<Graph> g = b.Finish();
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("node 'bad_matmul' (MatMul)"));
}

TEST(GraphBuilderTest, UnknownOpNamesNodeAndOp) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {2});
  std::vector<Output> out = b.Op("Frobnicate", {x}, {}, "f");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].valid());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(b.status().message(), HasSubstr("node 'f' (Frobnicate)"));
  EXPECT_THAT(b.status().message(), HasSubstr("unknown op 'Frobnicate'"));
}

TEST(GraphBuilderTest, DuplicateExplicitNameIsAnError) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {2});
  ops::Relu(b, x, "r");
  Output again = ops::Tanh(b, x, "r");
  EXPECT_FALSE(again.valid());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(b.status().message(), HasSubstr("node 'r' (Tanh)"));
  EXPECT_THAT(b.status().message(), HasSubstr("already used"));
}

TEST(GraphBuilderTest, OutputOfAnotherBuilderIsRejected) {
  GraphBuilder other;
  Output foreign = other.Input("x", DType::kF32, {2});
  GraphBuilder b;
  ops::Relu(b, foreign, "r");
  EXPECT_THAT(b.status().message(), HasSubstr("node 'r' (Relu): input 0 was built by a different GraphBuilder"));
}

TEST(GraphBuilderTest, AbsentOptionalInputsPassThrough) {
  GraphBuilder b;
  Output a = b.Input("a", DType::kF32, {kBatchDim, 4});
  Output w = ops::Variable(b, "w", DType::kF32, {4, 3});
  // A default Output() in the middle of the list is an absent optional input (Clip's min).
  std::vector<Output> out = b.Op("Clip", {a, Output(), ops::Scalar(b, 6.0f)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type().ToString(), "f32[N,4]");
  EXPECT_EQ(out[0].node()->input(1), TensorRef::None());
  EXPECT_EQ(ops::Gemm(b, a, w).type().ToString(), "f32[N,3]");
  EXPECT_TRUE(b.Finish().ok());
}

TEST(GraphBuilderTest, OpReturnsEveryOutput) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {4, 6});
  AttrMap attrs;
  attrs["axis"] = AttrValue::Int(1);
  attrs["num_outputs"] = AttrValue::Int(3);
  std::vector<Output> parts = b.Op("Split", {x}, attrs, "split");
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2].name(), "split:2");
  EXPECT_EQ(parts[2].type().ToString(), "f32[4,2]");
}

TEST(GraphBuilderTest, MarkOutputOfInvalidOutputIsAnError) {
  GraphBuilder b;
  b.MarkOutput("y", Output());
  EXPECT_THAT(b.status().message(), HasSubstr("signature output 'y'"));
}

TEST(GraphBuilderTest, DuplicateInputNameIsAnError) {
  GraphBuilder b;
  b.Input("x", DType::kF32, {2});
  Output again = b.Input("x", DType::kF32, {2});
  EXPECT_FALSE(again.valid());
  EXPECT_THAT(b.status().message(), HasSubstr("'x'"));
}

TEST(GraphBuilderTest, RecordErrorKeepsTheFirst) {
  GraphBuilder b;
  b.RecordError(absl::OkStatus());
  EXPECT_TRUE(b.ok());
  b.RecordError(absl::InvalidArgumentError("first"));
  b.RecordError(absl::InternalError("second"));
  EXPECT_EQ(b.status().message(), "first");
}

TEST(GraphBuilderTest, FinishSpendsTheBuilder) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {2});
  ASSERT_TRUE(b.Finish().ok());
  EXPECT_EQ(b.Finish().status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(ops::Relu(b, x).valid());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(GraphBuilderTest, FinishReturnsAVerifiedGraph) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 3});
  Output y = ops::Add(b, x, ops::Variable(b, "bias", DType::kF32, {3}));
  b.MarkOutput("y", y);
  absl::StatusOr<Graph> g = b.Finish();
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->Verify().ok());
  EXPECT_EQ(g->num_nodes(), 3);
  EXPECT_EQ(g->FindNode("Add")->output_type(0).ToString(), "f32[N,3]");
}

}  // namespace
}  // namespace tsr
