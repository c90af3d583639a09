// Graph::Verify and the generic checks every op gets (attributes, input counts,
// type constraints, optional and variadic inputs).
#include "graph/graph.h"
#include "gtest/gtest.h"
#include "tests/graph/test_ops.h"

namespace tsr {
namespace {

using ::tsr::testing::TestRegistry;

AttrMap SrcAttrs(Shape shape, DType dtype = DType::kF32) {
  return {{"dtype", AttrValue::Type(dtype)}, {"shape", AttrValue::FromShape(std::move(shape))}};
}

void ExpectError(const absl::Status& s, const std::string& fragment) {
  ASSERT_FALSE(s.ok()) << "expected an error containing: " << fragment;
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.message();
}

class VerifierTest : public ::testing::Test {
 protected:
  VerifierTest() : g_(TestRegistry()) {
    x_ = *g_.AddNodeAndInfer("x", "Src", {}, SrcAttrs(Shape{2, 3}));
    y_ = *g_.AddNodeAndInfer("y", "Src", {}, SrcAttrs(Shape{2, 3}));
  }
  Graph g_;
  Node* x_;
  Node* y_;
};

TEST_F(VerifierTest, ValidGraphPasses) {
  ASSERT_TRUE(g_.AddNodeAndInfer("p", "Pair", {x_->output(), y_->output()}).ok());
  EXPECT_TRUE(g_.Verify().ok());
}

TEST_F(VerifierTest, UnknownOp) {
  ASSERT_TRUE(g_.AddNode("m", "Pear", {x_->output()}).ok());
  ExpectError(g_.Verify(), "node 'm': unknown op 'Pear'");
}

TEST_F(VerifierTest, UnknownOpSuggestsCase) {
  ASSERT_TRUE(g_.AddNode("m", "pair", {x_->output()}).ok());
  ExpectError(g_.Verify(), "did you mean 'Pair'");
}

TEST_F(VerifierTest, DanglingInput) {
  ASSERT_TRUE(g_.AddNode("p", "Pair", {x_->output(), TensorRef{99, 0}}).ok());
  ExpectError(g_.Verify(), "node 'p' (Pair): input 1 refers to node id 99, which does not exist");
}

TEST_F(VerifierTest, BadOutputIndex) {
  ASSERT_TRUE(g_.AddNode("p", "Pair", {x_->output(), TensorRef{y_->id(), 3}}).ok());
  ExpectError(g_.Verify(), "refers to output 3 of 'y', which has 1 outputs");
}

TEST_F(VerifierTest, Cycle) {
  Node* a = *g_.AddNode("a", "Pair", {x_->output()});
  Node* b = *g_.AddNode("b", "Pair", {a->output(), x_->output()});
  a->add_input(b->output());
  ExpectError(g_.Verify(), "cycle");
}

TEST_F(VerifierTest, DTypeMismatchBetweenInputs) {
  Node* i = *g_.AddNodeAndInfer("i", "Src", {}, SrcAttrs(Shape{2, 3}, DType::kF64));
  ASSERT_TRUE(g_.AddNode("p", "Pair", {x_->output(), i->output()}).ok());
  ExpectError(g_.Verify(), "input 1 ('b') has dtype f64 but input 0 has f32");
}

TEST_F(VerifierTest, TypeConstraint) {
  Node* i = *g_.AddNodeAndInfer("i", "Src", {}, SrcAttrs(Shape{2}, DType::kI32));
  absl::StatusOr<Node*> p = g_.AddNodeAndInfer("p", "Pair", {i->output(), i->output()});
  ExpectError(p.status(), "input 0 ('a') has dtype i32 but one of {f32, f64, f16, bf16} is required");
}

TEST_F(VerifierTest, ShapeMismatch) {
  Node* z = *g_.AddNodeAndInfer("z", "Src", {}, SrcAttrs(Shape{4}));
  ASSERT_TRUE(g_.AddNode("p", "Pair", {x_->output(), z->output()}).ok());
  ExpectError(g_.Verify(), "node 'p' (Pair): shapes [2,3] and [4] cannot be broadcast");
}

TEST_F(VerifierTest, StaleRecordedTypes) {
  Node* p = *g_.AddNodeAndInfer("p", "Pair", {x_->output(), y_->output()});
  p->set_output_types({TensorType(DType::kF32, Shape{9})});
  ExpectError(g_.Verify(), "output 0 is recorded as f32[9] but its inputs give f32[2,3]");
}

TEST_F(VerifierTest, BadAttributes) {
  ExpectError(g_.AddNodeAndInfer("p", "Pair", {x_->output(), y_->output()}, {{"beta", AttrValue::Float(1)}}).status(),
              "unknown attribute 'beta' (known: alpha)");
  ExpectError(g_.AddNodeAndInfer("p", "Pair", {x_->output(), y_->output()}, {{"alpha", AttrValue::Int(1)}}).status(),
              "attribute 'alpha' has type int but float is required");
  ExpectError(g_.AddNodeAndInfer("s", "Src", {}, {}).status(), "required attribute 'dtype' (type) is missing");
}

TEST_F(VerifierTest, InputCounts) {
  ExpectError(g_.AddNodeAndInfer("p", "Pair", {x_->output()}).status(), "has 1 inputs but 2 expected");
  ExpectError(g_.AddNodeAndInfer("o", "Opt", {}).status(), "has 0 inputs but 1 to 2 expected");
  ExpectError(g_.AddNodeAndInfer("c", "Cat", {x_->output()}).status(), "has 1 inputs but at least 2 expected");
  EXPECT_TRUE(g_.AddNodeAndInfer("c", "Cat", {x_->output(), y_->output(), x_->output()}).ok());
  // An absent optional input is fine; an absent required one is not.
  EXPECT_TRUE(g_.AddNodeAndInfer("o", "Opt", {x_->output(), TensorRef::None()}).ok());
  ExpectError(g_.AddNodeAndInfer("p", "Pair", {x_->output(), TensorRef::None()}).status(),
              "input 1 ('b') is required but absent");
}

TEST_F(VerifierTest, OutputCountIsBounded) {
  absl::StatusOr<Node*> fan = g_.AddNodeAndInfer("f", "Fan", {x_->output()}, {{"n", AttrValue::Int(3)}});
  ASSERT_TRUE(fan.ok()) << fan.status();
  EXPECT_EQ((*fan)->num_outputs(), 3);
  ExpectError(g_.AddNodeAndInfer("g", "Fan", {x_->output()}, {{"n", AttrValue::Int(kMaxNodeOutputs + 1)}}).status(),
              "node 'g' (Fan): would have more than 65536 outputs");
}

TEST_F(VerifierTest, SignatureInputsMustBePlaceholders) {
  ASSERT_TRUE(g_.AddInput("x", x_->output()).ok());
  ExpectError(g_.Verify(), "signature input 'x' refers to node 'x' (Src), but inputs must be Placeholders");
}

TEST(OpRegistryTest, RejectsMalformedDefinitions) {
  OpRegistry r;
  EXPECT_FALSE(r.Register(OpDefBuilder("").Infer(SameAsFirstInput).Build()).ok());
  EXPECT_FALSE(r.Register(OpDefBuilder("NoInfer").Input("x", "T").Output("y", "T").Build()).ok());
  EXPECT_FALSE(r.Register(OpDefBuilder("BadVariadic")
                              .VariadicInput("xs", "T")
                              .Input("y", "T")
                              .Output("z", "T")
                              .Infer(SameAsFirstInput)
                              .Build())
                   .ok());
  EXPECT_FALSE(r.Register(OpDefBuilder("BadDefault")
                              .Input("x", "T")
                              .Output("y", "T")
                              .Attr("a", AttrType::kInt, AttrValue::Float(1))
                              .Infer(SameAsFirstInput)
                              .Build())
                   .ok());
  ASSERT_TRUE(r.Register(OpDefBuilder("Ok").Input("x", "T").Output("y", "T").Infer(SameAsFirstInput).Build()).ok());
  EXPECT_EQ(r.Register(OpDefBuilder("Ok").Input("x", "T").Output("y", "T").Infer(SameAsFirstInput).Build()).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(r.OpNames(), std::vector<std::string>{"Ok"});
}

TEST(EstimateFlopsTest, BindsBatchToOne) {
  const OpDef* pair = TestRegistry().Find("Pair");
  ASSERT_NE(pair, nullptr);
  const TensorType t(DType::kF32, Shape{kBatchDim, 10});
  EXPECT_EQ(EstimateFlops(*pair, "p", {}, {t, t}, {}, {t}), 10);
}

}  // namespace
}  // namespace tsr
