// Tests of ProgressBar: the line's content, in-place redraws throttled on terminals,
// periodic plain lines otherwise, and the number formats.
#include "runtime/trainer/progress_bar.h"

#include <sstream>
#include <string>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

TEST(ProgressBarTest, LineShowsBarCountsMetricsThroughputAndEta) {
  double now = 100;
  std::ostringstream out;
  ProgressBar bar("epoch 3/10", 100,
                  {.out = &out, .interactive = false, .bar_width = 10, .clock = [&] { return now; }});
  const std::string line = bar.Line(40, 2560, {{"loss", 0.34126}, {"acc", 0.88}}, 2.0);
  EXPECT_EQ(line, "epoch 3/10 [====>     ] 40/100  loss 0.3413  acc 0.8800  1,280 ex/s  ETA 0:03");
  EXPECT_THAT(bar.Line(100, 6400, {}, 65.0), HasSubstr("[==========] 100/100  98 ex/s  1:05"));
}

TEST(ProgressBarTest, PlainOutputPrintsEveryTenthAndAFinalLine) {
  double now = 0;
  std::ostringstream out;
  ProgressBar bar("eval", 50, {.out = &out, .interactive = false, .clock = [&] { return now; }});
  for (int i = 1; i <= 50; ++i) {
    now += 0.5;
    bar.Update(i, i * 10, {{"acc", 0.5}});
  }
  bar.Finish(500, {{"acc", 0.9}});
  std::vector<std::string> lines = absl::StrSplit(out.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 10u) << out.str();  // at 10%, 20%, ..., 90%, then the final one
  EXPECT_THAT(lines[0], HasSubstr(" 5/50"));
  EXPECT_THAT(lines.back(), HasSubstr("50/50  acc 0.9000  20 ex/s  0:25"));
  EXPECT_EQ(out.str().find('\r'), std::string::npos);
}

TEST(ProgressBarTest, TerminalRedrawsInPlaceAtMostTenTimesASecond) {
  double now = 0;
  std::ostringstream out;
  ProgressBar bar("train", 1000, {.out = &out, .interactive = true, .clock = [&] { return now; }});
  for (int i = 1; i <= 1000; ++i) {
    now += 0.001;  // 1 s in total
    bar.Update(i, i, {});
  }
  bar.Finish(1000, {});
  const std::string s = out.str();
  const size_t redraws = static_cast<size_t>(std::count(s.begin(), s.end(), '\r'));
  EXPECT_GE(redraws, 10u);
  EXPECT_LE(redraws, 12u);
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 1);
  EXPECT_EQ(s.back(), '\n');
}

TEST(ProgressBarTest, Formats) {
  EXPECT_EQ(FormatDuration(7), "0:07");
  EXPECT_EQ(FormatDuration(123), "2:03");
  EXPECT_EQ(FormatDuration(3723), "1:02:03");
  EXPECT_EQ(FormatDuration(-1), "?");
  EXPECT_EQ(FormatCount(1234567.4), "1,234,567");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(-1000), "-1,000");
}

}  // namespace
}  // namespace tsr
