// Resharding between two splits over the same mesh axes: a tensor split along one
// dimension that a consumer needs split along another moves with one AllToAll (each
// device sends every other its slice) instead of an all-gather and a slice — for even
// and uneven splits, rank 2 and rank 3, checked against the unpartitioned values on
// virtual devices.
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/ops.h"
#include "gtest/gtest.h"
#include "partitioner/spmd_partitioner.h"
#include "runtime/mesh_session.h"
#include "tests/partitioner/training_fixtures.h"

namespace tsr {
namespace {

// y = Relu(x) with x split along `from` and y's result pinned split along `to`, over a
// mesh of `devices`; every device's fetched y must equal Relu of the whole x.
void ExpectAllToAll(const Shape& shape, int from, int to, int devices) {
  SCOPED_TRACE(::testing::Message() << shape.ToString() << " split " << from << " -> " << to << " over " << devices);
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, shape);
  b.MarkOutput("y", ops::Relu(b, x, "relu"));
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<DeviceMesh> mesh = DeviceMesh::Parse(absl::StrCat("model=", devices));
  ASSERT_TRUE(mesh.ok());
  ShardingAnnotations annotations;
  std::vector<std::vector<std::string>> in(shape.rank()), out(shape.rank());
  in[from] = {"model"};
  out[to] = {"model"};
  annotations.tensors["x"] = in;
  annotations.tensors["relu"] = out;
  absl::StatusOr<PartitionedProgram> p = PartitionGraph(*graph, *mesh, annotations, {});
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_GE(p->collectives.size(), 1u) << p->Explain();
  EXPECT_EQ(p->collectives[0].collective.rfind("AllToAll", 0), 0u) << p->Explain();
  Sharding moved = Sharding::Replicated(shape.rank());
  moved.dims[to] = {0};
  EXPECT_EQ(p->collectives[0].to, moved.ToString(p->mesh)) << p->Explain();
  for (const CollectiveReason& r : p->collectives) {
    if (r.collective.rfind("AllGather", 0) == 0) {
      EXPECT_EQ(r.consumer, "output 'y'") << p->Explain();
    }
  }

  std::mt19937 rng(17);
  std::normal_distribution<float> normal;
  std::vector<float> values(shape.num_elements());
  for (float& v : values) v = normal(rng);
  const Tensor whole = Tensor::FromVector<float>(shape, values);
  std::vector<std::vector<std::pair<std::string, Tensor>>> feeds(devices);
  for (int d = 0; d < devices; ++d) {
    absl::StatusOr<Tensor> share = p->ShareOf("x", whole, d);
    ASSERT_TRUE(share.ok()) << share.status();
    feeds[d].push_back({"x", *share});
  }
  absl::StatusOr<std::unique_ptr<MeshSession>> session =
      MeshSession::Create(std::move(p->devices), {{"model", devices}}, {.threads_per_device = 1});
  ASSERT_TRUE(session.ok()) << session.status();
  absl::StatusOr<std::vector<std::vector<Tensor>>> got = (*session)->Run(feeds, {"y"}, {});
  ASSERT_TRUE(got.ok()) << got.status();
  std::vector<float> relu = values;
  for (float& v : relu) v = v > 0 ? v : 0;
  const Tensor expected = Tensor::FromVector<float>(shape, relu);
  for (int d = 0; d < devices; ++d) EXPECT_TRUE((*got)[d][0].BitwiseEquals(expected)) << "device " << d;
}

TEST(ReshardingTest, SplitMovesBetweenDimensionsWithOneAllToAll) {
  ExpectAllToAll(Shape{4, 6}, 0, 1, 2);     // even
  ExpectAllToAll(Shape{7, 10}, 0, 1, 3);    // uneven both ways
  ExpectAllToAll(Shape{5, 3, 8}, 2, 0, 3);  // rank 3, the other way round
  ExpectAllToAll(Shape{2, 9, 4}, 1, 2, 4);  // four devices, uneven rows
}

}  // namespace
}  // namespace tsr
