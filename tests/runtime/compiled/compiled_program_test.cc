// Tests of runtime/compiled: hand-built Executables (library kernels, a function compiled
// from MLIR, constant Conv weights prepared at load) run by CompiledProgram agree with
// the same ops run one by one through RunOp; bad feeds, foreign targets, missing symbols
// and wrong types are refused with errors naming what is wrong; a .tsrx round trip and a
// multi-threaded run give the same results.
#include "runtime/compiled/compiled_program.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen.h"
#include "compiler/executable/executable_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/run_op.h"
#include "runtime/native/target_description.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

std::string Bytes(const Tensor& t) { return std::string(static_cast<const char*>(t.raw_data()), t.num_bytes()); }

Tensor Random(Shape shape, uint32_t seed) {
  Tensor t(DType::kF32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : t.flat<float>()) v = dist(rng);
  return t;
}

ExecutableValue Value(std::string name, Shape shape, ValueLocation where, int64_t offset = -1, int reused_from = -1) {
  ExecutableValue v;
  v.name = std::move(name);
  v.dtype = DType::kF32;
  v.shape = std::move(shape);
  v.location = where;
  v.offset = offset;
  v.reused_from = reused_from;
  return v;
}

ExecutableStep Kernel(std::string op, std::vector<int> inputs, std::vector<int> outputs, AttrMap attrs = {}) {
  ExecutableStep step;
  step.name = std::move(op);
  step.inputs = std::move(inputs);
  step.outputs = std::move(outputs);
  step.attrs = std::move(attrs);
  return step;
}

ExecutableStep Function(std::string symbol, std::vector<int> inputs, std::vector<int> outputs) {
  ExecutableStep step = Kernel(std::move(symbol), std::move(inputs), std::move(outputs));
  step.kind = ExecutableStep::Kind::kFunction;
  return step;
}

Tensor Op(absl::string_view op, std::vector<std::optional<Tensor>> inputs, const AttrMap& attrs = {}) {
  RunOpOptions options;
  options.device = kCpuDevice;
  absl::StatusOr<std::vector<Tensor>> out = RunOp(op, inputs, attrs, options);
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

void ExpectClose(const Tensor& want, const Tensor& got, double rel = 1e-6) {
  ASSERT_EQ(want.type(), got.type());
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    const double w = want.GetAsDouble(i), g = got.GetAsDouble(i);
    ASSERT_NEAR(w, g, rel * std::max(1.0, std::abs(w))) << "element " << i;
  }
}

std::unique_ptr<CompiledProgram> Load(Executable e, int threads = 1) {
  absl::StatusOr<std::unique_ptr<CompiledProgram>> program = CompiledProgram::Load(std::move(e), {.threads = threads});
  EXPECT_TRUE(program.ok()) << program.status();
  return program.ok() ? *std::move(program) : nullptr;
}

std::vector<Tensor> RunOk(CompiledProgram& program, const std::vector<std::pair<std::string, Tensor>>& feeds,
                          RunMetadata* metadata = nullptr) {
  absl::StatusOr<std::vector<Tensor>> out = program.Run(feeds, metadata);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : std::vector<Tensor>();
}

constexpr uint32_t kSeed = 20261130;

// y = relu(x[4,8] @ w[8,16] + b[16]); the Add runs in place over the MatMul's buffer.
Executable MatMulAddRelu(const Tensor& w, const Tensor& b) {
  Executable e;
  e.producer = "compiled_program_test";
  e.values = {
      Value("x", Shape{4, 8}, ValueLocation::kInput),         Value("w", Shape{8, 16}, ValueLocation::kConstant),
      Value("b", Shape{16}, ValueLocation::kConstant),        Value("h", Shape{4, 16}, ValueLocation::kArena, 0),
      Value("h2", Shape{4, 16}, ValueLocation::kArena, 0, 3), Value("y", Shape{4, 16}, ValueLocation::kOutput)};
  e.inputs = {{"x", 0}};
  e.outputs = {{"y", 5}};
  e.arena_bytes = 4 * 16 * 4;
  e.steps = {Kernel("MatMul", {0, 1}, {3}), Kernel("Add", {3, 2}, {4}), Kernel("Relu", {4}, {5})};
  e.constants = {{1, Bytes(w)}, {2, Bytes(b)}};
  return e;
}

TEST(CompiledProgramTest, KernelStepsMatchRunOp) {
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  const Tensor x = Random({4, 8}, kSeed), w = Random({8, 16}, kSeed + 1), b = Random({16}, kSeed + 2);
  std::unique_ptr<CompiledProgram> program = Load(MatMulAddRelu(w, b));
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->arena_bytes(), 256);
  EXPECT_EQ(program->peak_bytes(), 256 + (512 + 64) + 256);
  ASSERT_EQ(program->inputs().size(), 1u);
  EXPECT_EQ(program->inputs()[0].name, "x");
  EXPECT_EQ(program->outputs()[0].shape, (Shape{4, 16}));

  RunMetadata metadata;
  const std::vector<Tensor> y = RunOk(*program, {{"x", x}}, &metadata);
  ASSERT_EQ(y.size(), 1u);
  ExpectClose(Op("Relu", {Op("Add", {Op("MatMul", {x, w}), b})}), y[0]);
  ASSERT_EQ(metadata.timings.size(), 3u);
  EXPECT_EQ(metadata.timings[0].node, "h");
  EXPECT_EQ(metadata.timings[0].op, "MatMul");
  EXPECT_EQ(metadata.timings[2].op, "Relu");
  EXPECT_EQ(metadata.peak_bytes, program->peak_bytes());

  // A second run with other data: nothing of the first run leaks into it, and the
  // first run's output is not overwritten.
  const Tensor x2 = Random({4, 8}, kSeed + 3);
  const Tensor y_first = y[0].Clone();
  const std::vector<Tensor> y2 = RunOk(*program, {{"x", x2}});
  ASSERT_EQ(y2.size(), 1u);
  ExpectClose(Op("Relu", {Op("Add", {Op("MatMul", {x2, w}), b})}), y2[0]);
  EXPECT_TRUE(y[0].BitwiseEquals(y_first));
}

constexpr char kScaleAddMlir[] = R"(
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
func.func @scale_add(%x: tensor<4x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %m = arith.mulf %u, %two : f32
    %s = arith.addf %m, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
)";

const CompiledObject& ScaleAddObject() {
  static const CompiledObject* object = [] {
    absl::StatusOr<CompiledObject> compiled = CompileMlirToObject(kScaleAddMlir);
    EXPECT_TRUE(compiled.ok()) << compiled.status();
    return new CompiledObject(compiled.ok() ? *std::move(compiled) : CompiledObject());
  }();
  return *object;
}

// y = relu(scale_add(x @ w, b)) with scale_add compiled from MLIR: kernel, function, kernel.
Executable MixedProgram(const Tensor& w, const Tensor& b) {
  const CompiledObject& object = ScaleAddObject();
  Executable e;
  e.producer = "compiled_program_test";
  e.target = {object.target.triple, object.target.cpu, object.target.features};
  e.values = {Value("x", Shape{4, 8}, ValueLocation::kInput),       Value("w", Shape{8, 16}, ValueLocation::kConstant),
              Value("b", Shape{16}, ValueLocation::kConstant),      Value("h", Shape{4, 16}, ValueLocation::kArena, 0),
              Value("g", Shape{4, 16}, ValueLocation::kArena, 256), Value("y", Shape{4, 16}, ValueLocation::kOutput)};
  e.inputs = {{"x", 0}};
  e.outputs = {{"y", 5}};
  e.arena_bytes = 512;
  e.steps = {Kernel("MatMul", {0, 1}, {3}), Function("scale_add", {3, 2}, {4}), Kernel("Relu", {4}, {5})};
  e.constants = {{1, Bytes(w)}, {2, Bytes(b)}};
  e.object_files = {{"fusions.o", std::string(object.object.begin(), object.object.end())}};
  return e;
}

Tensor MixedReference(const Tensor& x, const Tensor& w, const Tensor& b) {
  return Op("Relu", {Op("Add", {Op("Mul", {Op("MatMul", {x, w}), Tensor::Scalar<float>(2.0f)}), b})});
}

TEST(CompiledProgramTest, FunctionStepMixedWithKernelsMatchesRunOp) {
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  const Tensor x = Random({4, 8}, kSeed), w = Random({8, 16}, kSeed + 1), b = Random({16}, kSeed + 2);
  std::unique_ptr<CompiledProgram> program = Load(MixedProgram(w, b));
  ASSERT_NE(program, nullptr);
  RunMetadata metadata;
  const std::vector<Tensor> y = RunOk(*program, {{"x", x}}, &metadata);
  ASSERT_EQ(y.size(), 1u);
  ExpectClose(MixedReference(x, w, b), y[0], 1e-5);
  ASSERT_EQ(metadata.timings.size(), 3u);
  EXPECT_EQ(metadata.timings[1].node, "scale_add");
  EXPECT_EQ(metadata.timings[1].op, "Function");
}

TEST(CompiledProgramTest, RoundTripThroughTsrxRunsTheSame) {
  const Tensor x = Random({4, 8}, kSeed), w = Random({8, 16}, kSeed + 1), b = Random({16}, kSeed + 2);
  const std::string path = absl::StrCat(testing::TempDir(), "/compiled_program_test.tsrx");
  ASSERT_TRUE(WriteExecutable(MixedProgram(w, b), path).ok());
  absl::StatusOr<Executable> read = ReadExecutable(path);
  ASSERT_TRUE(read.ok()) << read.status();
  std::unique_ptr<CompiledProgram> from_file = Load(*std::move(read));
  std::unique_ptr<CompiledProgram> in_memory = Load(MixedProgram(w, b));
  ASSERT_NE(from_file, nullptr);
  ASSERT_NE(in_memory, nullptr);
  const std::vector<Tensor> a = RunOk(*from_file, {{"x", x}}), c = RunOk(*in_memory, {{"x", x}});
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_TRUE(a[0].BitwiseEquals(c[0]));
  std::remove(path.c_str());
}

// Conv(x, w1, b1) -> h ; depthwise strided Conv(h, w2) -> y: both weights constant, so
// both are prepared at load.
Executable TwoConvs(const Tensor& w1, const Tensor& b1, const Tensor& w2) {
  Executable e;
  e.producer = "compiled_program_test";
  e.values = {Value("x", Shape{2, 3, 9, 9}, ValueLocation::kInput),
              Value("w1", Shape{8, 3, 3, 3}, ValueLocation::kConstant),
              Value("b1", Shape{8}, ValueLocation::kConstant),
              Value("h", Shape{2, 8, 9, 9}, ValueLocation::kArena, 0),
              Value("w2", Shape{8, 1, 3, 3}, ValueLocation::kConstant),
              Value("y", Shape{2, 8, 4, 4}, ValueLocation::kOutput)};
  e.inputs = {{"x", 0}};
  e.outputs = {{"y", 5}};
  e.arena_bytes = 2 * 8 * 9 * 9 * 4;
  e.steps = {Kernel("Conv", {0, 1, 2}, {3}, {{"pads", AttrValue::Ints({1, 1, 1, 1})}}),
             Kernel("Conv", {3, 4}, {5}, {{"group", AttrValue::Int(8)}, {"strides", AttrValue::Ints({2, 2})}})};
  e.constants = {{1, Bytes(w1)}, {2, Bytes(b1)}, {4, Bytes(w2)}};
  return e;
}

TEST(CompiledProgramTest, ConvWithConstantWeightsIsPreparedAtLoadAndMatchesRunOp) {
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  const Tensor x = Random({2, 3, 9, 9}, kSeed), w1 = Random({8, 3, 3, 3}, kSeed + 1), b1 = Random({8}, kSeed + 2),
               w2 = Random({8, 1, 3, 3}, kSeed + 3);
  std::unique_ptr<CompiledProgram> program = Load(TwoConvs(w1, b1, w2));
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->num_prepared_convolutions(), 2);
  const std::vector<Tensor> y = RunOk(*program, {{"x", x}});
  ASSERT_EQ(y.size(), 1u);
  const Tensor h = Op("Conv", {x, w1, b1}, {{"pads", AttrValue::Ints({1, 1, 1, 1})}});
  ExpectClose(Op("Conv", {h, w2}, {{"group", AttrValue::Int(8)}, {"strides", AttrValue::Ints({2, 2})}}), y[0], 1e-5);
}

// relu(Conv(x, w, b) + z) as one FusedConv step with constant weights and bias and a
// residual fed by the caller.
TEST(CompiledProgramTest, FusedConvWithConstantWeightsIsPreparedAtLoadAndMatchesRunOp) {
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  const Tensor x = Random({2, 6, 7, 7}, kSeed), w = Random({5, 6, 3, 3}, kSeed + 1), b = Random({5}, kSeed + 2),
               z = Random({2, 5, 7, 7}, kSeed + 3);
  const AttrMap attrs = {{"pads", AttrValue::Ints({1, 1, 1, 1})}, {"activation", AttrValue::String("Relu")}};
  Executable e;
  e.producer = "compiled_program_test";
  e.values = {Value("x", Shape{2, 6, 7, 7}, ValueLocation::kInput),
              Value("w", Shape{5, 6, 3, 3}, ValueLocation::kConstant), Value("b", Shape{5}, ValueLocation::kConstant),
              Value("z", Shape{2, 5, 7, 7}, ValueLocation::kInput),
              Value("y", Shape{2, 5, 7, 7}, ValueLocation::kOutput)};
  e.inputs = {{"x", 0}, {"z", 3}};
  e.outputs = {{"y", 4}};
  e.steps = {Kernel("FusedConv", {0, 1, 2, 3}, {4}, attrs)};
  e.constants = {{1, Bytes(w)}, {2, Bytes(b)}};
  std::unique_ptr<CompiledProgram> program = Load(e);
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->num_prepared_convolutions(), 1);
  const std::vector<Tensor> y = RunOk(*program, {{"x", x}, {"z", z}});
  ASSERT_EQ(y.size(), 1u);
  ExpectClose(Op("FusedConv", {x, w, b, z}, attrs), y[0], 1e-5);
  ExpectClose(Op("Relu", {Op("Add", {Op("Conv", {x, w, b}, {{"pads", AttrValue::Ints({1, 1, 1, 1})}}), z})}), y[0],
              1e-5);
}

// act(A op(W) + b + z) as one FusedMatMul step with constant weights: op(W) packed at
// load (both layouts of W, a rank-3 A, Relu in the GEMM epilogue and Gelu after it, with
// and without a residual), against the kernel through RunOp.
TEST(CompiledProgramTest, FusedMatMulWithConstantWeightsIsPackedAtLoadAndMatchesRunOp) {
  for (int transpose_b = 0; transpose_b < 2; ++transpose_b) {
    for (const char* activation : {"Relu", "Gelu"}) {
      for (bool residual : {false, true}) {
        SCOPED_TRACE(
            absl::StrCat("seed ", kSeed, " transpose_b ", transpose_b, " ", activation, " residual ", residual));
        const Shape w_shape = transpose_b ? Shape{37, 70} : Shape{70, 37};
        const Tensor x = Random({3, 5, 70}, kSeed), w = Random(w_shape, kSeed + 1), b = Random({37}, kSeed + 2),
                     z = Random({3, 5, 37}, kSeed + 3);
        const AttrMap attrs = {{"transpose_b", AttrValue::Int(transpose_b)},
                               {"activation", AttrValue::String(activation)}};
        Executable e;
        e.producer = "compiled_program_test";
        e.values = {Value("x", Shape{3, 5, 70}, ValueLocation::kInput), Value("w", w_shape, ValueLocation::kConstant),
                    Value("b", Shape{37}, ValueLocation::kConstant), Value("z", Shape{3, 5, 37}, ValueLocation::kInput),
                    Value("y", Shape{3, 5, 37}, ValueLocation::kOutput)};
        e.inputs = {{"x", 0}, {"z", 3}};  // z unread without a residual
        e.outputs = {{"y", 4}};
        e.steps = {
            Kernel("FusedMatMul", residual ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{0, 1, 2}, {4}, attrs)};
        e.constants = {{1, Bytes(w)}, {2, Bytes(b)}};
        std::unique_ptr<CompiledProgram> program = Load(e);
        ASSERT_NE(program, nullptr);
        EXPECT_EQ(program->num_prepared_matmuls(), 1);
        const std::vector<Tensor> y = RunOk(*program, {{"x", x}, {"z", z}});
        ASSERT_EQ(y.size(), 1u);
        std::vector<std::optional<Tensor>> inputs = {x, w, b};
        if (residual) inputs.push_back(z);
        ExpectClose(Op("FusedMatMul", inputs, attrs), y[0], 1e-5);
      }
    }
  }
}

// MaxPool's Indices: computed when the program returns them, skipped (and MaxPool's
// values still right) when nothing reads them.
TEST(CompiledProgramTest, OutputsNobodyReadsAreNotNeeded) {
  const Tensor x = Random({2, 3, 8, 9}, kSeed);
  const AttrMap attrs = {{"kernel_shape", AttrValue::Ints({2, 2})}, {"strides", AttrValue::Ints({2, 2})}};
  RunOpOptions options;
  options.device = kCpuDevice;
  absl::StatusOr<std::vector<Tensor>> want = RunOp("MaxPool", {x}, attrs, options);
  ASSERT_TRUE(want.ok()) << want.status();
  for (bool return_indices : {false, true}) {
    SCOPED_TRACE(absl::StrCat("return_indices ", return_indices));
    Executable e;
    e.producer = "compiled_program_test";
    e.values = {Value("x", Shape{2, 3, 8, 9}, ValueLocation::kInput),
                Value("y", Shape{2, 3, 4, 4}, ValueLocation::kOutput),
                return_indices ? Value("i", Shape{2, 3, 4, 4}, ValueLocation::kOutput)
                               : Value("i", Shape{2, 3, 4, 4}, ValueLocation::kArena, 0)};
    e.values[2].dtype = DType::kI64;
    e.arena_bytes = return_indices ? 0 : 2 * 3 * 4 * 4 * 8;
    e.inputs = {{"x", 0}};
    e.outputs = {{"y", 1}};
    if (return_indices) e.outputs.push_back({"i", 2});
    e.steps = {Kernel("MaxPool", {0}, {1, 2}, attrs)};
    std::unique_ptr<CompiledProgram> program = Load(e);
    ASSERT_NE(program, nullptr);
    const std::vector<Tensor> y = RunOk(*program, {{"x", x}});
    ASSERT_EQ(y.size(), return_indices ? 2u : 1u);
    ExpectClose((*want)[0], y[0], 0.0);
    if (return_indices) {
      ASSERT_EQ(y[1].dtype(), DType::kI64);
      for (int64_t j = 0; j < y[1].num_elements(); ++j) {
        ASSERT_EQ(y[1].flat<int64_t>()[j], (*want)[1].flat<int64_t>()[j]) << "index " << j;
      }
    }
  }
}

TEST(CompiledProgramTest, BadFeedsAreRefusedNamingTheInput) {
  const Tensor w = Random({8, 16}, kSeed + 1), b = Random({16}, kSeed + 2);
  std::unique_ptr<CompiledProgram> program = Load(MatMulAddRelu(w, b));
  ASSERT_NE(program, nullptr);
  const Tensor x = Random({4, 8}, kSeed);
  const auto error = [&](const std::vector<std::pair<std::string, Tensor>>& feeds) {
    absl::StatusOr<std::vector<Tensor>> out = program->Run(feeds);
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(out.status().message());
  };
  EXPECT_THAT(error({{"z", x}}), HasSubstr("feed 'z' is not an input of the program (inputs: x)"));
  EXPECT_THAT(error({{"x", Tensor(DType::kF64, Shape{4, 8})}}), HasSubstr("input 'x' must be f32[4,8]"));
  EXPECT_THAT(error({{"x", Random({4, 9}, kSeed)}}), HasSubstr("input 'x' must be f32[4,8], but the feed is f32[4,9]"));
  EXPECT_THAT(error({{"x", Random({1, 4, 8}, kSeed)}}), HasSubstr("input 'x'"));
  EXPECT_THAT(error({}), HasSubstr("input 'x' (f32[4,8]) is not fed"));
  EXPECT_THAT(error({{"x", x}, {"x", x}}), HasSubstr("input 'x' is fed twice"));
  // The program still runs after refusals.
  EXPECT_EQ(RunOk(*program, {{"x", x}}).size(), 1u);
}

TEST(CompiledProgramTest, ForeignTargetsAreRefused) {
  const Tensor w = Random({8, 16}, kSeed + 1), b = Random({16}, kSeed + 2);
  const TargetDescription host = HostTargetDescription();
  if (host.features.find("+avx512f") == std::string::npos) {
    Executable e = MixedProgram(w, b);
    e.target.features += ",+avx512f";
    absl::StatusOr<std::unique_ptr<CompiledProgram>> program = CompiledProgram::Load(std::move(e));
    EXPECT_EQ(program.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(program.status().message(), HasSubstr("+avx512f"));
    EXPECT_THAT(program.status().message(), HasSubstr("this host cannot run the executable's code"));
  }
  Executable arm = MixedProgram(w, b);
  arm.target.triple = "aarch64-unknown-linux-gnu";
  absl::StatusOr<std::unique_ptr<CompiledProgram>> program = CompiledProgram::Load(std::move(arm));
  EXPECT_EQ(program.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(program.status().message(), HasSubstr("aarch64-unknown-linux-gnu"));
}

TEST(CompiledProgramTest, MissingSymbolsAndKernelsAndWrongTypesAreRefused) {
  const Tensor w = Random({8, 16}, kSeed + 1), b = Random({16}, kSeed + 2);
  Executable missing = MixedProgram(w, b);
  missing.steps[1].name = "no_such_function";
  absl::StatusOr<std::unique_ptr<CompiledProgram>> program = CompiledProgram::Load(std::move(missing));
  EXPECT_EQ(program.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(program.status().message(), HasSubstr("step 1 (function 'no_such_function')"));
  EXPECT_THAT(program.status().message(), HasSubstr("scale_add"));

  Executable no_code = MixedProgram(w, b);
  no_code.object_files.clear();
  program = CompiledProgram::Load(std::move(no_code));
  EXPECT_EQ(program.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(program.status().message(), HasSubstr("no object files"));

  Executable unknown_op = MatMulAddRelu(w, b);
  unknown_op.steps[2].name = "NoSuchOp";
  program = CompiledProgram::Load(std::move(unknown_op));
  EXPECT_FALSE(program.ok());
  EXPECT_THAT(program.status().message(), HasSubstr("step 2 (NoSuchOp)"));

  // Relu's output declared [64]: the right size, the wrong shape.
  Executable wrong_shape = MatMulAddRelu(w, b);
  wrong_shape.values[5].shape = Shape{64};
  program = CompiledProgram::Load(std::move(wrong_shape));
  EXPECT_EQ(program.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(program.status().message(), HasSubstr("step 2 (Relu): output 0 ('y') is f32[64]"));

  // MatMul's output (and the Add's in-place one) declared f64: the op infers f32.
  Executable wrong_dtype = MatMulAddRelu(w, b);
  wrong_dtype.values[3].dtype = DType::kF64;
  wrong_dtype.values[4].dtype = DType::kF64;
  wrong_dtype.arena_bytes = 512;
  program = CompiledProgram::Load(std::move(wrong_dtype));
  EXPECT_FALSE(program.ok());
  EXPECT_THAT(program.status().message(), HasSubstr("step 0 (MatMul): output 0 ('h') is f64[4,16]"));
}

// A program big enough for ParallelFor to split: MatMul -> Relu and a Winograd-sized Conv.
TEST(CompiledProgramTest, ThreeThreadsGiveTheSameResultsAsOne) {
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  const Tensor a = Random({64, 256}, kSeed), w = Random({256, 256}, kSeed + 1);
  const Tensor x = Random({2, 16, 32, 32}, kSeed + 2), k = Random({32, 16, 3, 3}, kSeed + 3);
  const auto make = [&] {
    Executable e;
    e.producer = "compiled_program_test";
    e.values = {Value("a", Shape{64, 256}, ValueLocation::kInput),
                Value("w", Shape{256, 256}, ValueLocation::kConstant),
                Value("h", Shape{64, 256}, ValueLocation::kArena, 0),
                Value("y1", Shape{64, 256}, ValueLocation::kOutput),
                Value("x", Shape{2, 16, 32, 32}, ValueLocation::kInput),
                Value("k", Shape{32, 16, 3, 3}, ValueLocation::kConstant),
                Value("y2", Shape{2, 32, 32, 32}, ValueLocation::kOutput)};
    e.inputs = {{"a", 0}, {"x", 4}};
    e.outputs = {{"y1", 3}, {"y2", 6}};
    e.arena_bytes = 64 * 256 * 4;
    e.steps = {Kernel("MatMul", {0, 1}, {2}), Kernel("Relu", {2}, {3}),
               Kernel("Conv", {4, 5}, {6}, {{"pads", AttrValue::Ints({1, 1, 1, 1})}})};
    e.constants = {{1, Bytes(w)}, {5, Bytes(k)}};
    return e;
  };
  std::unique_ptr<CompiledProgram> one = Load(make(), 1), three = Load(make(), 3);
  ASSERT_NE(one, nullptr);
  ASSERT_NE(three, nullptr);
  EXPECT_EQ(three->num_threads(), 3);
  const std::vector<Tensor> y1 = RunOk(*one, {{"x", x}, {"a", a}}), y3 = RunOk(*three, {{"a", a}, {"x", x}});
  ASSERT_EQ(y1.size(), 2u);
  ASSERT_EQ(y3.size(), 2u);
  EXPECT_TRUE(y1[0].BitwiseEquals(y3[0]));
  EXPECT_TRUE(y1[1].BitwiseEquals(y3[1]));
  ExpectClose(Op("Relu", {Op("MatMul", {a, w})}), y3[0], 1e-5);
  ExpectClose(Op("Conv", {x, k}, {{"pads", AttrValue::Ints({1, 1, 1, 1})}}), y3[1], 1e-4);
}

}  // namespace
}  // namespace tsr
