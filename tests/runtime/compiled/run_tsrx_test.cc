// `tessera run model.tsrx`: the run command on compiled executables written by the test
// (a MatMul kernel step, a function compiled from MLIR, a Relu kernel step), through
// cli::RunRun: outputs and Chrome trace written as for graphs; corrupted, foreign and
// unreadable files, missing inputs and wrong shapes fail with messages naming them.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen.h"
#include "compiler/executable/executable_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/run_op.h"
#include "runtime/native/target_description.h"
#include "runtime/npy.h"
#include "tools/command.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t kSeed = 777;

Tensor Random(Shape shape, uint32_t seed) {
  Tensor t(DType::kF32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : t.flat<float>()) v = dist(rng);
  return t;
}

std::string Bytes(const Tensor& t) { return std::string(static_cast<const char*>(t.raw_data()), t.num_bytes()); }

ExecutableValue Value(std::string name, Shape shape, ValueLocation where, int64_t offset = -1) {
  ExecutableValue v;
  v.name = std::move(name);
  v.shape = std::move(shape);
  v.location = where;
  v.offset = offset;
  return v;
}

// y = relu(x @ w - 1): MatMul kernel, `minus_one` compiled from MLIR, Relu kernel.
constexpr char kMinusOneMlir[] = R"(
#id = affine_map<(i, j) -> (i, j)>
func.func @minus_one(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%u: f32, %o: f32):
    %s = arith.subf %u, %one : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
)";

class RunTsrxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(testing::TempDir(), "/run_tsrx_test");
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    w_ = Random({8, 16}, kSeed);
    x_ = Random({4, 8}, kSeed + 1);
    ASSERT_TRUE(WriteNpy(dir_ + "/x.npy", x_).ok());
    absl::StatusOr<CompiledObject> object = CompileMlirToObject(kMinusOneMlir);
    ASSERT_TRUE(object.ok()) << object.status();
    executable_.producer = "run_tsrx_test";
    executable_.target = {object->target.triple, object->target.cpu, object->target.features};
    executable_.values = {
        Value("x", Shape{4, 8}, ValueLocation::kInput), Value("w", Shape{8, 16}, ValueLocation::kConstant),
        Value("h", Shape{4, 16}, ValueLocation::kArena, 0), Value("g", Shape{4, 16}, ValueLocation::kArena, 256),
        Value("y/out", Shape{4, 16}, ValueLocation::kOutput)};
    executable_.inputs = {{"x", 0}};
    executable_.outputs = {{"y/out", 4}};
    executable_.arena_bytes = 512;
    ExecutableStep matmul, minus_one, relu;
    matmul.name = "MatMul";
    matmul.inputs = {0, 1};
    matmul.outputs = {2};
    minus_one.kind = ExecutableStep::Kind::kFunction;
    minus_one.name = "minus_one";
    minus_one.inputs = {2};
    minus_one.outputs = {3};
    relu.name = "Relu";
    relu.inputs = {3};
    relu.outputs = {4};
    executable_.steps = {matmul, minus_one, relu};
    executable_.constants = {{1, Bytes(w_)}};
    executable_.object_files = {{"fusions.o", std::string(object->object.begin(), object->object.end())}};
    ASSERT_TRUE(WriteExecutable(executable_, dir_ + "/model.tsrx").ok());
  }

  int Run(const std::vector<std::string>& args) {
    out_.str("");
    err_.str("");
    return cli::RunRun(args, out_, err_);
  }

  Tensor Expected() const {
    RunOpOptions cpu;
    cpu.device = kCpuDevice;
    absl::StatusOr<std::vector<Tensor>> h = RunOp("MatMul", {x_, w_}, {}, cpu);
    EXPECT_TRUE(h.ok());
    absl::StatusOr<std::vector<Tensor>> g = RunOp("Sub", {(*h)[0], Tensor::Scalar<float>(1.0f)}, {}, cpu);
    EXPECT_TRUE(g.ok());
    absl::StatusOr<std::vector<Tensor>> y = RunOp("Relu", {(*g)[0]}, {}, cpu);
    EXPECT_TRUE(y.ok());
    return (*y)[0];
  }

  std::string dir_;
  Tensor w_, x_;
  Executable executable_;
  std::ostringstream out_, err_;
};

TEST_F(RunTsrxTest, RunsAndWritesOutputsAndTrace) {
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  ASSERT_EQ(Run({dir_ + "/model.tsrx", "--input", "x=" + dir_ + "/x.npy", "--output-dir", dir_ + "/out", "--profile",
                 dir_ + "/trace.json", "--threads", "2"}),
            cli::kExitOk)
      << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("y/out: f32[4,16]"));
  EXPECT_THAT(out_.str(), HasSubstr("wrote a Chrome trace of 3 ops"));
  absl::StatusOr<Tensor> y = ReadNpy(dir_ + "/out/y_out.npy");
  ASSERT_TRUE(y.ok()) << y.status();
  const Tensor want = Expected();
  ASSERT_EQ(y->type(), want.type());
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    EXPECT_NEAR(y->GetAsDouble(i), want.GetAsDouble(i), 1e-5 * std::max(1.0, std::abs(want.GetAsDouble(i)))) << i;
  }
  std::ifstream trace(dir_ + "/trace.json");
  const std::string json((std::istreambuf_iterator<char>(trace)), std::istreambuf_iterator<char>());
  EXPECT_THAT(json, HasSubstr("\"minus_one\""));
  EXPECT_THAT(json, HasSubstr("\"MatMul\""));
}

TEST_F(RunTsrxTest, RecognizesTheMagicWhateverTheName) {
  std::filesystem::copy_file(dir_ + "/model.tsrx", dir_ + "/model.bin");
  EXPECT_EQ(Run({dir_ + "/model.bin", "--input", "x=" + dir_ + "/x.npy"}), cli::kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("y/out: f32[4,16]"));
}

TEST_F(RunTsrxTest, BadFilesAndInputsFailNamingThem) {
  // A flipped byte in the constant's section: the checksum catches it.
  std::string bytes;
  {
    std::ifstream in(dir_ + "/model.tsrx", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(bytes.size(), 100u);
  bytes[70] = static_cast<char>(bytes[70] ^ 0x10);
  std::ofstream(dir_ + "/corrupt.tsrx", std::ios::binary) << bytes;
  EXPECT_EQ(Run({dir_ + "/corrupt.tsrx", "--input", "x=" + dir_ + "/x.npy"}), cli::kExitFailure);
  EXPECT_THAT(err_.str(), HasSubstr(dir_ + "/corrupt.tsrx"));

  EXPECT_EQ(Run({dir_ + "/absent.tsrx", "--input", "x=" + dir_ + "/x.npy"}), cli::kExitFailure);
  EXPECT_THAT(err_.str(), HasSubstr(dir_ + "/absent.tsrx"));

  // Code for another architecture.
  Executable foreign = executable_;
  foreign.target.triple = "aarch64-unknown-linux-gnu";
  ASSERT_TRUE(WriteExecutable(foreign, dir_ + "/foreign.tsrx").ok());
  EXPECT_EQ(Run({dir_ + "/foreign.tsrx", "--input", "x=" + dir_ + "/x.npy"}), cli::kExitFailure);
  EXPECT_THAT(err_.str(), HasSubstr(dir_ + "/foreign.tsrx"));
  EXPECT_THAT(err_.str(), HasSubstr("aarch64"));

  EXPECT_EQ(Run({dir_ + "/model.tsrx"}), cli::kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("missing --input x=FILE.npy (the model's input 'x' is f32[4,8])"));

  ASSERT_TRUE(WriteNpy(dir_ + "/x5.npy", Random({5, 8}, kSeed)).ok());
  EXPECT_EQ(Run({dir_ + "/model.tsrx", "--input", "x=" + dir_ + "/x5.npy"}), cli::kExitFailure);
  EXPECT_THAT(err_.str(), HasSubstr("input 'x' must be f32[4,8], but the feed is f32[5,8]"));

  EXPECT_EQ(Run({dir_ + "/model.tsrx", "--input", "x=" + dir_ + "/x.npy", "--device", "reference"}), cli::kExitFailure);
  EXPECT_THAT(err_.str(), HasSubstr("cpu device only"));
}

}  // namespace
}  // namespace tsr
