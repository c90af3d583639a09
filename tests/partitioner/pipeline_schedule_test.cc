// Pipeline schedules: the orders GPipe, 1F1B and interleaved 1F1B give each device, their
// activation memory (micro-batches in flight), and — by simulating the devices with
// unit-time tasks that wait for what they read — that each schedule finishes and idles
// each device for the bubble fraction (D - 1) / (V M + D - 1) it reports.
#include "partitioner/pipeline_schedule.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"

namespace tsr {
namespace {

using Kind = PipelineScheduleKind;

TEST(PipelineScheduleTest, OrdersOfTwoStagesAndFourMicrobatches) {
  const auto gpipe = PipelineTasks(Kind::kGPipe, 2, 4);
  EXPECT_EQ(TasksToString(gpipe[0]), "F0 F1 F2 F3 B0 B1 B2 B3");
  EXPECT_EQ(TasksToString(gpipe[1]), "F0 F1 F2 F3 B0 B1 B2 B3");
  const auto one_f_one_b = PipelineTasks(Kind::kOneForwardOneBackward, 2, 4);
  EXPECT_EQ(TasksToString(one_f_one_b[0]), "F0 F1 B0 F2 B1 F3 B2 B3");
  EXPECT_EQ(TasksToString(one_f_one_b[1]), "F0 B0 F1 B1 F2 B2 F3 B3");
  EXPECT_EQ(PeakMicrobatchesInFlight(gpipe[0]), 4);
  EXPECT_EQ(PeakMicrobatchesInFlight(one_f_one_b[0]), 2);
  EXPECT_EQ(PeakMicrobatchesInFlight(one_f_one_b[1]), 1);
  EXPECT_DOUBLE_EQ(PipelineBubbleFraction(2, 4), 0.2);
  EXPECT_DOUBLE_EQ(PipelineBubbleFraction(1, 4), 0.0);
}

// Runs the devices' task lists with unit-time tasks: a forward waits for the previous
// stage's forward of its micro-batch, a backward for the next stage's backward (and its
// own forward). Returns the time the last task ends, or -1 on a deadlock.
int Simulate(const std::vector<std::vector<PipelineTask>>& tasks, int stages, int microbatches) {
  const int D = static_cast<int>(tasks.size());
  std::vector<std::vector<int>> f_end(stages, std::vector<int>(microbatches, -1)), b_end = f_end;
  std::vector<size_t> next(D, 0);
  std::vector<int> free_at(D, 0);
  bool progress = true;
  while (progress) {
    progress = false;
    for (int d = 0; d < D; ++d) {
      if (next[d] == tasks[d].size()) continue;
      const PipelineTask& t = tasks[d][next[d]];
      const int s = t.stage;
      int ready = free_at[d];
      if (t.kind == PipelineTask::Kind::kForward) {
        if (s > 0) {
          if (f_end[s - 1][t.microbatch] < 0) continue;
          ready = std::max(ready, f_end[s - 1][t.microbatch]);
        }
        f_end[s][t.microbatch] = free_at[d] = ready + 1;
      } else {
        if (f_end[s][t.microbatch] < 0) continue;
        if (s + 1 < stages) {
          if (b_end[s + 1][t.microbatch] < 0) continue;
          ready = std::max(ready, b_end[s + 1][t.microbatch]);
        }
        b_end[s][t.microbatch] = free_at[d] = ready + 1;
      }
      ++next[d];
      progress = true;
    }
  }
  for (int d = 0; d < D; ++d) {
    if (next[d] != tasks[d].size()) return -1;
  }
  return *std::max_element(free_at.begin(), free_at.end());
}

// Every device runs each of its stages' forward and backward of every micro-batch once,
// the forward first, and only stages that are its own (stage mod devices).
void ExpectEveryTaskOnce(const std::vector<std::vector<PipelineTask>>& tasks, int chunks, int M) {
  const int D = static_cast<int>(tasks.size());
  for (int d = 0; d < D; ++d) {
    const std::vector<PipelineTask>& device = tasks[d];
    ASSERT_EQ(device.size(), static_cast<size_t>(2 * chunks * M));
    for (int c = 0; c < chunks; ++c) {
      for (int m = 0; m < M; ++m) {
        const int stage = c * D + d;
        auto f = std::find(device.begin(), device.end(), PipelineTask{PipelineTask::Kind::kForward, m, stage});
        auto b = std::find(device.begin(), device.end(), PipelineTask{PipelineTask::Kind::kBackward, m, stage});
        ASSERT_TRUE(f != device.end() && b != device.end() && f < b) << "stage " << stage << " micro-batch " << m;
      }
    }
  }
}

TEST(PipelineScheduleTest, EverySchedulefinishesWithItsBubble) {
  for (Kind kind : {Kind::kGPipe, Kind::kOneForwardOneBackward}) {
    for (int S : {1, 2, 3, 4, 8}) {
      for (int M : {1, 2, 3, 4, 8, 16}) {
        SCOPED_TRACE(::testing::Message() << PipelineScheduleName(kind) << " S=" << S << " M=" << M);
        const auto tasks = PipelineTasks(kind, S, M);
        ASSERT_EQ(tasks.size(), static_cast<size_t>(S));
        ExpectEveryTaskOnce(tasks, 1, M);
        const int makespan = Simulate(tasks, S, M);
        ASSERT_GT(makespan, 0) << "deadlock";
        const double idle = 1.0 - static_cast<double>(2 * M) / makespan;
        EXPECT_NEAR(idle, PipelineBubbleFraction(S, M), 1e-12);
        // 1F1B keeps at most S - s micro-batches' activations on stage s; GPipe all M.
        for (int s = 0; s < S; ++s) {
          EXPECT_EQ(PeakMicrobatchesInFlight(tasks[s]), kind == Kind::kGPipe ? M : std::min(M, S - s));
        }
      }
    }
  }
}

TEST(PipelineScheduleTest, InterleavedOrderOfTwoDevicesTwoChunksFourMicrobatches) {
  // Stages 0 and 2 on device 0, 1 and 3 on device 1; micro-batches in groups of two.
  const auto tasks = PipelineTasks(Kind::kInterleaved, 2, 4, 2);
  EXPECT_EQ(TasksToString(tasks[0], true),
            "F0@0 F1@0 F0@2 F1@2 F2@0 B0@2 F3@0 B1@2 F2@2 B0@0 F3@2 B1@0 B2@2 B3@2 B2@0 B3@0");
  EXPECT_EQ(TasksToString(tasks[1], true),
            "F0@1 F1@1 F0@3 B0@3 F1@3 B1@3 F2@1 B0@1 F3@1 B1@1 F2@3 B2@3 F3@3 B3@3 B2@1 B3@1");
  EXPECT_DOUBLE_EQ(PipelineBubbleFraction(2, 4, 2), 1.0 / 9.0);
}

TEST(PipelineScheduleTest, InterleavedFinishesWithItsSmallerBubble) {
  for (int D : {1, 2, 3, 4, 8}) {
    for (int V : {1, 2, 3, 4}) {
      for (int M : {1, 2, 3, 4, 5, 8, 16}) {
        SCOPED_TRACE(::testing::Message() << "interleaved D=" << D << " V=" << V << " M=" << M);
        const auto tasks = PipelineTasks(Kind::kInterleaved, D, M, V);
        ASSERT_EQ(tasks.size(), static_cast<size_t>(D));
        ExpectEveryTaskOnce(tasks, V, M);
        const int makespan = Simulate(tasks, D * V, M);
        ASSERT_GT(makespan, 0) << "deadlock";
        const double idle = 1.0 - static_cast<double>(2 * V * M) / makespan;
        if (M % D == 0) {
          // Whole groups of D micro-batches: the bubble is the V-fold smaller one.
          EXPECT_NEAR(idle, PipelineBubbleFraction(D, M, V), 1e-12);
          for (int d = 0; d < D; ++d) {
            const int warmup = V == 1 ? D - d - 1 : 2 * (D - d - 1) + (V - 1) * D;
            EXPECT_EQ(PeakMicrobatchesInFlight(tasks[d]), std::min(V * M, warmup + 1)) << "device " << d;
          }
        } else {
          // A partial group: never worse than 1F1B over the same devices.
          EXPECT_LE(idle, PipelineBubbleFraction(D, M) + 1e-12);
        }
      }
    }
  }
}

TEST(PipelineScheduleTest, ChunksNeedTheInterleavedSchedule) {
  EXPECT_TRUE(CheckPipelineChunks(Kind::kInterleaved, 4).ok());
  EXPECT_TRUE(CheckPipelineChunks(Kind::kOneForwardOneBackward, 1).ok());
  absl::Status status = CheckPipelineChunks(Kind::kGPipe, 2);
  EXPECT_EQ(status.message(), "2 model chunks per device need the interleaved schedule, not gpipe");
  EXPECT_FALSE(CheckPipelineChunks(Kind::kInterleaved, 0).ok());
}

TEST(PipelineScheduleTest, ParsesNames) {
  EXPECT_EQ(*ParsePipelineSchedule("gpipe"), Kind::kGPipe);
  EXPECT_EQ(*ParsePipelineSchedule("1f1b"), Kind::kOneForwardOneBackward);
  EXPECT_EQ(*ParsePipelineSchedule("interleaved"), Kind::kInterleaved);
  absl::StatusOr<Kind> bad = ParsePipelineSchedule("zigzag");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "pipeline schedule 'zigzag': gpipe, 1f1b or interleaved is required");
}

}  // namespace
}  // namespace tsr
