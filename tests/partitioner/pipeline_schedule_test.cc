// Pipeline schedules: the orders GPipe and 1F1B give each stage, their activation
// memory (micro-batches in flight), and — by simulating the stages with unit-time tasks
// that wait for what they read — that each schedule finishes and idles each stage for
// the bubble fraction (S - 1) / (M + S - 1) it reports.
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

// Runs the stages' task lists with unit-time tasks: a forward waits for the previous
// stage's forward of its micro-batch, a backward for the next stage's backward (and its
// own forward). Returns the time the last task ends, or -1 on a deadlock.
int Simulate(const std::vector<std::vector<PipelineTask>>& tasks, int microbatches) {
  const int S = static_cast<int>(tasks.size());
  std::vector<std::vector<int>> f_end(S, std::vector<int>(microbatches, -1)), b_end = f_end;
  std::vector<size_t> next(S, 0);
  std::vector<int> free_at(S, 0);
  bool progress = true;
  while (progress) {
    progress = false;
    for (int s = 0; s < S; ++s) {
      if (next[s] == tasks[s].size()) continue;
      const PipelineTask& t = tasks[s][next[s]];
      int ready = free_at[s];
      if (t.kind == PipelineTask::Kind::kForward) {
        if (s > 0) {
          if (f_end[s - 1][t.microbatch] < 0) continue;
          ready = std::max(ready, f_end[s - 1][t.microbatch]);
        }
        f_end[s][t.microbatch] = free_at[s] = ready + 1;
      } else {
        if (f_end[s][t.microbatch] < 0) continue;
        if (s + 1 < S) {
          if (b_end[s + 1][t.microbatch] < 0) continue;
          ready = std::max(ready, b_end[s + 1][t.microbatch]);
        }
        b_end[s][t.microbatch] = free_at[s] = ready + 1;
      }
      ++next[s];
      progress = true;
    }
  }
  for (int s = 0; s < S; ++s) {
    if (next[s] != tasks[s].size()) return -1;
  }
  return *std::max_element(free_at.begin(), free_at.end());
}

TEST(PipelineScheduleTest, EverySchedulefinishesWithItsBubble) {
  for (Kind kind : {Kind::kGPipe, Kind::kOneForwardOneBackward}) {
    for (int S : {1, 2, 3, 4, 8}) {
      for (int M : {1, 2, 3, 4, 8, 16}) {
        SCOPED_TRACE(::testing::Message() << PipelineScheduleName(kind) << " S=" << S << " M=" << M);
        const auto tasks = PipelineTasks(kind, S, M);
        ASSERT_EQ(tasks.size(), static_cast<size_t>(S));
        for (const auto& stage : tasks) {
          ASSERT_EQ(stage.size(), static_cast<size_t>(2 * M));
          // Each micro-batch's forward comes before its backward.
          for (int m = 0; m < M; ++m) {
            auto f = std::find(stage.begin(), stage.end(), PipelineTask{PipelineTask::Kind::kForward, m});
            auto b = std::find(stage.begin(), stage.end(), PipelineTask{PipelineTask::Kind::kBackward, m});
            ASSERT_TRUE(f != stage.end() && b != stage.end() && f < b);
          }
        }
        const int makespan = Simulate(tasks, M);
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

TEST(PipelineScheduleTest, ParsesNames) {
  EXPECT_EQ(*ParsePipelineSchedule("gpipe"), Kind::kGPipe);
  EXPECT_EQ(*ParsePipelineSchedule("1f1b"), Kind::kOneForwardOneBackward);
  absl::StatusOr<Kind> bad = ParsePipelineSchedule("interleaved");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "pipeline schedule 'interleaved': gpipe or 1f1b is required");
}

}  // namespace
}  // namespace tsr
