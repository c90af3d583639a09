// Device meshes, shardings and sharding propagation on small graphs: which tensors come
// out split, partial or replicated, and which collectives the partitioner inserts.
#include "partitioner/sharding_propagation.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/ops.h"
#include "gtest/gtest.h"
#include "partitioner/device_mesh.h"
#include "partitioner/sharding.h"
#include "partitioner/spmd_partitioner.h"

namespace tsr {
namespace {

TEST(DeviceMeshTest, ParsesAndNumbersDevicesRowMajor) {
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Parse("data=2, model=3");
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  EXPECT_EQ(mesh->num_devices(), 6);
  EXPECT_EQ(mesh->ToString(), "{data=2, model=3}");
  EXPECT_EQ(mesh->Coordinates(4), (std::vector<int>{1, 1}));
  EXPECT_EQ(mesh->AxisIndex("model"), 1);
  EXPECT_EQ(mesh->AxisIndex("pipe"), -1);
}

TEST(DeviceMeshTest, RejectsMalformedMeshes) {
  for (const char* text : {"", "data", "data=0", "data=2,data=2", "=2", "data=x"}) {
    absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Parse(text);
    EXPECT_FALSE(mesh.ok()) << text;
    if (!mesh.ok()) {
      EXPECT_NE(mesh.status().message().find("mesh"), std::string::npos) << mesh.status();
    }
  }
}

TEST(ShardingTest, LocalRangesFollowTheCollectivesSplitRule) {
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Parse("data=3");
  ASSERT_TRUE(mesh.ok());
  // 50 rows over 3: [0,16) [16,33) [33,50).
  EXPECT_EQ(LocalRange(50, {0}, *mesh, 0), (std::pair<int64_t, int64_t>{0, 16}));
  EXPECT_EQ(LocalRange(50, {0}, *mesh, 1), (std::pair<int64_t, int64_t>{16, 33}));
  EXPECT_EQ(LocalRange(50, {0}, *mesh, 2), (std::pair<int64_t, int64_t>{33, 50}));
  Sharding s = Sharding::Replicated(2);
  s.dims[0] = {0};
  EXPECT_EQ(LocalShape(Shape{50, 7}, s, *mesh, 2), (Shape{17, 7}));
  EXPECT_EQ(s.ToString(*mesh), "[{data}, -]");
  s.partial = {0};
  EXPECT_EQ(s.ToString(*mesh), "[{data}, -] partial{data}");
}

// y = x @ w with x split on the batch: y is split; dw = x^T @ dy contracts the batch and
// comes out a partial sum; the fetched sum over everything is all-reduced.
TEST(ShardingPropagationTest, BatchSplitMatMulGivesPartialContractions) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, {kBatchDim, 4});
  Output w = ops::Const(b, DType::kF32, Shape{4, 3}, std::vector<double>(12, 0.5), "w");
  Output y = ops::MatMul(b, x, w, "y");
  Output xt = ops::Transpose(b, x, {1, 0}, "xt");
  Output dw = ops::MatMul(b, xt, y, "dw");
  b.MarkOutput("y", y);
  b.MarkOutput("dw", dw);
  b.MarkOutput("total", ops::ReduceSum(b, y, std::vector<int64_t>{0, 1}, /*keepdims=*/false, "total"));
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Parse("data=2");
  ASSERT_TRUE(mesh.ok());
  ShardingAnnotations annotations;
  annotations.tensors["x"] = {{"data"}, {}};
  absl::StatusOr<PartitionedProgram> program = PartitionGraph(*graph, *mesh, annotations, {.batch = 6});
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<std::string> moves;
  for (const CollectiveReason& r : program->collectives) {
    moves.push_back(absl::StrCat(r.collective.substr(0, r.collective.find(' ')), " ", r.tensor, " ", r.from, " -> ",
                                 r.to, " for ", r.consumer));
  }
  EXPECT_EQ(moves, (std::vector<std::string>{
                       "AllGather y [{data}, -] -> replicated for output 'y'",
                       "AllReduce dw partial{data} -> replicated for output 'dw'",
                       "AllReduce total partial{data} -> replicated for output 'total'",
                   }))
      << program->Explain();
  // Each device's program reads its 3 rows.
  EXPECT_EQ(program->devices[1].FindNode("x")->output_type(0).shape, (Shape{3, 4}));
}

TEST(ShardingPropagationTest, UnknownAxesAndTensorsAreClearErrors) {
  GraphBuilder b;
  b.MarkOutput("y", ops::Relu(b, b.Input("x", DType::kF32, {kBatchDim, 4})));
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok());
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Parse("data=2");
  ASSERT_TRUE(mesh.ok());
  ShardingAnnotations bad_axis;
  bad_axis.tensors["x"] = {{"model"}, {}};
  absl::StatusOr<PartitionedProgram> p = PartitionGraph(*graph, *mesh, bad_axis, {.batch = 4});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("no axis 'model'"), std::string::npos) << p.status();
  ShardingAnnotations bad_tensor;
  bad_tensor.tensors["nope"] = {{"data"}};
  p = PartitionGraph(*graph, *mesh, bad_tensor, {.batch = 4});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("'nope'"), std::string::npos) << p.status();
  ShardingAnnotations bad_rank;
  bad_rank.tensors["x"] = {{"data"}};
  p = PartitionGraph(*graph, *mesh, bad_rank, {.batch = 4});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("[4,4]"), std::string::npos) << p.status();
}

}  // namespace
}  // namespace tsr
