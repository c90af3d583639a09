// `Profiler`: collects timed events (one per executed op, typically) from any thread
// and reports them as a Chrome trace (the JSON "trace event format" read by Perfetto
// and chrome://tracing) or as a table of the ops that took the most time.
#ifndef TESSERA_RUNTIME_PROFILER_H_
#define TESSERA_RUNTIME_PROFILER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace tsr {

struct ProfileEvent {
  std::string name;      // what ran, e.g. the node name "dense1/matmul"
  std::string category;  // what kind of thing it is, e.g. the op type "MatMul"
  int64_t start_ns = 0;  // on any clock shared by all events of one profile
  int64_t duration_ns = 0;
  int thread = 0;
};

class Profiler {
 public:
  Profiler() = default;
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // Thread-safe.
  void Record(ProfileEvent event);
  std::vector<ProfileEvent> Events() const;
  void Clear();

  // One "X" (complete) event per recorded event, with ts/dur in microseconds relative
  // to the earliest start, pid 1, tid = thread and args {"op": category}; plus a
  // process-name metadata event. Events are sorted by start time.
  std::string ChromeTraceJson() const;
  // Writes ChromeTraceJson() to `path`; errors are prefixed with the path.
  absl::Status WriteChromeTrace(const std::string& path) const;

  // The `n` categories (op types) with the largest total time, largest first (ties by
  // name): op, calls, total ms, mean ms, % of the total of all events. A final line
  // sums all events.
  std::string TopTable(int n) const;

 private:
  mutable absl::Mutex mu_;
  std::vector<ProfileEvent> events_ ABSL_GUARDED_BY(mu_);
};

// `s` as a JSON string literal, quotes included; control characters and non-UTF-8
// bytes are escaped so that the result is always valid JSON.
std::string JsonQuote(const std::string& s);

}  // namespace tsr

#endif  // TESSERA_RUNTIME_PROFILER_H_
