// Real models through the ONNX importer: scripts/onnx_zoo_models.py exports an MLP, a
// LeNet-style CNN, torchvision's ResNet-18 and MobileNetV2 and a GPT-2 style transformer
// block (opset 13, opset 17, and with dynamic batch/sequence axes) with PyTorch — random
// weights from fixed seeds — and Tessera's outputs on the CPU device must match
// PyTorch's.
//
// Agreement: max |tessera - torch| / max |torch| <= 1e-4 over the whole output (the
// error relative to the output's scale). Elementwise relative error is meaningless for
// outputs near zero (logits cross zero; summation order alone moves them by ~1e-7 of the
// scale), while this norm still catches any wrong op: a mis-mapped attribute or a
// missing bias moves some output by a sizeable fraction of the largest one.
//
// The models are generated here, not committed. The script needs Debian's
// python3-torch and python3-torchvision for /usr/bin/python3 ($TESSERA_PYTHON
// overrides); without them the test fails saying so. It lives outside tests/graph/onnx
// so the sanitizer job (which runs the kernels, runtime and graph/onnx tests) does not
// run the large models under ASan.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/onnx/onnx_importer.h"
#include "gtest/gtest.h"
#include "runtime/npy.h"
#include "runtime/session.h"
#include "tests/models/onnx_zoo_export.h"

namespace tsr {
namespace {

// Runs the export script once for all tests into a temporary folder.
class OnnxZooTest : public ::testing::TestWithParam<const char*> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(absl::StrCat(::testing::TempDir(), "/onnx_zoo_", ::getpid()));
    std::filesystem::remove_all(*dir_);
    std::filesystem::create_directories(*dir_);
    const auto start = std::chrono::steady_clock::now();
    if (absl::Status exported = testing::ExportOnnxZoo(*dir_); !exported.ok()) {
      *setup_error_ = std::string(exported.message());
      return;
    }
    std::printf("exported the zoo in %.1f s\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
    dir_ = nullptr;
  }

  static std::string* dir_;
  static std::string* setup_error_;
};

std::string* OnnxZooTest::dir_ = nullptr;
std::string* OnnxZooTest::setup_error_ = new std::string();

TEST_P(OnnxZooTest, MatchesPyTorch) {
  ASSERT_TRUE(setup_error_->empty()) << *setup_error_;
  const std::string name = GetParam();
  const std::string folder = absl::StrCat(*dir_, "/", name);
  SCOPED_TRACE(absl::StrCat("model ", name, " (torch.manual_seed(0) weights) in ", folder));
  absl::StatusOr<Tensor> input = ReadNpy(folder + "/input.npy");
  ASSERT_TRUE(input.ok()) << input.status();
  absl::StatusOr<Tensor> expected = ReadNpy(folder + "/expected.npy");
  ASSERT_TRUE(expected.ok()) << expected.status();

  OnnxImportOptions options;
  // The dynamic export names its axes; Tessera's shapes are static but for one batch
  // dim, so both are bound, which lets the importer fold the export's shape arithmetic.
  if (name == "gpt_block_dynamic") options.dim_bindings = {{"batch", 1}, {"seq", 128}};
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<ImportedModel> model = ImportOnnxModel(folder + "/model.onnx", options);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(model->input_names.size(), 1u);
  ASSERT_EQ(model->output_names.size(), 1u);
  const int64_t folded = model->num_folded_nodes;
  const std::string input_name = model->input_names[0], output_name = model->output_names[0];
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(std::move(model->graph));
  ASSERT_TRUE(session.ok()) << session.status();
  const auto imported = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<Tensor>> out = (*session)->Run({{input_name, *input}}, {output_name});
  ASSERT_TRUE(out.ok()) << out.status();
  const auto ran = std::chrono::steady_clock::now();

  const Tensor& got = (*out)[0];
  ASSERT_EQ(got.type(), expected->type()) << got.DebugString() << " vs " << expected->DebugString();
  double max_diff = 0, max_ref = 0;
  int64_t worst = 0;
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    double diff = std::abs(got.GetAsDouble(i) - expected->GetAsDouble(i));
    if (std::isnan(diff)) diff = std::numeric_limits<double>::infinity();  // NaN counts as the worst
    if (diff > max_diff) {
      max_diff = diff;
      worst = i;
    }
    max_ref = std::max(max_ref, std::abs(expected->GetAsDouble(i)));
  }
  const double relative = max_diff / max_ref;
  std::printf("%-18s max|diff| %.3g  max|torch| %.3g  relative %.3g  folded nodes %lld  import %.0f ms  run %.1f ms\n",
              name.c_str(), max_diff, max_ref, relative, static_cast<long long>(folded),
              std::chrono::duration<double, std::milli>(imported - start).count(),
              std::chrono::duration<double, std::milli>(ran - imported).count());
  EXPECT_GT(max_ref, 0) << "PyTorch's output is all zeros: the comparison would prove nothing";
  EXPECT_LE(relative, 1e-4) << "worst element " << worst << ": tessera " << got.GetAsDouble(worst) << ", torch "
                            << expected->GetAsDouble(worst);
}

INSTANTIATE_TEST_SUITE_P(Zoo, OnnxZooTest,
                         ::testing::Values("mlp", "lenet", "resnet18", "mobilenet_v2", "gpt_block", "gpt_block_opset17",
                                           "gpt_block_dynamic"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
}  // namespace tsr
