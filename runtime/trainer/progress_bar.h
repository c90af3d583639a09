// `ProgressBar`: progress of long work (an epoch of training, an evaluation) with
// metrics, throughput and ETA, like Keras' or tqdm's bars:
//
//   epoch 3/10 [==========>         ] 540/938  loss 0.3412  acc 0.8812  12,345 ex/s  ETA 0:12
//
// On a terminal the line is redrawn in place (at most every `min_redraw_seconds`); when
// the output is not a terminal (a log file, CI) it prints a plain line every
// `log_every_fraction` of the work, so logs stay readable. Time comes from an
// injectable clock for tests.
#ifndef TESSERA_RUNTIME_TRAINER_PROGRESS_BAR_H_
#define TESSERA_RUNTIME_TRAINER_PROGRESS_BAR_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace tsr {

struct ProgressBarOptions {
  std::ostream* out = nullptr;  // default: std::cerr
  // Redraw in place; default: whether stderr is a terminal.
  std::optional<bool> interactive;
  int bar_width = 30;
  double min_redraw_seconds = 0.1;
  double log_every_fraction = 0.1;
  std::function<double()> clock;  // seconds; default: steady clock
};

class ProgressBar {
 public:
  using Metrics = std::vector<std::pair<std::string, double>>;

  // `total` units of work (batches); `total` <= 0 shows no bar or ETA.
  ProgressBar(std::string label, int64_t total, ProgressBarOptions options = {});

  // `done` units finished, `examples` processed so far (for ex/s), current metrics.
  void Update(int64_t done, int64_t examples, const Metrics& metrics);
  // The final line at the last Update's count (always printed, ending the in-place
  // line with a newline).
  void Finish(int64_t examples, const Metrics& metrics);

  // The text of the line for these values, without control characters.
  std::string Line(int64_t done, int64_t examples, const Metrics& metrics, double elapsed) const;

 private:
  std::string label_;
  int64_t total_;
  ProgressBarOptions options_;
  bool interactive_;
  double start_;
  double last_draw_ = -1e300;
  int64_t last_logged_bucket_ = -1;
  size_t last_width_ = 0;
  int64_t done_ = 0;
};

// "1:02:03", "2:03" or "0:07".
std::string FormatDuration(double seconds);
// "12,345" (thousands separated), rounding to an integer.
std::string FormatCount(double value);

}  // namespace tsr

#endif  // TESSERA_RUNTIME_TRAINER_PROGRESS_BAR_H_
