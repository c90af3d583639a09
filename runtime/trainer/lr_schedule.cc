// LearningRateSchedule: evaluation and the command-line text form.
#include "runtime/trainer/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tsr {

double LearningRateSchedule::At(int64_t step) const {
  step = std::max<int64_t>(step, 0);
  if (step < warmup_steps) return base * static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
  const int64_t s = step - warmup_steps;
  switch (kind) {
    case Kind::kConstant:
      return base;
    case Kind::kStep:
      return base * std::pow(gamma, static_cast<double>(s / std::max<int64_t>(step_size, 1)));
    case Kind::kExponential:
      return base * std::pow(gamma, static_cast<double>(s) / static_cast<double>(std::max<int64_t>(step_size, 1)));
    case Kind::kCosine: {
      const int64_t span = std::max<int64_t>(total_steps - warmup_steps, 1);
      const double progress = std::min(1.0, static_cast<double>(s) / static_cast<double>(span));
      return base * (min_ratio + (1 - min_ratio) * 0.5 * (1 + std::cos(M_PI * progress)));
    }
  }
  return base;
}

std::string LearningRateSchedule::ToString() const {
  std::string text;
  switch (kind) {
    case Kind::kConstant:
      text = "constant";
      break;
    case Kind::kStep:
      text = absl::StrCat("step:", step_size, ":", gamma);
      break;
    case Kind::kExponential:
      text = absl::StrCat("exponential:", step_size, ":", gamma);
      break;
    case Kind::kCosine:
      text = min_ratio == 0 ? "cosine" : absl::StrCat("cosine:", min_ratio);
      break;
  }
  if (warmup_steps > 0) absl::StrAppend(&text, "+warmup:", warmup_steps);
  return text;
}

absl::StatusOr<LearningRateSchedule> ParseLearningRateSchedule(absl::string_view text, double base,
                                                               int64_t total_steps) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad learning-rate schedule '", text, "': ", why,
                     " (expected constant, step:STEPS:GAMMA, exponential:STEPS:GAMMA, cosine or cosine:MIN_RATIO, "
                     "optionally followed by +warmup:STEPS)"));
  };
  if (!(base > 0) || !std::isfinite(base)) return bad(absl::StrCat("the base rate ", base, " must be positive"));
  LearningRateSchedule s;
  s.base = base;
  s.total_steps = total_steps;
  std::vector<absl::string_view> parts = absl::StrSplit(text, '+');
  if (parts.size() > 2) return bad("more than one '+'");
  if (parts.size() == 2) {
    std::vector<absl::string_view> w = absl::StrSplit(parts[1], ':');
    if (w.size() != 2 || w[0] != "warmup" || !absl::SimpleAtoi(w[1], &s.warmup_steps) || s.warmup_steps < 0) {
      return bad("the suffix must be +warmup:STEPS with STEPS >= 0");
    }
  }
  std::vector<absl::string_view> f = absl::StrSplit(parts[0], ':');
  auto number = [&](size_t i, double& out) {
    return i < f.size() && absl::SimpleAtod(f[i], &out) && std::isfinite(out);
  };
  auto count = [&](size_t i, int64_t& out) { return i < f.size() && absl::SimpleAtoi(f[i], &out); };
  if (f[0] == "constant" && f.size() == 1) {
    s.kind = LearningRateSchedule::Kind::kConstant;
  } else if ((f[0] == "step" || f[0] == "exponential") && f.size() == 3) {
    s.kind = f[0] == "step" ? LearningRateSchedule::Kind::kStep : LearningRateSchedule::Kind::kExponential;
    if (!count(1, s.step_size) || s.step_size <= 0) return bad("STEPS must be a positive integer");
    if (!number(2, s.gamma) || !(s.gamma > 0)) return bad("GAMMA must be a positive number");
  } else if (f[0] == "cosine" && f.size() <= 2) {
    s.kind = LearningRateSchedule::Kind::kCosine;
    if (f.size() == 2 && (!number(1, s.min_ratio) || s.min_ratio < 0 || s.min_ratio > 1)) {
      return bad("MIN_RATIO must be in [0, 1]");
    }
    if (total_steps <= 0) return bad("cosine needs the total number of steps");
  } else {
    return bad("unknown form");
  }
  return s;
}

}  // namespace tsr
