// Training programs compiled by the compile driver (CompileOptions::variables_as_state):
// an MLP's forward pass, backward pass and optimizer updates run as one compiled program
// whose Variables persist between runs; over several steps on the same batches its losses
// and final weights agree with the interpreter running the same graph with the update
// nodes as targets (Session::Run), for SGD, momentum and Adam (slot variables and an i64
// step counter), every update writing its variables in place, no transposed copy written.
// Variables can be read and assigned between runs; errors
// name what is wrong.
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "compiler/pipeline/compile_graph.h"
#include "gmock/gmock.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/nn.h"
#include "graph/builder/ops.h"
#include "graph/builder/optimizers.h"
#include "gtest/gtest.h"
#include "runtime/compiled/compiled_program.h"
#include "runtime/session.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

constexpr unsigned kSeed = 20261202;

struct TrainingGraph {
  Graph graph;
  std::vector<std::string> targets;
  std::vector<std::string> variables;
};

TrainingGraph MlpTraining(OptimizerKind kind) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 12});
  Output labels = b.Input("labels", DType::kI64, {kBatchDim});
  Output h = nn::Dense(b, x, 24, {.activation = "relu", .bias_initializer = "glorot_uniform"});
  Output logits = nn::Dense(b, h, 5);
  Output loss = ops::SoftmaxCrossEntropyLoss(b, logits, labels, {}, "loss");
  TrainingOps train = Minimize(b, loss, TrainableVariables(b), {.kind = kind});
  b.MarkOutput("loss", loss);
  absl::StatusOr<Graph> graph = b.Finish();
  EXPECT_TRUE(graph.ok()) << graph.status();
  TrainingGraph t{graph.ok() ? *std::move(graph) : Graph(), train.update_nodes, {}};
  for (const Node* node : t.graph.nodes()) {
    if (node->op() == "Variable") t.variables.push_back(node->name());
  }
  return t;
}

std::vector<std::pair<std::string, Tensor>> Batch(std::mt19937& rng, int64_t n) {
  Tensor x(DType::kF32, {n, 12}), labels(DType::kI64, {n}), lr(DType::kF32, {});
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : x.flat<float>()) v = dist(rng);
  for (int64_t i = 0; i < n; ++i) labels.data<int64_t>()[i] = static_cast<int64_t>(rng() % 5);
  lr.data<float>()[0] = 0.05f;
  return {{"x", x}, {"labels", labels}, {"learning_rate", lr}};
}

void ExpectClose(const Tensor& want, const Tensor& got, double rel, const std::string& what) {
  ASSERT_EQ(want.type(), got.type()) << what;
  double scale = 1e-30;
  for (int64_t k = 0; k < want.num_elements(); ++k) scale = std::max(scale, std::abs(want.GetAsDouble(k)));
  for (int64_t k = 0; k < want.num_elements(); ++k) {
    ASSERT_NEAR(want.GetAsDouble(k), got.GetAsDouble(k), rel * scale) << what << " element " << k;
  }
}

void TrainBoth(OptimizerKind kind, int steps) {
  SCOPED_TRACE(absl::StrCat("seed ", kSeed, ", optimizer ", OptimizerName(kind)));
  TrainingGraph t = MlpTraining(kind);
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(t.graph.Clone(), {.num_threads = 1, .seed = 7});
  ASSERT_TRUE(session.ok()) << session.status();

  CompileOptions options;
  options.batch = 8;
  options.variables_as_state = true;
  options.targets = t.targets;
  for (const std::string& v : t.variables) {
    absl::StatusOr<Tensor> value = (*session)->GetVariable(v);
    ASSERT_TRUE(value.ok()) << value.status();
    options.variable_values[v] = *value;
  }
  CompileStats stats;
  absl::StatusOr<Executable> executable = CompileGraph(t.graph, options, &stats);
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::printf("%s: %s", std::string(OptimizerName(kind)).c_str(), FormatCompileStats(stats).c_str());
  // Nothing reads a variable after its update: every update writes its variables in
  // place, no step copies a new value into one.
  // The backward pass's transposes (X^T dY, dY W^T) are read by its Gemms as they pack them
  // (tsr-fold-transposes): no step writes a transposed copy.
  int updates_in_place = 0;
  for (const ExecutableStep& step : executable->steps) {
    EXPECT_NE(step.name, "Transpose");
    for (int v : step.outputs) {
      if (executable->values[v].location != ValueLocation::kVariable) continue;
      EXPECT_NE(step.name, "Identity") << "a copy into variable " << executable->values[v].name;
      updates_in_place += absl::c_linear_search(step.inputs, v) ? 1 : 0;
    }
  }
  EXPECT_EQ(updates_in_place, static_cast<int>(t.variables.size()));
  absl::StatusOr<std::unique_ptr<CompiledProgram>> program =
      CompiledProgram::Load(*std::move(executable), {.threads = 1});
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->variables().size(), t.variables.size());

  std::mt19937 rng(kSeed);
  for (int step = 0; step < steps; ++step) {
    SCOPED_TRACE(absl::StrCat("step ", step));
    const auto feeds = Batch(rng, 8);
    absl::StatusOr<std::vector<Tensor>> want = (*session)->Run(feeds, {"loss"}, t.targets);
    ASSERT_TRUE(want.ok()) << want.status();
    absl::StatusOr<std::vector<Tensor>> got = (*program)->Run(feeds);
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectClose((*want)[0], (*got)[0], 1e-4, "loss");
  }
  for (const std::string& v : t.variables) {
    absl::StatusOr<Tensor> want = (*session)->GetVariable(v);
    absl::StatusOr<Tensor> got = (*program)->ReadVariable(v);
    ASSERT_TRUE(want.ok() && got.ok()) << v;
    ExpectClose(*want, *got, 1e-4, v);
  }
}

TEST(CompileTraining, SgdStepsAgreeWithTheInterpreter) { TrainBoth(OptimizerKind::kSgd, 6); }

TEST(CompileTraining, MomentumStepsAgreeWithTheInterpreter) { TrainBoth(OptimizerKind::kMomentum, 6); }

TEST(CompileTraining, AdamStepsAgreeWithTheInterpreter) { TrainBoth(OptimizerKind::kAdam, 6); }

TEST(CompileTraining, VariablesCanBeReadAndAssigned) {
  TrainingGraph t = MlpTraining(OptimizerKind::kSgd);
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(t.graph.Clone(), {.num_threads = 1});
  ASSERT_TRUE(session.ok());
  CompileOptions options;
  options.batch = 4;
  options.variables_as_state = true;
  options.targets = t.targets;
  for (const std::string& v : t.variables) options.variable_values[v] = *(*session)->GetVariable(v);
  absl::StatusOr<Executable> executable = CompileGraph(t.graph, options);
  ASSERT_TRUE(executable.ok()) << executable.status();
  absl::StatusOr<std::unique_ptr<CompiledProgram>> program = CompiledProgram::Load(*std::move(executable));
  ASSERT_TRUE(program.ok()) << program.status();
  const std::string kernel = (*program)->variables().front().name;
  const Shape shape = (*program)->variables().front().shape;
  Tensor zeros(DType::kF32, shape);
  for (float& v : zeros.flat<float>()) v = 0.0f;
  ASSERT_TRUE((*program)->AssignVariable(kernel, zeros).ok());
  absl::StatusOr<Tensor> read = (*program)->ReadVariable(kernel);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->flat<float>()[0], 0.0f);
  EXPECT_THAT((*program)->ReadVariable("nope").status().message(), HasSubstr("no variable 'nope'"));
  EXPECT_THAT((*program)->AssignVariable(kernel, Tensor(DType::kF32, {1})).message(), HasSubstr("but the value is"));

  // Without variables_as_state, the update ops are refused; unknown targets are errors.
  EXPECT_THAT(CompileGraph(t.graph, {.batch = 4}).status().message(), HasSubstr("training steps do not compile"));
  options.targets = {"no_such_node"};
  EXPECT_THAT(CompileGraph(t.graph, options).status().message(), HasSubstr("target 'no_such_node'"));
}

}  // namespace
}  // namespace tsr
