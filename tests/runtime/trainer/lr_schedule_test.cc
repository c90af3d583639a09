// Tests of the learning-rate schedules and their text form.
#include "runtime/trainer/lr_schedule.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

TEST(LearningRateScheduleTest, Values) {
  LearningRateSchedule c = *ParseLearningRateSchedule("constant", 0.1, 100);
  EXPECT_EQ(c.At(0), 0.1);
  EXPECT_EQ(c.At(99), 0.1);
  LearningRateSchedule st = *ParseLearningRateSchedule("step:10:0.5", 0.2, 100);
  EXPECT_DOUBLE_EQ(st.At(9), 0.2);
  EXPECT_DOUBLE_EQ(st.At(10), 0.1);
  EXPECT_DOUBLE_EQ(st.At(25), 0.05);
  LearningRateSchedule ex = *ParseLearningRateSchedule("exponential:100:0.5", 1.0, 1000);
  EXPECT_DOUBLE_EQ(ex.At(50), std::sqrt(0.5));
  EXPECT_DOUBLE_EQ(ex.At(200), 0.25);
  LearningRateSchedule co = *ParseLearningRateSchedule("cosine:0.1", 1.0, 100);
  EXPECT_DOUBLE_EQ(co.At(0), 1.0);
  EXPECT_NEAR(co.At(50), 0.1 + 0.9 * 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(co.At(100), 0.1);
  EXPECT_DOUBLE_EQ(co.At(1000), 0.1);
}

TEST(LearningRateScheduleTest, WarmupRampsLinearlyThenHandsOver) {
  LearningRateSchedule s = *ParseLearningRateSchedule("cosine+warmup:10", 0.5, 110);
  EXPECT_DOUBLE_EQ(s.At(0), 0.05);
  EXPECT_DOUBLE_EQ(s.At(4), 0.25);
  EXPECT_DOUBLE_EQ(s.At(9), 0.5);
  EXPECT_DOUBLE_EQ(s.At(10), 0.5);  // cosine starts at the top
  EXPECT_NEAR(s.At(60), 0.25, 1e-12);
  EXPECT_NEAR(s.At(110), 0.0, 1e-12);
  for (int64_t i = 1; i < 110; ++i) {
    if (i > 10) {
      EXPECT_LE(s.At(i), s.At(i - 1)) << i;
    }
  }
}

TEST(LearningRateScheduleTest, TextRoundTripsAndErrors) {
  for (const char* text :
       {"constant", "step:30:0.1", "exponential:1000:0.5", "cosine", "cosine:0.01", "step:5:0.9+warmup:100"}) {
    absl::StatusOr<LearningRateSchedule> s = ParseLearningRateSchedule(text, 0.1, 1000);
    ASSERT_TRUE(s.ok()) << text << ": " << s.status();
    EXPECT_EQ(s->ToString(), text);
  }
  EXPECT_THAT(ParseLearningRateSchedule("linear", 0.1, 10).status().message(), HasSubstr("unknown form"));
  EXPECT_THAT(ParseLearningRateSchedule("step:0:0.1", 0.1, 10).status().message(), HasSubstr("positive integer"));
  EXPECT_THAT(ParseLearningRateSchedule("step:3:-1", 0.1, 10).status().message(), HasSubstr("GAMMA"));
  EXPECT_THAT(ParseLearningRateSchedule("cosine:2", 0.1, 10).status().message(), HasSubstr("MIN_RATIO"));
  EXPECT_THAT(ParseLearningRateSchedule("cosine", 0.1, 0).status().message(), HasSubstr("total number of steps"));
  EXPECT_THAT(ParseLearningRateSchedule("constant+warmup:x", 0.1, 10).status().message(), HasSubstr("+warmup"));
  EXPECT_THAT(ParseLearningRateSchedule("constant", 0, 10).status().message(), HasSubstr("must be positive"));
  EXPECT_THAT(ParseLearningRateSchedule("constant", NAN, 10).status().message(), HasSubstr("must be positive"));
}

}  // namespace
}  // namespace tsr
