// Graph -> tsr text -> Graph round trip of every ONNX backend node test (ONNX 1.12, at
// $TESSERA_ONNX_NODE_DIR, else where the CMake build generates them:
// $TESSERA_BINARY_DIR/onnx-node-tests/node) that graph/onnx imports: one graph per
// registered op the suite exercises. Cases the importer refuses are counted, not failed.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "compiler/conversion/graph_tsr_text.h"
#include "graph/onnx/onnx_importer.h"
#include "gtest/gtest.h"
#include "tests/compiler/conversion/graph_equality.h"

namespace tsr {
namespace {

TEST(OnnxNodeRoundTrip, EveryImportableCase) {
  const char* env = std::getenv("TESSERA_ONNX_NODE_DIR");
  const char* binary_dir = std::getenv("TESSERA_BINARY_DIR");
  if (env == nullptr && binary_dir == nullptr) {
    GTEST_SKIP() << "neither TESSERA_ONNX_NODE_DIR nor TESSERA_BINARY_DIR (set by CTest) is set";
  }
  const std::filesystem::path root =
      env != nullptr ? std::filesystem::path(env) : std::filesystem::path(binary_dir) / "onnx-node-tests" / "node";
  // Under CTest the data must be there (the build generates it): a missing folder fails.
  ASSERT_TRUE(std::filesystem::is_directory(root)) << root << " is absent (scripts/onnx_node_tests.sh writes it)";
  std::vector<std::filesystem::path> cases;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (std::filesystem::exists(entry.path() / "model.onnx")) cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());
  int imported = 0, round_tripped = 0;
  std::set<std::string> ops;
  for (const auto& dir : cases) {
    absl::StatusOr<Graph> graph = LoadOnnxGraph((dir / "model.onnx").string());
    if (!graph.ok()) continue;
    ++imported;
    SCOPED_TRACE(dir.filename().string());
    absl::StatusOr<std::string> text = GraphToTsrText(*graph);
    ASSERT_TRUE(text.ok()) << text.status();
    absl::StatusOr<Graph> back = TsrTextToGraph(*text);
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << *text;
    ASSERT_EQ(GraphDifference(*graph, *back), "") << *text;
    ++round_tripped;
    for (const Node* n : graph->nodes()) ops.insert(n->op());
  }
  std::printf("%zu ONNX node cases, %d imported, %d round-tripped, %zu distinct graph ops\n", cases.size(), imported,
              round_tripped, ops.size());
  EXPECT_GT(round_tripped, 500);
}

}  // namespace
}  // namespace tsr
