// Tests of PlanBuffers, VerifyBufferPlan and LiveBytesLowerBound: hand-made programs,
// 500 random ones checked by the verifier, and a 20,000-value one for speed.
#include "compiler/planning/buffer_plan.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

BufferValue Value(int64_t size, int64_t def, int64_t last, int64_t alignment = 1) {
  BufferValue v;
  v.size = size;
  v.alignment = alignment;
  v.def_step = def;
  v.last_use_step = last;
  return v;
}

BufferPlan PlanAndVerify(const BufferProblem& problem) {
  absl::StatusOr<BufferPlan> plan = PlanBuffers(problem);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  EXPECT_TRUE(VerifyBufferPlan(problem, *plan).ok()) << VerifyBufferPlan(problem, *plan);
  EXPECT_GE(plan->arena_bytes, LiveBytesLowerBound(problem));
  return *plan;
}

TEST(BufferPlanTest, ChainReusesMemoryOfDeadValues) {
  // a -> b -> c -> d: at most two values live at once.
  BufferProblem p;
  p.values = {Value(100, 0, 1), Value(100, 1, 2), Value(100, 2, 3), Value(100, 3, 3)};
  const BufferPlan plan = PlanAndVerify(p);
  EXPECT_EQ(plan.arena_bytes, 200);
  EXPECT_EQ(LiveBytesLowerBound(p), 200);
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);
}

TEST(BufferPlanTest, DiamondKeepsBothBranchesApart) {
  // a -> (b, c) -> d: b and c live together, a dies when both are made.
  BufferProblem p;
  p.values = {Value(64, 0, 2), Value(32, 1, 3), Value(32, 2, 3), Value(64, 3, 3)};
  const BufferPlan plan = PlanAndVerify(p);
  EXPECT_EQ(LiveBytesLowerBound(p), 128);
  EXPECT_EQ(plan.arena_bytes, 128);
}

TEST(BufferPlanTest, InPlaceChainUsesOneBuffer) {
  BufferProblem p;
  p.values = {Value(256, 0, 1), Value(256, 1, 2), Value(256, 2, 3), Value(256, 3, 3)};
  for (int i = 1; i < 4; ++i) p.values[i].inplace_candidates = {i - 1};
  const BufferPlan plan = PlanAndVerify(p);
  EXPECT_EQ(plan.arena_bytes, 256);
  EXPECT_EQ(LiveBytesLowerBound(p), 256);
  EXPECT_EQ(plan.reused_from, (std::vector<int>{-1, 0, 1, 2}));
}

TEST(BufferPlanTest, InPlaceRefusedWhenInputLivesOn) {
  // b may reuse a, but a is read again at step 2: b needs its own buffer.
  BufferProblem p;
  p.values = {Value(256, 0, 2), Value(256, 1, 2), Value(256, 2, 2)};
  p.values[1].inplace_candidates = {0};
  const BufferPlan plan = PlanAndVerify(p);
  EXPECT_EQ(plan.reused_from[1], -1);
  EXPECT_EQ(plan.arena_bytes, 768);
}

TEST(BufferPlanTest, ZeroSizeAndExternalValuesTakeNoSpace) {
  BufferProblem p;
  p.values = {Value(0, 0, 3), Value(1000, 0, 3), Value(40, 1, 2), Value(0, 2, 2)};
  p.values[1].external = true;
  const BufferPlan plan = PlanAndVerify(p);
  EXPECT_EQ(plan.offsets[1], -1);
  EXPECT_EQ(plan.arena_bytes, 40);
  EXPECT_EQ(LiveBytesLowerBound(p), 40);
}

TEST(BufferPlanTest, AlignmentIsRespected) {
  BufferProblem p;
  p.values = {Value(3, 0, 2, 1), Value(100, 0, 2, 64), Value(5, 1, 2, 64), Value(7, 1, 2, 8)};
  const BufferPlan plan = PlanAndVerify(p);
  EXPECT_EQ(plan.offsets[1] % 64, 0);
  EXPECT_EQ(plan.offsets[2] % 64, 0);
  EXPECT_EQ(plan.offsets[3] % 8, 0);
}

TEST(BufferPlanTest, BadProblemsAreRefused) {
  BufferProblem p;
  p.values = {Value(8, 0, 1, 48)};
  EXPECT_THAT(PlanBuffers(p).status().message(), HasSubstr("alignment 48"));
  p.values = {Value(-1, 0, 1)};
  EXPECT_THAT(PlanBuffers(p).status().message(), HasSubstr("size -1"));
  p.values = {Value(8, 3, 1)};
  EXPECT_THAT(PlanBuffers(p).status().message(), HasSubstr("lifetime [3, 1]"));
  p.values = {Value(8, 0, 1)};
  p.values[0].inplace_candidates = {0};
  EXPECT_THAT(PlanBuffers(p).status().message(), HasSubstr("in-place candidate 0"));
}

TEST(BufferPlanTest, VerifierFindsBrokenPlans) {
  BufferProblem p;
  p.values = {Value(100, 0, 1), Value(100, 1, 2), Value(100, 2, 3), Value(100, 3, 3)};
  p.values[0].name = "a";
  p.values[1].name = "b";
  const BufferPlan good = PlanAndVerify(p);

  BufferPlan overlap = good;
  overlap.offsets[1] = overlap.offsets[0] + 50;
  overlap.arena_bytes = 300;
  absl::Status s = VerifyBufferPlan(p, overlap);
  EXPECT_THAT(s.message(), HasSubstr("overlaps"));
  EXPECT_THAT(s.message(), HasSubstr("'a'"));
  EXPECT_THAT(s.message(), HasSubstr("'b'"));

  BufferPlan outside = good;
  outside.arena_bytes = 150;
  EXPECT_THAT(VerifyBufferPlan(p, outside).message(), HasSubstr("inside the arena"));

  BufferPlan unaligned = good;
  p.values[2].alignment = 64;
  unaligned.offsets[2] = 1;
  EXPECT_THAT(VerifyBufferPlan(p, unaligned).message(), HasSubstr("aligned"));
  p.values[2].alignment = 1;

  BufferPlan bad_reuse = good;  // not a candidate
  bad_reuse.reused_from[1] = 0;
  bad_reuse.offsets[1] = bad_reuse.offsets[0];
  EXPECT_THAT(VerifyBufferPlan(p, bad_reuse).message(), HasSubstr("does not allow"));

  BufferPlan short_plan = good;
  short_plan.offsets.pop_back();
  EXPECT_FALSE(VerifyBufferPlan(p, short_plan).ok());
}

TEST(BufferPlanTest, VerifierChecksInPlaceHandOver) {
  BufferProblem p;
  p.values = {Value(64, 0, 1), Value(64, 1, 2), Value(64, 1, 2)};
  p.values[1].inplace_candidates = {0};
  p.values[2].inplace_candidates = {0};
  BufferPlan plan;
  plan.offsets = {0, 0, 0};
  plan.reused_from = {-1, 0, 0};  // a buffer handed to two values
  plan.arena_bytes = 64;
  EXPECT_THAT(VerifyBufferPlan(p, plan).message(), HasSubstr("taken over in place by both"));
  plan.offsets = {0, 0, 32};  // value 2 inside the buffer value 1 took over
  plan.reused_from = {-1, 0, -1};
  plan.arena_bytes = 128;
  EXPECT_THAT(VerifyBufferPlan(p, plan).message(), HasSubstr("overlaps"));
  plan.offsets = {0, 0, 64};
  plan.arena_bytes = 128;
  EXPECT_TRUE(VerifyBufferPlan(p, plan).ok());
}

// A random program: values defined at random steps, read up to `span` steps later,
// some taking over a dying input in place.
BufferProblem RandomProblem(std::mt19937_64& rng, int n, int steps, int span) {
  BufferProblem p;
  std::uniform_int_distribution<int> step(0, steps - 1);
  std::uniform_int_distribution<int> life(0, span);
  std::uniform_int_distribution<int> align_log(0, 7);
  std::uniform_int_distribution<int> coin(0, 9);
  std::uniform_int_distribution<int64_t> size(0, 1 << 16);
  for (int i = 0; i < n; ++i) {
    BufferValue v = Value(coin(rng) == 0 ? 0 : size(rng), step(rng), 0, int64_t{1} << align_log(rng));
    v.last_use_step = v.def_step + life(rng);
    v.external = coin(rng) == 0;
    p.values.push_back(v);
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n && p.values[i].inplace_candidates.size() < 2; ++j) {
      if (j != i && p.values[j].last_use_step == p.values[i].def_step && coin(rng) < 3) {
        p.values[i].inplace_candidates.push_back(j);
      }
    }
  }
  return p;
}

TEST(BufferPlanTest, RandomProblemsAreSafeAndNearTheLowerBound) {
  double sum_ratio = 0;
  double worst = 0;
  int counted = 0;
  for (uint64_t seed = 1; seed <= 500; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    std::mt19937_64 rng(seed);
    const int n = 2 + static_cast<int>(rng() % 120);
    const BufferProblem p = RandomProblem(rng, n, 1 + static_cast<int>(rng() % 60), static_cast<int>(rng() % 12));
    const BufferPlan plan = PlanAndVerify(p);
    // The plan is a function of the problem.
    absl::StatusOr<BufferPlan> again = PlanBuffers(p);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->offsets, plan.offsets);
    const int64_t bound = LiveBytesLowerBound(p);
    if (bound > 0) {
      const double ratio = static_cast<double>(plan.arena_bytes) / static_cast<double>(bound);
      sum_ratio += ratio;
      worst = std::max(worst, ratio);
      ++counted;
    }
  }
  ASSERT_GT(counted, 400);
  std::printf("500 random problems: peak / lower bound mean %.4f, worst %.4f\n", sum_ratio / counted, worst);
  EXPECT_LT(sum_ratio / counted, 1.25);
}

TEST(BufferPlanTest, TwentyThousandValuesPlanQuickly) {
  // A long program: each step defines two values read within the next 8 steps, with a
  // few long-lived ones (skip connections, saved activations) and in-place chains.
  std::mt19937_64 rng(42);
  BufferProblem p;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const int64_t def = i / 2;
    const int64_t life = rng() % 50 == 0 ? static_cast<int64_t>(rng() % 4000) : static_cast<int64_t>(rng() % 8);
    BufferValue v = Value(64 * (1 + static_cast<int64_t>(rng() % 4096)), def, def + life, 64);
    if (i >= 2 && p.values[i - 2].last_use_step == def) v.inplace_candidates = {i - 2};
    p.values.push_back(v);
  }
  // Wall and CPU time: on a loaded machine the wall clock mostly measures waiting.
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  absl::StatusOr<BufferPlan> plan = PlanBuffers(p);
  const double cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(plan.ok()) << plan.status();
  const auto verify_start = std::chrono::steady_clock::now();
  EXPECT_TRUE(VerifyBufferPlan(p, *plan).ok());
  const double verify_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - verify_start).count();
  const int64_t bound = LiveBytesLowerBound(p);
  std::printf(
      "20000 values: planned in %.3f s wall (%.3f s CPU), verified in %.3f s, peak %lld bytes, lower bound "
      "%lld (%.4f)\n",
      seconds, cpu_seconds, verify_seconds, static_cast<long long>(plan->arena_bytes), static_cast<long long>(bound),
      static_cast<double>(plan->arena_bytes) / static_cast<double>(bound));
  EXPECT_GE(plan->arena_bytes, bound);
  EXPECT_LT(plan->arena_bytes, 2 * bound);
}

}  // namespace
}  // namespace tsr
