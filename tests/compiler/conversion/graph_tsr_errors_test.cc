// Bad tsr input gives a clear InvalidArgument status (never a crash): malformed text, unknown
// ops, wrong types, ops from other dialects, broken signatures.
#include <string>

#include "compiler/conversion/graph_tsr_text.h"
#include "gmock/gmock.h"
#include "graph/graph.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

void ExpectError(absl::string_view text, absl::string_view expected,
                 absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  absl::StatusOr<Graph> g = TsrTextToGraph(text);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), code);
  EXPECT_THAT(std::string(g.status().message()), HasSubstr(std::string(expected)));
}

TEST(GraphTsrErrors, MalformedText) {
  ExpectError("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> { return %a ", "does not parse");
  ExpectError("this is not mlir", "loc(\"-\":1:1): custom op 'this' is unknown");
}

TEST(GraphTsrErrors, UnknownOp) {
  ExpectError(R"(func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = "tsr.Frobnicate"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
})",
              "tsr.Frobnicate");
}

TEST(GraphTsrErrors, WrongResultTypeNamesOpAndLocation) {
  ExpectError(R"(func.func @main(%a: tensor<2x3xf32>) -> tensor<3x3xf32> {
  %r = tsr.Relu %a : (tensor<2x3xf32>) -> tensor<3x3xf32> loc("act")
  return %r : tensor<3x3xf32>
})",
              "loc(\"act\"): 'tsr.Relu' op result 0 has type 'tensor<3x3xf32>' but the op registry infers "
              "'tensor<2x3xf32>'");
}

TEST(GraphTsrErrors, WrongOperandDType) {
  ExpectError(R"(func.func @main(%a: tensor<2xi1>) -> tensor<2xi1> {
  %r = tsr.Exp %a : (tensor<2xi1>) -> tensor<2xi1>
  return %r : tensor<2xi1>
})",
              "'tsr.Exp' op operand #0 must be ranked tensor of");
}

TEST(GraphTsrErrors, OpOfAnotherDialect) {
  ExpectError(R"(func.func private @f(tensor<2xf32>) -> tensor<2xf32>
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = func.call @f(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
})",
              "op 'func.call' at loc(\"-\":3:8) is not a tsr op");
}

TEST(GraphTsrErrors, UnregisteredDialect) {
  ExpectError(R"(func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = "test.op"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
})",
              "loc(\"-\":2:17): operation being parsed with an unregistered dialect");
}

TEST(GraphTsrErrors, UnsupportedElementType) {
  ExpectError(R"(func.func @main(%a: tensor<2xi16>) -> tensor<2xi16> {
  return %a : tensor<2xi16>
})",
              "element type i16 has no Tessera dtype");
}

TEST(GraphTsrErrors, NoFunction) { ExpectError("module {}", "the module has 0 functions"); }

TEST(GraphTsrErrors, DuplicateSignatureName) {
  ExpectError(
      R"(func.func @main(%a: tensor<2xf32> {tsr.name = "x"}, %b: tensor<2xf32> {tsr.name = "x"}) -> tensor<2xf32> {
  return %a : tensor<2xf32>
})",
      "signature input 'x' is declared twice", absl::StatusCode::kAlreadyExists);
}

TEST(GraphTsrErrors, HandWrittenModuleConverts) {
  absl::StatusOr<Graph> g =
      TsrTextToGraph(R"(func.func @main(%x: tensor<?x4xf32> {tsr.name = "x"}) -> (tensor<?x4xf32> {tsr.name = "y"}) {
  %b = tsr.Constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32> loc("bias")
  %y = tsr.Add %x, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32> loc("add")
  return %y : tensor<?x4xf32>
})");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(g->Verify().ok());
  const Node* add = g->FindNode("add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->op(), "Add");
  EXPECT_EQ(g->TensorName(add->input(1)), "bias");
  EXPECT_EQ(add->output_type(0).ToString(), "f32[N,4]");
  const Tensor* bias = g->ConstantValue(add->input(1));
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->GetAsDouble(3), 4.0);
  ASSERT_EQ(g->inputs().size(), 1u);
  EXPECT_EQ(g->inputs()[0].name, "x");
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(g->outputs()[0].name, "y");
}

}  // namespace
}  // namespace tsr
