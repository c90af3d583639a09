// Learning-rate schedules: the rate for a training step, computed on the host and fed
// to the graph's "learning_rate" input every step (graph/builder/optimizers.h), so any
// schedule works with any optimizer and resuming at step s gives the same rate.
//
//   constant      lr
//   step          lr * gamma^floor(s / step_size)
//   exponential   lr * gamma^(s / decay_steps)          (smooth)
//   cosine        lr * (min + (1 - min) * 0.5 * (1 + cos(pi * p))), p = progress after warm-up
// Every schedule may start with `warmup_steps` of linear warm-up from 0 to lr (the
// first step uses lr / warmup_steps, as in PyTorch's LinearLR with start 1/warmup).
//
// A text form parses command-line flags: "constant", "step:30:0.1" (step_size, gamma),
// "exponential:1000:0.5" (decay_steps, gamma), "cosine" or "cosine:0.01" (min ratio);
// a "+warmup:500" suffix adds warm-up.
#ifndef TESSERA_RUNTIME_TRAINER_LR_SCHEDULE_H_
#define TESSERA_RUNTIME_TRAINER_LR_SCHEDULE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tsr {

struct LearningRateSchedule {
  enum class Kind { kConstant, kStep, kExponential, kCosine };
  Kind kind = Kind::kConstant;
  double base = 0.01;
  int64_t step_size = 1;     // kStep: steps between decays; kExponential: steps per factor gamma
  double gamma = 0.1;        // kStep, kExponential
  double min_ratio = 0.0;    // kCosine: final rate / base
  int64_t total_steps = 0;   // kCosine: the step at which the rate reaches base * min_ratio
  int64_t warmup_steps = 0;  // linear warm-up before the schedule (counted in total_steps)

  // The rate for 0-based `step`.
  double At(int64_t step) const;
  // The text form (see the file comment), e.g. "cosine:0.01+warmup:500".
  std::string ToString() const;
};

// Parses the text form; `base` and `total_steps` come from other flags.
absl::StatusOr<LearningRateSchedule> ParseLearningRateSchedule(absl::string_view text, double base,
                                                               int64_t total_steps);

}  // namespace tsr

#endif  // TESSERA_RUNTIME_TRAINER_LR_SCHEDULE_H_
