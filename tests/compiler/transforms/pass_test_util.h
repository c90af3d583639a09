// Helpers of the pass tests (tests/compiler/transforms/*_test.cc): run one pass over a Graph
// through the tsr dialect (import, pass, export), inline tsr.Fusion regions back, run graphs
// with the interpreter, and compare outputs with a relative tolerance.
#ifndef TESSERA_TESTS_COMPILER_TRANSFORMS_PASS_TEST_UTIL_H_
#define TESSERA_TESTS_COMPILER_TRANSFORMS_PASS_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/conversion/graph_tsr.h"
#include "compiler/conversion/mlir_diagnostics.h"
#include "compiler/dialect/tsr_dialect.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/ops.h"
#include "graph/graph.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "runtime/session.h"

namespace tsr::pass_test {

// Graph -> tsr -> `pass` on @main -> Graph.
inline absl::StatusOr<Graph> RunPass(const Graph& graph, std::unique_ptr<mlir::Pass> pass) {
  mlir::DialectRegistry registry;
  RegisterGraphDialects(registry);
  mlir::MLIRContext context(registry);
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> module = ImportGraph(context, graph);
  if (!module.ok()) return module.status();
  DiagnosticCollector diagnostics(context);
  mlir::PassManager pm(&context);
  pm.addNestedPass<mlir::func::FuncOp>(std::move(pass));
  if (mlir::failed(pm.run(**module))) return diagnostics.Error("the pass failed");
  return ExportGraph(**module);
}

// Replaces every tsr.Fusion by the ops of its body (the fusion's inputs for its arguments), so
// that a fused module exports to a Graph the interpreter runs.
inline void InlineFusions(mlir::ModuleOp module) {
  llvm::SmallVector<mlir::tsr::FusionOp> fusions;
  module.walk([&](mlir::tsr::FusionOp f) { fusions.push_back(f); });
  for (mlir::tsr::FusionOp fusion : fusions) {
    mlir::OpBuilder builder(fusion);
    mlir::IRMapping mapping;
    mlir::Block& body = fusion.getBody().front();
    mapping.map(body.getArguments(), fusion.getInputs());
    for (mlir::Operation& op : body.without_terminator()) builder.clone(op, mapping);
    auto yield = llvm::cast<mlir::tsr::YieldOp>(body.getTerminator());
    for (auto [result, value] : llvm::zip(fusion.getResults(), yield.getValues())) {
      result.replaceAllUsesWith(mapping.lookup(value));
    }
    fusion.erase();
  }
}

inline int CountOp(const Graph& g, absl::string_view op) {
  int n = 0;
  for (const Node* node : g.nodes()) n += node->op() == op;
  return n;
}

// A tensor of uniform values in [lo, hi) (f32 or f64).
inline Tensor RandomTensor(DType dtype, const Shape& shape, std::mt19937& rng, double lo = -1.0, double hi = 1.0) {
  std::uniform_real_distribution<double> dist(lo, hi);
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (dtype == DType::kF32) {
      t.data<float>()[i] = static_cast<float>(dist(rng));
    } else {
      t.data<double>()[i] = dist(rng);
    }
  }
  return t;
}

inline Output RandomConst(GraphBuilder& b, const Shape& shape, std::mt19937& rng, double lo = -1.0, double hi = 1.0) {
  return ops::Const(b, RandomTensor(DType::kF32, shape, rng, lo, hi));
}

// Runs `graph` with the interpreter (reference kernels, the oracle) and returns `fetches`.
inline std::vector<Tensor> RunGraph(Graph graph, const std::vector<std::pair<std::string, Tensor>>& feeds,
                                    const std::vector<std::string>& fetches) {
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(std::move(graph), {.device = "reference"});
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return {};
  absl::StatusOr<std::vector<Tensor>> out = (*session)->Run(feeds, fetches);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : std::vector<Tensor>{};
}

// |actual - expected| <= rel * max(|expected|, scale) per element, with scale the largest
// |expected| of the tensor, so that elements near 0 (where folding reorders a cancellation) are
// held to the tensor's magnitude.
inline void ExpectClose(const Tensor& expected, const Tensor& actual, double rel) {
  ASSERT_EQ(expected.type(), actual.type());
  double scale = 0;
  for (int64_t i = 0; i < expected.num_elements(); ++i) scale = std::max(scale, std::abs(expected.GetAsDouble(i)));
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    const double e = expected.GetAsDouble(i), a = actual.GetAsDouble(i);
    ASSERT_LE(std::abs(a - e), rel * std::max(std::abs(e), scale)) << "element " << i << ": " << a << " vs " << e;
  }
}

// Runs `graph` and `pass`(graph) on the same feeds and compares every output.
inline void ExpectSameOutputs(const Graph& before, const Graph& after,
                              const std::vector<std::pair<std::string, Tensor>>& feeds, double rel) {
  std::vector<std::string> fetches;
  for (const SignatureEntry& out : before.outputs()) fetches.push_back(out.name);
  std::vector<Tensor> expected = RunGraph(before.Clone(), feeds, fetches);
  std::vector<Tensor> actual = RunGraph(after.Clone(), feeds, fetches);
  ASSERT_EQ(expected.size(), fetches.size());
  ASSERT_EQ(actual.size(), fetches.size());
  for (size_t i = 0; i < fetches.size(); ++i) {
    SCOPED_TRACE(fetches[i]);
    ExpectClose(expected[i], actual[i], rel);
  }
}

}  // namespace tsr::pass_test

#endif  // TESSERA_TESTS_COMPILER_TRANSFORMS_PASS_TEST_UTIL_H_
