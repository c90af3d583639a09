// `tessera run model.onnx --input x=file.npy`: the run command on an ONNX file written
// by the test (a batch-symbolic MatMul + Add), through cli::RunRun.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/npy.h"
#include "tests/graph/onnx/onnx_test_util.h"
#include "tools/command.h"

namespace tsr::onnx_test {
namespace {

using ::testing::HasSubstr;

class RunOnnxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("cli");
    onnx::ModelProto m = MakeModel(13);
    AddInput(m, "x", TensorProto::FLOAT, {"batch", 2});
    AddInitializer(m, FloatTensor("w", {2, 2}, {1, 2, 3, 4}));
    AddInitializer(m, FloatTensor("b", {2}, {0.5, -0.5}));
    AddNode(m, "MatMul", {"x", "w"}, {"xw"});
    AddNode(m, "Add", {"xw", "b"}, {"logits"});
    AddOutput(m, "logits");
    std::ofstream(dir_ + "/model.onnx", std::ios::binary) << Serialize(m);
    ASSERT_TRUE(WriteNpy(dir_ + "/x.npy", F32({3, 2}, {1, 0, 0, 1, 1, 1})).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  int Run(const std::vector<std::string>& args) {
    out_.str("");
    err_.str("");
    return cli::RunRun(args, out_, err_);
  }

  std::string dir_;
  std::ostringstream out_, err_;
};

TEST_F(RunOnnxTest, RunsAnOnnxFile) {
  ASSERT_EQ(Run({dir_ + "/model.onnx", "--input", "x=" + dir_ + "/x.npy", "--output-dir", dir_ + "/out", "--device",
                 "reference"}),
            cli::kExitOk)
      << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("logits: f32[3,2]"));
  absl::StatusOr<Tensor> logits = ReadNpy(dir_ + "/out/logits.npy");
  ASSERT_TRUE(logits.ok()) << logits.status();
  // [1,0]@w = [1,2], [0,1]@w = [3,4], [1,1]@w = [4,6]; plus b.
  ExpectTensorNear(*logits, {3, 2}, {1.5, 1.5, 3.5, 3.5, 4.5, 5.5});
}

TEST_F(RunOnnxTest, ErrorsNameTheModelAndInput) {
  EXPECT_EQ(Run({dir_ + "/model.onnx"}), cli::kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("missing --input x=FILE.npy"));
  std::ofstream(dir_ + "/bad.onnx", std::ios::binary) << "\x08\x07\x12";
  EXPECT_EQ(Run({dir_ + "/bad.onnx", "--input", "x=" + dir_ + "/x.npy"}), cli::kExitFailure);
  EXPECT_THAT(err_.str(), HasSubstr(dir_ + "/bad.onnx: "));
}

}  // namespace
}  // namespace tsr::onnx_test
