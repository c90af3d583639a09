// Tests of the compile driver (compiler/pipeline/compile_graph.h): graphs compiled to
// Executables and run by runtime/compiled agree with the interpreter (runtime/session.h);
// the batch is bound, Variables are frozen, returned inputs and constants are copied, IR is
// dumped after every stage, the .tsrx round trip runs the same, and graphs it cannot compile
// are refused with errors naming the node.
#include "compiler/pipeline/compile_graph.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "compiler/executable/executable_file.h"
#include "gmock/gmock.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/ops.h"
#include "graph/builder/optimizers.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_features.h"
#include "runtime/compiled/compiled_program.h"
#include "runtime/session.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

constexpr unsigned kSeed = 20261201;

Tensor Random(const Shape& shape, std::mt19937& rng, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  Tensor t(DType::kF32, shape);
  for (float& v : t.flat<float>()) v = dist(rng);
  return t;
}

Graph Finish(GraphBuilder& b) {
  absl::StatusOr<Graph> g = b.Finish();
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : Graph();
}

std::vector<Tensor> Interpret(const Graph& graph, const std::vector<std::pair<std::string, Tensor>>& feeds) {
  std::vector<std::string> fetches;
  for (const SignatureEntry& out : graph.outputs()) fetches.push_back(out.name);
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(graph.Clone());
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return {};
  absl::StatusOr<std::vector<Tensor>> out = (*session)->Run(feeds, fetches);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : std::vector<Tensor>{};
}

std::vector<Tensor> RunCompiled(Executable executable, const std::vector<std::pair<std::string, Tensor>>& feeds,
                                int threads = 1) {
  absl::StatusOr<std::unique_ptr<CompiledProgram>> program =
      CompiledProgram::Load(std::move(executable), {.threads = threads});
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return {};
  absl::StatusOr<std::vector<Tensor>> out = (*program)->Run(feeds);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : std::vector<Tensor>{};
}

// Relative to each tensor's largest magnitude.
void ExpectClose(const std::vector<Tensor>& want, const std::vector<Tensor>& got, double rel = 1e-4) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("output ", i));
    ASSERT_EQ(want[i].type(), got[i].type());
    double scale = 1e-30;
    for (int64_t k = 0; k < want[i].num_elements(); ++k) scale = std::max(scale, std::abs(want[i].GetAsDouble(k)));
    for (int64_t k = 0; k < want[i].num_elements(); ++k) {
      ASSERT_NEAR(want[i].GetAsDouble(k), got[i].GetAsDouble(k), rel * scale) << "element " << k;
    }
  }
}

Executable CompileOk(const Graph& graph, const CompileOptions& options = {}, CompileStats* stats = nullptr) {
  absl::StatusOr<Executable> e = CompileGraph(graph, options, stats);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() ? *std::move(e) : Executable();
}

// A two-layer MLP with a softmax head and a LayerNorm'd residual branch: epilogue fusion,
// region fusion (elementwise and reduction) and library kernels all appear.
Graph MlpGraph(std::mt19937& rng) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 32});
  Output h = ops::MatMul(b, x, ops::Const(b, Random({32, 64}, rng)), "fc1");
  h = ops::Add(b, h, ops::Const(b, Random({64}, rng)), "fc1_bias");
  h = ops::Gelu(b, h, "none", "gelu");
  Output r =
      ops::LayerNormalization(b, h, ops::Const(b, Random({64}, rng)), ops::Const(b, Random({64}, rng)), {}, "ln");
  r = ops::Mul(b, ops::Tanh(b, r, "tanh"), ops::Scalar(b, 0.5f), "scale");
  Output y = ops::MatMul(b, r, ops::Const(b, Random({64, 10}, rng)), "fc2");
  y = ops::Add(b, y, ops::Const(b, Random({10}, rng)), "fc2_bias");
  b.MarkOutput("probs", ops::Softmax(b, y, -1, "softmax"));
  b.MarkOutput("features", r);
  return Finish(b);
}

TEST(CompileGraph, MlpAgreesWithTheInterpreter) {
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  std::mt19937 rng(kSeed);
  const Graph graph = MlpGraph(rng);
  CompileStats stats;
  Executable e = CompileOk(graph, {.batch = 5}, &stats);
  std::printf("%s", FormatCompileStats(stats).c_str());
  EXPECT_GT(stats.function_steps, 0);
  EXPECT_GT(stats.fused_epilogues, 0);
  EXPECT_LT(stats.kernel_steps + stats.function_steps, stats.graph_ops);
  EXPECT_GT(e.object_files.size(), 0u);
  EXPECT_GE(stats.arena_bytes, stats.arena_lower_bound);
  ASSERT_EQ(e.inputs.size(), 1u);
  EXPECT_EQ(e.values[e.inputs[0].value].shape, (Shape{5, 32}));
  const Tensor x = Random({5, 32}, rng);
  ExpectClose(Interpret(graph, {{"x", x}}), RunCompiled(e, {{"x", x}}));
  ExpectClose(Interpret(graph, {{"x", x}}), RunCompiled(std::move(e), {{"x", x}}, 2));
}

TEST(CompileGraph, UnfusedBaselineAgrees) {
  std::mt19937 rng(kSeed + 1);
  const Graph graph = MlpGraph(rng);
  CompileStats stats;
  Executable e = CompileOk(graph, {.batch = 3, .fuse = false}, &stats);
  EXPECT_EQ(stats.function_steps, 0);
  EXPECT_TRUE(e.object_files.empty());
  const Tensor x = Random({3, 32}, rng);
  ExpectClose(Interpret(graph, {{"x", x}}), RunCompiled(std::move(e), {{"x", x}}));
}

// A ResNet basic block with BatchNorms (folded into the convolutions), max pooling and a
// global average pool: fused convolutions with a residual, prepared weights at load.
TEST(CompileGraph, ConvBlockAgreesWithTheInterpreter) {
  SCOPED_TRACE(absl::StrCat("seed ", kSeed + 2));
  std::mt19937 rng(kSeed + 2);
  GraphBuilder b;
  Output x = b.Input("image", DType::kF32, {kBatchDim, 3, 16, 16});
  const ops::ConvOptions same = {.pads = {1, 1, 1, 1}, .kernel_shape = {3, 3}};
  const auto bn = [&](Output y, int64_t c, const std::string& name) {
    return ops::BatchNormalization(b, y, ops::Const(b, Random({c}, rng, 0.5f, 1.5f)), ops::Const(b, Random({c}, rng)),
                                   ops::Const(b, Random({c}, rng)), ops::Const(b, Random({c}, rng, 0.5f, 2.0f)), {},
                                   name);
  };
  Output y = ops::Conv(b, x, ops::Const(b, Random({8, 3, 3, 3}, rng)), same, "conv0");
  y = ops::Relu(b, bn(y, 8, "bn0"), "relu0");
  Output z = ops::Conv(b, y, ops::Const(b, Random({8, 8, 3, 3}, rng)), same, "conv1");
  z = ops::Relu(b, bn(z, 8, "bn1"), "relu1");
  z = ops::Conv(b, z, ops::Const(b, Random({8, 8, 3, 3}, rng)), same, "conv2");
  z = ops::Relu(b, ops::Add(b, bn(z, 8, "bn2"), y, "residual"), "relu2");
  z = ops::MaxPool(b, z, {.kernel_shape = {2, 2}, .strides = {2, 2}}, "pool");
  b.MarkOutput("features", ops::GlobalAveragePool(b, z, "gap"));
  const Graph graph = Finish(b);
  CompileStats stats;
  Executable e = CompileOk(graph, {.batch = 2}, &stats);
  std::printf("%s", FormatCompileStats(stats).c_str());
  EXPECT_EQ(stats.fused_epilogues, 3);
  absl::StatusOr<std::unique_ptr<CompiledProgram>> program = CompiledProgram::Load(e, {.threads = 1});
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->num_prepared_convolutions(), 3);
  const Tensor image = Random({2, 3, 16, 16}, rng);
  ExpectClose(Interpret(graph, {{"image", image}}), RunCompiled(std::move(e), {{"image", image}}));
}

// A MobileNetV2-style inverted residual (24 -> 96 channels, depthwise 3x3, projection with
// the shortcut) and a strided depthwise conv: on an AVX-512 host the convolutions run as
// BlockedConv steps (tsr-activation-layout) on weights prepared at load; both layouts
// agree with the interpreter at 1 and 2 threads.
TEST(CompileGraph, BlockedLayoutAgreesWithTheInterpreter) {
  SCOPED_TRACE(absl::StrCat("seed ", kSeed + 7));
  std::mt19937 rng(kSeed + 7);
  GraphBuilder b;
  Output x = b.Input("image", DType::kF32, {kBatchDim, 24, 14, 14});
  Output y =
      ops::Conv(b, x, ops::Const(b, Random({96, 24, 1, 1}, rng)), ops::Const(b, Random({96}, rng)), {}, "expand");
  y = ops::Clip(b, y, 0.0, 6.0, "relu6_expand");
  y = ops::Conv(b, y, ops::Const(b, Random({96, 1, 3, 3}, rng)), ops::Const(b, Random({96}, rng)),
                {.pads = {1, 1, 1, 1}, .group = 96}, "dw");
  y = ops::Clip(b, y, 0.0, 6.0, "relu6_dw");
  y = ops::Conv(b, y, ops::Const(b, Random({24, 96, 1, 1}, rng)), {}, "project");
  y = ops::Add(b, x, y, "shortcut");
  y = ops::Conv(b, y, ops::Const(b, Random({24, 1, 3, 3}, rng)), {.strides = {2, 2}, .pads = {1, 1, 1, 1}, .group = 24},
                "dw_stride2");
  b.MarkOutput("features", ops::GlobalAveragePool(b, y, "gap"));
  const Graph graph = Finish(b);
  const Tensor image = Random({2, 24, 14, 14}, rng);
  const std::vector<Tensor> want = Interpret(graph, {{"image", image}});
  for (bool blocked : {true, false}) {
    SCOPED_TRACE(blocked ? "blocked layout" : "NCHW");
    Executable e = CompileOk(graph, {.batch = 2, .blocked_layout = blocked});
    const int64_t blocked_steps =
        absl::c_count_if(e.steps, [](const ExecutableStep& s) { return s.name == "BlockedConv"; });
    EXPECT_EQ(blocked_steps, blocked && ActiveCpuIsa() >= CpuIsa::kAvx2 ? 4 : 0);
    absl::StatusOr<std::unique_ptr<CompiledProgram>> program = CompiledProgram::Load(e, {.threads = 1});
    ASSERT_TRUE(program.ok()) << program.status();
    EXPECT_EQ((*program)->num_prepared_convolutions(), 4);
    ExpectClose(want, RunCompiled(e, {{"image", image}}));
    ExpectClose(want, RunCompiled(std::move(e), {{"image", image}}, 2));
  }
}

// Outputs that are an input, a constant, or the same value twice get copies of their own;
// names and order follow the signature.
TEST(CompileGraph, ReturnedInputsConstantsAndDuplicates) {
  std::mt19937 rng(kSeed + 3);
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 4});
  const Tensor c = Random({2, 2}, rng);
  Output y = ops::Relu(b, x, "relu");
  b.MarkOutput("same_as_x", x);
  b.MarkOutput("y", y);
  b.MarkOutput("y_again", y);
  b.MarkOutput("constant", ops::Const(b, c));
  const Graph graph = Finish(b);
  Executable e = CompileOk(graph, {.batch = 3});
  ASSERT_EQ(e.outputs.size(), 4u);
  EXPECT_EQ(e.outputs[0].name, "same_as_x");
  EXPECT_EQ(e.outputs[3].name, "constant");
  const Tensor xv = Random({3, 4}, rng);
  ExpectClose(Interpret(graph, {{"x", xv}}), RunCompiled(std::move(e), {{"x", xv}}), 0);
}

// A Reshape whose input dies there is planned in place: its output is its input's bytes
// and the step copies nothing (GPT-2's head reshapes were 400 KB copies each).
TEST(CompileGraph, ReshapeRunsInPlace) {
  std::mt19937 rng(kSeed + 4);
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 12});
  Output h = ops::MatMul(b, x, ops::Const(b, Random({12, 24}, rng)), "fc");
  Output r = ops::Reshape(b, h, std::vector<int64_t>{-1, 4, 6}, false, "heads");
  b.MarkOutput("y", ops::Transpose(b, r, {0, 2, 1}, "swap"));
  const Graph graph = Finish(b);
  Executable e = CompileOk(graph, {.batch = 5});
  int reshapes = 0;
  for (const ExecutableStep& step : e.steps) {
    if (step.kind != ExecutableStep::Kind::kKernel || step.name != "Reshape") continue;
    ++reshapes;
    ASSERT_EQ(step.outputs.size(), 1u);
    EXPECT_EQ(e.values[step.outputs[0]].reused_from, step.inputs[0]);
    EXPECT_EQ(e.values[step.outputs[0]].offset, e.values[step.inputs[0]].offset);
  }
  EXPECT_EQ(reshapes, 1);
  const Tensor xv = Random({5, 12}, rng);
  ExpectClose(Interpret(graph, {{"x", xv}}), RunCompiled(std::move(e), {{"x", xv}}), 0);
}

TEST(CompileGraph, FreezesVariablesWithValuesOrGivenValues) {
  std::mt19937 rng(kSeed + 4);
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 8});
  const Tensor w = Random({8, 4}, rng), bias = Random({4}, rng);
  Output y = ops::MatMul(b, x, ops::Variable(b, "w", DType::kF32, {8, 4}, {.value = w}), "mm");
  y = ops::Add(b, y, ops::Variable(b, "bias", DType::kF32, {4}), "add");
  b.MarkOutput("y", y);
  const Graph graph = Finish(b);

  absl::StatusOr<Executable> missing = CompileGraph(graph, {.batch = 2});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("Variable 'bias' holds no value"));

  CompileOptions options;
  options.batch = 2;
  options.variable_values["bias"] = bias;
  Executable e = CompileOk(graph, options);
  const Tensor xv = Random({2, 8}, rng);
  std::vector<Tensor> got = RunCompiled(std::move(e), {{"x", xv}});
  ASSERT_EQ(got.size(), 1u);
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      double want = bias.data<float>()[j];
      for (int64_t k = 0; k < 8; ++k) want += xv.data<float>()[i * 8 + k] * w.data<float>()[k * 4 + j];
      EXPECT_NEAR(got[0].data<float>()[i * 4 + j], want, 1e-5) << i << "," << j;
    }
  }

  options.variable_values["bias"] = Random({5}, rng);
  absl::StatusOr<Executable> wrong = CompileGraph(graph, options);
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.status().message(), HasSubstr("Variable 'bias' is tensor<4xf32> but its value is tensor<5xf32>"));
}

TEST(CompileGraph, RefusesTrainingStepsAndBadOptions) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 3});
  Output w = ops::Variable(b, "w", DType::kF32, {3, 2}, {.initializer = "uniform"});
  Output loss = ops::ReduceMean(b, ops::MatMul(b, x, w), std::vector<int64_t>{}, false, "loss");
  TrainingOps train = Minimize(b, loss, TrainableVariables(b), {.kind = OptimizerKind::kSgd});
  b.MarkOutput("loss", loss);
  b.MarkOutput("step", train.global_step);
  Graph graph = Finish(b);
  CompileOptions options;
  options.variable_values["w"] = Tensor(DType::kF32, {3, 2});
  absl::StatusOr<Executable> e = CompileGraph(graph, options);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("updates Variables: training steps do not compile yet"));

  EXPECT_THAT(CompileGraph(graph, {.batch = 0}).status().message(), HasSubstr("batch size must be >= 1"));
  EXPECT_THAT(CompileGraph(graph, {.threads = -1}).status().message(), HasSubstr("threads is -1"));
}

TEST(CompileGraph, DumpsTheIrAfterEveryStage) {
  std::mt19937 rng(kSeed + 5);
  const Graph graph = MlpGraph(rng);
  const std::string dir = absl::StrCat(::testing::TempDir(), "/tsr_dump_ir_", ::getpid());
  std::filesystem::remove_all(dir);
  CompileStats stats;
  CompileOptions options;
  options.dump_ir_dir = dir;
  Executable e = CompileOk(graph, options, &stats);
  ASSERT_GE(stats.dumped_files.size(), 12u);
  EXPECT_THAT(stats.dumped_files.front(), HasSubstr("/00-import.mlir"));
  EXPECT_THAT(stats.dumped_files[1], HasSubstr("/01-canonicalize.mlir"));
  EXPECT_THAT(stats.dumped_files.back(), HasSubstr("-executable.txt"));
  bool outlined = false, codegen = false;
  for (const std::string& f : stats.dumped_files) {
    ASSERT_TRUE(std::filesystem::exists(f)) << f;
    EXPECT_GT(std::filesystem::file_size(f), 0u) << f;
    outlined |= f.find("tsr-outline-fusions") != std::string::npos;
    codegen |= f.find("codegen-input") != std::string::npos;
  }
  EXPECT_TRUE(outlined);
  EXPECT_TRUE(codegen);
  // Code generation's own passes: bufferization, the vectorization schedule, LLVM IR.
  const auto dumped = [&](const std::string& part) {
    return std::any_of(stats.dumped_files.begin(), stats.dumped_files.end(),
                       [&](const std::string& f) { return f.find(part) != std::string::npos; });
  };
  EXPECT_TRUE(dumped("-codegen-one-shot-bufferize.mlir"));
  EXPECT_TRUE(dumped("-codegen-transform-schedule.mlir"));
  EXPECT_TRUE(dumped("-codegen-convert-func-to-llvm.mlir"));
  EXPECT_TRUE(dumped("-codegen-llvm-ir.ll"));
  std::filesystem::remove_all(dir);
}

TEST(CompileGraph, TsrxRoundTripRunsTheSame) {
  std::mt19937 rng(kSeed + 6);
  const Graph graph = MlpGraph(rng);
  Executable e = CompileOk(graph, {.batch = 4, .threads = 2});
  EXPECT_EQ(e.threads, 2);
  const std::string path = absl::StrCat(::testing::TempDir(), "/tsr_compile_", ::getpid(), ".tsrx");
  ASSERT_TRUE(WriteExecutable(e, path).ok());
  absl::StatusOr<Executable> read = ReadExecutable(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, e);
  absl::StatusOr<std::unique_ptr<CompiledProgram>> program = CompiledProgram::Load(*std::move(read));
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*program)->num_threads(), 2);
  const Tensor x = Random({4, 32}, rng);
  absl::StatusOr<std::vector<Tensor>> out = (*program)->Run({{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectClose(Interpret(graph, {{"x", x}}), *out);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tsr

namespace tsr {
namespace {

// LayerNormalization over the last axis as ONNX exporters write it (ReduceMean, Sub, Pow,
// ReduceMean, Add, Sqrt, Div), plus an offset.
Output DecomposedLayerNorm(GraphBuilder& b, Output x, Output offset) {
  Output mean = ops::ReduceMean(b, x, std::vector<int64_t>{-1}, true, "mean");
  Output centered = ops::Sub(b, x, mean, "centered");
  Output var = ops::ReduceMean(b, ops::Pow(b, centered, ops::Scalar(b, 2.0f)), std::vector<int64_t>{-1}, true, "var");
  Output stddev = ops::Sqrt(b, ops::Add(b, var, ops::Scalar(b, 1e-5f)), "stddev");
  return ops::Add(b, ops::Div(b, centered, stddev), offset, "ln");
}

// The fusions of a transformer block as ONNX exporters write them: LayerNormalization
// decomposed (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Add), a causal mask applied
// with Where before Softmax, and the erf form of Gelu; each output checked on its own.
TEST(CompileGraph, TransformerFusionsAgree) {
  SCOPED_TRACE(absl::StrCat("seed ", kSeed + 7));
  std::mt19937 rng(kSeed + 7);
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 16, 48});
  b.MarkOutput("ln", DecomposedLayerNorm(b, x, ops::Const(b, Random({48}, rng))));

  Output scores = b.Input("scores", DType::kF32, {kBatchDim, 3, 16, 16});
  Tensor mask(DType::kBool, {1, 1, 16, 16});
  for (int64_t i = 0; i < 16; ++i) {
    for (int64_t j = 0; j < 16; ++j) mask.data<bool>()[i * 16 + j] = j > i;
  }
  Output masked =
      ops::Where(b, ops::Const(b, mask), ops::Scalar(b, -1e9f), ops::Mul(b, scores, ops::Scalar(b, 0.125f)), "masked");
  b.MarkOutput("attention", ops::Softmax(b, masked, -1, "softmax"));

  Output h = b.Input("h", DType::kF32, {kBatchDim, 16, 96});
  Output gelu = ops::Mul(
      b, ops::Mul(b, h, ops::Add(b, ops::Erf(b, ops::Div(b, h, ops::Scalar(b, 1.4142135f))), ops::Scalar(b, 1.0f))),
      ops::Scalar(b, 0.5f), "gelu");
  b.MarkOutput("gelu", gelu);
  const Graph graph = Finish(b);
  CompileStats stats;
  Executable e = CompileOk(graph, {.batch = 2}, &stats);
  std::printf("%s", FormatCompileStats(stats).c_str());
  EXPECT_GE(stats.function_steps, 3);
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"x", Random({2, 16, 48}, rng)},
                                                             {"scores", Random({2, 3, 16, 16}, rng, -4, 4)},
                                                             {"h", Random({2, 16, 96}, rng, -3, 3)}};
  const std::vector<Tensor> want = Interpret(graph, feeds);
  const std::vector<Tensor> got = RunCompiled(std::move(e), feeds);
  ASSERT_EQ(want.size(), 3u);
  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(graph.outputs()[i].name);
    ExpectClose({want[i]}, {got[i]});
  }
}

// Fusions large enough to split into blocks of rows (compiler/lowering/fusion_tiling.h) are
// called once per block, on several threads: a decomposed LayerNorm, a masked Softmax along
// the last axis and Gelu are tiled; at batch 1 (the rows cut) a Softmax along axis 1 and a
// reduction over it are not, at batch 2 (the batch cut) they are. Every output agrees with the
// interpreter and is bitwise the same at 1, 2 and 3 threads.
TEST(CompileGraph, TiledFusionsAgreeAtEveryThreadCount) {
  SCOPED_TRACE(absl::StrCat("seed ", kSeed + 8));
  std::mt19937 rng(kSeed + 8);
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 64, 512});
  b.MarkOutput("ln", DecomposedLayerNorm(b, x, ops::Const(b, Random({512}, rng))));
  Output gelu = ops::Gelu(b, ops::Mul(b, x, ops::Scalar(b, 3.0f)), "none", "gelu");
  b.MarkOutput("gelu", gelu);
  Output scores = b.Input("scores", DType::kF32, {kBatchDim, 4, 64, 64});
  Output scaled = ops::Mul(b, scores, ops::Scalar(b, 0.25f), "scaled");
  b.MarkOutput("attention", ops::Softmax(b, scaled, -1, "softmax"));
  // Across axis 1: whole at batch 1, cut by the batch at batch 2.
  b.MarkOutput("heads", ops::Softmax(b, ops::Exp(b, scores, "exp"), 1, "heads"));
  b.MarkOutput("rows", ops::ReduceSum(b, ops::Tanh(b, x, "tanh"), std::vector<int64_t>{1}, true, "rows"));
  const Graph graph = Finish(b);
  for (int64_t batch : {1, 2}) {
    SCOPED_TRACE(absl::StrCat("batch ", batch));
    Executable e = CompileOk(graph, {.batch = batch});
    int tiled = 0;
    for (const ExecutableStep& step : e.steps) {
      if (step.kind != ExecutableStep::Kind::kFunction) continue;
      tiled += step.tiles > 1;
      EXPECT_EQ(step.tile_strides.size(), step.tiles > 1 ? step.inputs.size() + step.outputs.size() : 0u);
    }
    EXPECT_GE(tiled, 3) << "the LayerNorm, Gelu and row Softmax fusions";
    for (const NamedValue& out : e.outputs) {
      if (out.name != "heads" && out.name != "rows") continue;
      for (const ExecutableStep& step : e.steps) {
        if (std::find(step.outputs.begin(), step.outputs.end(), out.value) != step.outputs.end()) {
          // At batch 2 the blocks cut the batch instead, which neither crosses.
          EXPECT_EQ(step.tiles > 1, batch == 2) << out.name;
        }
      }
    }
    const std::vector<std::pair<std::string, Tensor>> feeds = {{"x", Random({batch, 64, 512}, rng)},
                                                               {"scores", Random({batch, 4, 64, 64}, rng, -4, 4)}};
    const std::vector<Tensor> want = Interpret(graph, feeds);
    const std::vector<Tensor> one = RunCompiled(e, feeds, 1);
    ExpectClose(want, one);
    for (int threads : {2, 3}) {
      SCOPED_TRACE(absl::StrCat(threads, " threads"));
      const std::vector<Tensor> got = RunCompiled(e, feeds, threads);
      ASSERT_EQ(got.size(), one.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_TRUE(got[i].BitwiseEquals(one[i])) << graph.outputs()[i].name;
      }
    }
  }
}

}  // namespace
}  // namespace tsr
