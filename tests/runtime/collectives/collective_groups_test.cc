// MeshGroupsOfDevice (which groups of a device mesh a device belongs to, its place in
// each) and MakeInProcessMeshGroups (an in-process communicator per group), checked
// against groups worked out by hand and by all-reducing each device's number.
#include "runtime/collectives/collective_groups.h"

#include <algorithm>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<MeshAxisSize> Mesh2x3() { return {{"data", 2}, {"model", 3}}; }

// Device 5 of data=2 x model=3 is at (1, 2).
TEST(MeshGroupsOfDeviceTest, TwoAxes) {
  absl::StatusOr<std::vector<MeshGroup>> groups = MeshGroupsOfDevice(Mesh2x3(), 5);
  ASSERT_TRUE(groups.ok()) << groups.status();
  ASSERT_EQ(groups->size(), 3u);
  // {data}: the devices of column 2 (2, 5); device 5 is the second.
  EXPECT_THAT((*groups)[0].axes, ElementsAre("data"));
  EXPECT_EQ((*groups)[0].index, 2);
  EXPECT_EQ((*groups)[0].rank, 1);
  EXPECT_EQ((*groups)[0].size, 2);
  // {model}: row 1 (3, 4, 5); device 5 is the third.
  EXPECT_THAT((*groups)[1].axes, ElementsAre("model"));
  EXPECT_EQ((*groups)[1].index, 1);
  EXPECT_EQ((*groups)[1].rank, 2);
  EXPECT_EQ((*groups)[1].size, 3);
  // {data, model}: the whole mesh, ranked by device.
  EXPECT_THAT((*groups)[2].axes, ElementsAre("data", "model"));
  EXPECT_EQ((*groups)[2].index, 0);
  EXPECT_EQ((*groups)[2].rank, 5);
  EXPECT_EQ((*groups)[2].size, 6);
}

// Three axes: the group over {a, c} of device (1, 0, 1) in a=2 x b=2 x c=3 is indexed by
// b and ranked by (a, c) row-major.
TEST(MeshGroupsOfDeviceTest, ThreeAxesSubset) {
  const std::vector<MeshAxisSize> mesh = {{"a", 2}, {"b", 2}, {"c", 3}};
  const int device = 1 * 6 + 0 * 3 + 1;
  absl::StatusOr<std::vector<MeshGroup>> groups = MeshGroupsOfDevice(mesh, device);
  ASSERT_TRUE(groups.ok()) << groups.status();
  ASSERT_EQ(groups->size(), 7u);
  bool found = false;
  for (const MeshGroup& g : *groups) {
    if (g.axes != std::vector<std::string>{"a", "c"}) continue;
    found = true;
    EXPECT_EQ(g.index, 0);
    EXPECT_EQ(g.rank, 1 * 3 + 1);
    EXPECT_EQ(g.size, 6);
  }
  EXPECT_TRUE(found);
}

// Every device of a group agrees on its index and has a rank of its own.
TEST(MeshGroupsOfDeviceTest, GroupsPartitionTheMesh) {
  const std::vector<MeshAxisSize> mesh = {{"x", 3}, {"y", 1}, {"z", 4}};
  std::map<std::pair<std::vector<std::string>, int>, std::vector<int>> ranks;
  for (int d = 0; d < 12; ++d) {
    absl::StatusOr<std::vector<MeshGroup>> groups = MeshGroupsOfDevice(mesh, d);
    ASSERT_TRUE(groups.ok()) << groups.status();
    for (const MeshGroup& g : *groups) ranks[{g.axes, g.index}].push_back(g.rank);
  }
  for (const auto& [key, members] : ranks) {
    std::vector<int> sorted = members;
    std::sort(sorted.begin(), sorted.end());
    for (size_t r = 0; r < sorted.size(); ++r) EXPECT_EQ(sorted[r], static_cast<int>(r)) << key.first[0];
  }
}

TEST(MeshGroupsOfDeviceTest, Errors) {
  EXPECT_THAT(std::string(MeshGroupsOfDevice({}, 0).status().message()), HasSubstr("at least one axis"));
  EXPECT_THAT(std::string(MeshGroupsOfDevice(Mesh2x3(), 6).status().message()),
              HasSubstr("device 6 is not in a mesh of 6 devices"));
  EXPECT_THAT(std::string(MeshGroupsOfDevice({{"data", 2}, {"data", 2}}, 0).status().message()),
              HasSubstr("'data' appears twice"));
  EXPECT_THAT(std::string(MeshGroupsOfDevice({{"data", 0}}, 0).status().message()), HasSubstr("has size 0"));
  EXPECT_THAT(std::string(MakeInProcessMeshGroups({{"data", 4097}}).status().message()), HasSubstr("4096"));
}

// Each device all-reduces 2^device over each of its groups: the sum names the members.
TEST(MakeInProcessMeshGroupsTest, EachGroupReducesItsMembers) {
  absl::StatusOr<std::vector<std::shared_ptr<CollectiveGroupTable>>> tables = MakeInProcessMeshGroups(Mesh2x3());
  ASSERT_TRUE(tables.ok()) << tables.status();
  ASSERT_EQ(tables->size(), 6u);
  const std::vector<std::vector<std::string>> subsets = {{"data"}, {"model"}, {"data", "model"}};
  std::vector<std::vector<int>> sums(6, std::vector<int>(subsets.size()));
  std::vector<std::thread> threads;
  for (int d = 0; d < 6; ++d) {
    threads.emplace_back([&, d] {
      for (size_t s = 0; s < subsets.size(); ++s) {
        absl::StatusOr<Collectives*> c = (*tables)[d]->ForAxes(subsets[s]);
        if (!c.ok()) continue;
        Tensor x = Tensor::Scalar<int32_t>(1 << d);
        if ((*c)->AllReduce(x, ReduceOp::kSum, "bits").Wait().ok()) sums[d][s] = x.data<int32_t>()[0];
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int d = 0; d < 6; ++d) {
    const int row = d / 3, column = d % 3;
    EXPECT_EQ(sums[d][0], (1 << column) | (1 << (column + 3))) << d;
    EXPECT_EQ(sums[d][1], 7 << (3 * row)) << d;
    EXPECT_EQ(sums[d][2], 63) << d;
  }
  EXPECT_THAT(std::string((*tables)[0]->ForAxes({"pipe"}).status().message()),
              HasSubstr("no communicator over the mesh axes {pipe}"));
}

}  // namespace
}  // namespace tsr
