// Graph -> tsr text -> Graph round trips: the example MLP and LeNet, their training graphs
// (autodiff + optimizer updates of Variables), and the ResNet-18 ONNX model when present.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "compiler/conversion/graph_tsr.h"
#include "compiler/conversion/graph_tsr_text.h"
#include "examples/models.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/optimizers.h"
#include "graph/onnx/onnx_importer.h"
#include "gtest/gtest.h"
#include "mlir/IR/MLIRContext.h"
#include "tests/compiler/conversion/graph_equality.h"
#include "tests/models/onnx_zoo_export.h"

namespace tsr {
namespace {

void ExpectRoundTrip(const Graph& graph) {
  absl::StatusOr<std::string> text = GraphToTsrText(graph);
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<Graph> back = TsrTextToGraph(*text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(GraphDifference(graph, *back), "");
  EXPECT_TRUE(back->Verify().ok()) << back->Verify();
}

Graph TrainingGraph(Graph model, OptimizerKind kind) {
  TensorRef loss_ref;
  for (const SignatureEntry& e : model.outputs()) {
    if (e.name == "loss") loss_ref = e.ref;
  }
  GraphBuilder b(std::move(model));
  Output loss = b.Wrap(loss_ref);
  Minimize(b, loss, TrainableVariables(b), {.kind = kind});
  absl::StatusOr<Graph> g = b.Finish();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

int CountOp(const Graph& g, absl::string_view op) {
  int n = 0;
  for (const Node* node : g.nodes()) n += node->op() == op;
  return n;
}

TEST(GraphTsrRoundTrip, Mlp) {
  absl::StatusOr<Graph> mlp = examples::BuildMlp();
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  ExpectRoundTrip(*mlp);
}

TEST(GraphTsrRoundTrip, LeNet) {
  absl::StatusOr<Graph> lenet = examples::BuildLeNet();
  ASSERT_TRUE(lenet.ok()) << lenet.status();
  ExpectRoundTrip(*lenet);
}

TEST(GraphTsrRoundTrip, MlpTrainingGraphWithAdam) {
  absl::StatusOr<Graph> mlp = examples::BuildMlp({.dropout = 0.5, .training_head = true});
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  Graph train = TrainingGraph(*std::move(mlp), OptimizerKind::kAdam);
  ASSERT_GT(CountOp(train, "Variable"), 6);
  ExpectRoundTrip(train);
}

TEST(GraphTsrRoundTrip, LeNetTrainingGraphWithMomentum) {
  absl::StatusOr<Graph> lenet = examples::BuildLeNet({.training_head = true});
  ASSERT_TRUE(lenet.ok()) << lenet.status();
  Graph train = TrainingGraph(*std::move(lenet), OptimizerKind::kMomentum);
  ExpectRoundTrip(train);
}

// The variable updates survive: the optimizer ops are stateful, so nothing drops their
// results although no signature output reads them.
TEST(GraphTsrRoundTrip, OptimizerUpdatesStayInTheModule) {
  absl::StatusOr<Graph> mlp = examples::BuildMlp({.hidden_units = {8}, .training_head = true});
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  Graph train = TrainingGraph(*std::move(mlp), OptimizerKind::kSgd);
  absl::StatusOr<std::string> text = GraphToTsrText(train);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_NE(text->find("tsr.Variable"), std::string::npos);
  absl::StatusOr<Graph> back = TsrTextToGraph(*text);
  ASSERT_TRUE(back.ok()) << back.status();
  for (const Node* n : train.nodes()) {
    if (n->op_def() != nullptr && !n->op_def()->variable_updates.empty()) {
      const Node* m = back->FindNode(n->name());
      ASSERT_NE(m, nullptr) << n->name();
      EXPECT_EQ(m->op(), n->op());
    }
  }
}

// ResNet-18 (11.7M parameters) exported by scripts/onnx_zoo_models.py (into a temporary
// folder, or read from $TESSERA_ZOO_DIR when given); skipped only outside CTest, where the
// source tree is unknown.
TEST(GraphTsrRoundTrip, ResNet18) {
  const char* zoo = std::getenv("TESSERA_ZOO_DIR");
  std::string dir;
  bool temporary = false;
  if (zoo != nullptr) {
    dir = zoo;
  } else {
    if (std::getenv("TESSERA_SOURCE_DIR") == nullptr) GTEST_SKIP() << "TESSERA_SOURCE_DIR is not set (CTest sets it)";
    dir = absl::StrCat(::testing::TempDir(), "/tsr_roundtrip_zoo_", ::getpid());
    std::filesystem::create_directories(dir);
    temporary = true;
    const absl::Status exported = testing::ExportOnnxZoo(dir, {"resnet18"});
    ASSERT_TRUE(exported.ok()) << exported;
  }
  const std::string path = absl::StrCat(dir, "/resnet18/model.onnx");
  absl::StatusOr<Graph> graph = LoadOnnxGraph(path);
  ASSERT_TRUE(graph.ok()) << graph.status();
  mlir::DialectRegistry registry;
  RegisterGraphDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> module = ImportGraph(context, *graph);
  const auto imported = std::chrono::steady_clock::now();
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<Graph> back = ExportGraph(**module);
  const auto exported = std::chrono::steady_clock::now();
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(GraphDifference(*graph, *back), "");
  std::printf("ResNet-18: %d nodes, import (incl. verify) %.1f ms, export %.1f ms\n", graph->num_nodes(),
              std::chrono::duration<double, std::milli>(imported - start).count(),
              std::chrono::duration<double, std::milli>(exported - imported).count());
  if (temporary) std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tsr
