// Both example models, with and without their training head, survive
// build -> GraphDef (binary and text) -> load as identical graphs, in memory and
// through files.
#include <filesystem>

#include "examples/models.h"
#include "graph/proto/graph_def_io.h"
#include "gtest/gtest.h"
#include "tests/graph/graph_test_util.h"

namespace tsr::examples {
namespace {

using ::tsr::testing::ExpectRoundTrip;
using ::tsr::testing::ExpectSameGraph;

struct Case {
  const char* name;
  absl::StatusOr<Graph> (*build)(bool training);
};

absl::StatusOr<Graph> Mlp(bool training) {
  MlpOptions o;
  o.training_head = training;
  return BuildMlp(o);
}
absl::StatusOr<Graph> LeNet(bool training) {
  LeNetOptions o;
  o.training_head = training;
  return BuildLeNet(o);
}

class ExamplesRoundTripTest : public ::testing::TestWithParam<std::tuple<Case, bool>> {};

TEST_P(ExamplesRoundTripTest, InMemoryBothFormats) {
  const auto& [c, training] = GetParam();
  absl::StatusOr<Graph> g = c.build(training);
  ASSERT_TRUE(g.ok()) << g.status();
  ExpectRoundTrip(*g, GraphFormat::kBinary);
  ExpectRoundTrip(*g, GraphFormat::kText);
}

TEST_P(ExamplesRoundTripTest, ThroughFilesBothFormats) {
  const auto& [c, training] = GetParam();
  absl::StatusOr<Graph> g = c.build(training);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::filesystem::path dir = ::testing::TempDir();
  for (const char* ext : {".pb", ".pbtxt"}) {
    const std::string path = (dir / (std::string(c.name) + (training ? "_train" : "") + ext)).string();
    ASSERT_TRUE(SaveGraph(*g, path).ok()) << path;
    absl::StatusOr<Graph> back = LoadGraph(path);
    ASSERT_TRUE(back.ok()) << back.status();
    ExpectSameGraph(*g, *back);
    std::filesystem::remove(path);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ExamplesRoundTripTest,
                         ::testing::Combine(::testing::Values(Case{"mlp", Mlp}, Case{"lenet", LeNet}),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).name) +
                                  (std::get<1>(info.param) ? "_training" : "_inference");
                         });

}  // namespace
}  // namespace tsr::examples
