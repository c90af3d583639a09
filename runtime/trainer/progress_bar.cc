// ProgressBar: formatting, throttled in-place redraws on terminals, periodic lines elsewhere.
#include "runtime/trainer/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tsr {

std::string FormatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const int64_t s = static_cast<int64_t>(std::llround(seconds));
  if (s >= 3600) return absl::StrFormat("%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
  return absl::StrFormat("%d:%02d", s / 60, s % 60);
}

std::string FormatCount(double value) {
  if (!std::isfinite(value)) return "?";
  std::string digits = absl::StrCat(std::llround(std::fabs(value)));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

ProgressBar::ProgressBar(std::string label, int64_t total, ProgressBarOptions options)
    : label_(std::move(label)), total_(total), options_(std::move(options)) {
  if (options_.out == nullptr) options_.out = &std::cerr;
  if (!options_.clock) {
    options_.clock = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    };
  }
  interactive_ = options_.interactive.value_or(::isatty(STDERR_FILENO) == 1);
  start_ = options_.clock();
}

std::string ProgressBar::Line(int64_t done, int64_t examples, const Metrics& metrics, double elapsed) const {
  std::string line = label_;
  if (total_ > 0) {
    const double fraction = std::clamp(static_cast<double>(done) / static_cast<double>(total_), 0.0, 1.0);
    const int width = std::max(options_.bar_width, 1);
    const int filled = static_cast<int>(fraction * width);
    std::string bar(static_cast<size_t>(width), ' ');
    for (int i = 0; i < filled; ++i) bar[i] = '=';
    if (filled < width) bar[filled] = '>';
    absl::StrAppend(&line, " [", bar, "] ", done, "/", total_);
  } else {
    absl::StrAppend(&line, " ", done);
  }
  for (const auto& [name, value] : metrics) absl::StrAppend(&line, "  ", name, " ", absl::StrFormat("%.4f", value));
  if (elapsed > 0 && examples > 0) absl::StrAppend(&line, "  ", FormatCount(examples / elapsed), " ex/s");
  if (total_ > 0 && done > 0 && done < total_) {
    absl::StrAppend(&line, "  ETA ", FormatDuration(elapsed / done * (total_ - done)));
  } else if (done >= total_ && total_ > 0) {
    absl::StrAppend(&line, "  ", FormatDuration(elapsed));
  }
  return line;
}

void ProgressBar::Update(int64_t done, int64_t examples, const Metrics& metrics) {
  done_ = done;
  const double now = options_.clock();
  if (interactive_) {
    if (now - last_draw_ < options_.min_redraw_seconds) return;
    last_draw_ = now;
    const std::string line = Line(done, examples, metrics, now - start_);
    // Pad over the remains of a longer previous line.
    *options_.out << '\r' << line << std::string(last_width_ > line.size() ? last_width_ - line.size() : 0, ' ')
                  << std::flush;
    last_width_ = line.size();
    return;
  }
  if (total_ <= 0) return;
  const double step = std::max(options_.log_every_fraction, 1e-6);
  const int64_t bucket = static_cast<int64_t>(static_cast<double>(done) / static_cast<double>(total_) / step);
  if (bucket <= last_logged_bucket_ || done >= total_) return;  // the final line comes from Finish
  last_logged_bucket_ = bucket;
  if (bucket == 0) return;
  *options_.out << Line(done, examples, metrics, now - start_) << '\n' << std::flush;
}

void ProgressBar::Finish(int64_t examples, const Metrics& metrics) {
  const double now = options_.clock();
  // Work may stop early (a step limit): show how far it got.
  const std::string line = Line(done_ > 0 ? done_ : total_, examples, metrics, now - start_);
  if (interactive_) {
    *options_.out << '\r' << line << std::string(last_width_ > line.size() ? last_width_ - line.size() : 0, ' ') << '\n'
                  << std::flush;
  } else {
    *options_.out << line << '\n' << std::flush;
  }
}

}  // namespace tsr
