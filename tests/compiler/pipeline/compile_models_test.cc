// The compile driver on the ONNX zoo models (scripts/onnx_zoo_models.py: ResNet-18, MobileNetV2 (the
// channel-blocked layout end to end) and the GPT-2 block exported into a temporary folder, or every model found in
// $TESSERA_ZOO_DIR: MLP, LeNet, ResNet-18, MobileNetV2, GPT-2 block): each compiles at the batch of its input, and the
// executable, run by runtime/compiled at 1 and 2 threads, computes the interpreter's outputs to 1e-4 relative to each
// output's largest magnitude. Prints the compile report (compile time, kernel counts, memory) and the median run time
// of both paths (not asserted).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/pipeline/compile_graph.h"
#include "graph/onnx/onnx_importer.h"
#include "gtest/gtest.h"
#include "runtime/compiled/compiled_program.h"
#include "runtime/npy.h"
#include "runtime/session.h"
#include "tests/models/onnx_zoo_export.h"

namespace tsr {
namespace {

template <typename F>
double MedianMs(F&& f, int runs) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void ExpectClose(const std::vector<Tensor>& want, const std::vector<Tensor>& got, double rel) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("output ", i));
    ASSERT_EQ(want[i].type(), got[i].type());
    double scale = 1e-30, worst = 0;
    for (int64_t k = 0; k < want[i].num_elements(); ++k) scale = std::max(scale, std::abs(want[i].GetAsDouble(k)));
    for (int64_t k = 0; k < want[i].num_elements(); ++k) {
      worst = std::max(worst, std::abs(want[i].GetAsDouble(k) - got[i].GetAsDouble(k)) / scale);
    }
    EXPECT_LE(worst, rel) << "largest difference relative to the largest magnitude " << scale;
  }
}

void CheckModel(const std::string& dir, const std::string& name) {
  SCOPED_TRACE(name);
  absl::StatusOr<ImportedModel> model = ImportOnnxModel(absl::StrCat(dir, "/", name, "/model.onnx"));
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<Tensor> input = ReadNpy(absl::StrCat(dir, "/", name, "/input.npy"));
  ASSERT_TRUE(input.ok()) << input.status();
  ASSERT_EQ(model->input_names.size(), 1u);
  const std::vector<std::pair<std::string, Tensor>> feeds = {{model->input_names[0], *input}};

  CompileOptions options;
  options.batch = input->shape().rank() > 0 ? input->shape().dim(0) : 1;
  CompileStats stats;
  absl::StatusOr<Executable> executable = CompileGraph(model->graph, options, &stats);
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::printf("%s: %s", name.c_str(), FormatCompileStats(stats).c_str());

  std::vector<std::string> fetches;
  for (const SignatureEntry& out : model->graph.outputs()) fetches.push_back(out.name);
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(model->graph.Clone(), {.num_threads = 1});
  ASSERT_TRUE(session.ok()) << session.status();
  absl::StatusOr<std::vector<Tensor>> expected = (*session)->Run(feeds, fetches);
  ASSERT_TRUE(expected.ok()) << expected.status();

  for (int threads : {1, 2}) {
    SCOPED_TRACE(absl::StrCat(threads, " threads"));
    absl::StatusOr<std::unique_ptr<CompiledProgram>> program = CompiledProgram::Load(*executable, {.threads = threads});
    ASSERT_TRUE(program.ok()) << program.status();
    absl::StatusOr<std::vector<Tensor>> actual = (*program)->Run(feeds);
    ASSERT_TRUE(actual.ok()) << actual.status();
    ExpectClose(*expected, *actual, 1e-4);
    if (threads == 1) {
      const double compiled = MedianMs([&] { (void)(*program)->Run(feeds); }, 5);
      const double interpreted = MedianMs([&] { (void)(*session)->Run(feeds, fetches); }, 5);
      std::printf("  1 thread: compiled %.3f ms, interpreter %.3f ms (median of 5)\n", compiled, interpreted);
    }
  }
}

TEST(CompileModels, ZooModelsAgreeWithTheInterpreter) {
  const absl::Status s = testing::ForEachZooModel({"resnet18", "mobilenet_v2", "gpt_block"}, ::testing::TempDir(),
                                                  "tsr_compile_zoo", CheckModel);
  if (absl::IsUnavailable(s)) GTEST_SKIP() << s.message();
  EXPECT_TRUE(s.ok()) << s;
}

}  // namespace
}  // namespace tsr
