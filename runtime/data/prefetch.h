// `Prefetcher`: runs a batch producer on a background thread, keeping up to `capacity`
// finished batches in a queue so that preparing the next batch overlaps the training
// step that consumes the current one.
//
// Shutdown is the destructor's job and never hangs: it tells the thread to stop, which
// wakes a producer blocked on a full queue; the thread finishes the batch it is making
// (if any) and exits, and the destructor joins it. A consumer may therefore stop
// reading at any point, e.g. after an error in the training step.
#ifndef TESSERA_RUNTIME_DATA_PREFETCH_H_
#define TESSERA_RUNTIME_DATA_PREFETCH_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "runtime/data/dataset.h"

namespace tsr {

class Prefetcher {
 public:
  // Calls `produce` on a new thread until it returns nullopt (the end of the stream) or
  // the Prefetcher is destroyed. `capacity` >= 1 bounds the queued batches.
  Prefetcher(std::function<std::optional<Batch>()> produce, int capacity);
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // The next batch in production order, waiting for it if needed; nullopt once the
  // producer has ended and the queue is drained.
  std::optional<Batch> Next();

 private:
  void Run();

  std::function<std::optional<Batch>()> produce_;
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable changed_;  // the queue, `done_` or `stop_` changed
  std::deque<Batch> queue_;
  bool done_ = false;   // the producer returned nullopt
  bool stop_ = false;   // the destructor asks the thread to exit
  std::thread thread_;  // last: started after every other member is initialized
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_DATA_PREFETCH_H_
