// What a Session run reports besides its results: per-op timings (when profiling) and
// the peak memory the run needed.
#ifndef TESSERA_RUNTIME_RUN_METADATA_H_
#define TESSERA_RUNTIME_RUN_METADATA_H_

#include <cstdint>
#include <string>
#include <vector>

namespace tsr {

struct OpTiming {
  std::string node;
  std::string op;
  int64_t start_ns = 0;     // since the run started
  int64_t duration_ns = 0;  // of the kernel (or the feed/variable read for sources)
  int thread = 0;           // 0: the thread that called Run; i: the thread pool's worker i-1
};

struct RunMetadata {
  std::vector<OpTiming> timings;  // in completion order
  // Highest bytes held by the device allocator during the run, above what it held when
  // the run started.
  int64_t peak_bytes = 0;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_RUN_METADATA_H_
