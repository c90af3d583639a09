// Running one function per device at once, for the programs of a device mesh in one
// process (MeshSession, partitioned and pipelined training steps): each device's program
// needs its own thread, since the devices wait for one another in their collectives.
#ifndef TESSERA_RUNTIME_DEVICE_THREADS_H_
#define TESSERA_RUNTIME_DEVICE_THREADS_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"

namespace tsr {

// Runs fn(0), ..., fn(n - 1) at once, fn(0) on the calling thread; the status of the
// device that failed first in cause: a device that failed otherwise is preferred to
// those whose collectives timed out waiting for it. The message names the device.
absl::Status RunOnEveryDevice(int n, const std::function<absl::Status(int device)>& fn);

// RunOnEveryDevice on n - 1 threads kept between calls: a training step runs every
// device every step, and starting a thread per device per step costs tens of
// microseconds each. Between calls the threads spin briefly (the next step usually
// follows at once), then sleep. Run is called from one thread at a time.
class DeviceThreads {
 public:
  explicit DeviceThreads(int n);
  ~DeviceThreads();
  DeviceThreads(const DeviceThreads&) = delete;
  DeviceThreads& operator=(const DeviceThreads&) = delete;

  int size() const { return n_; }
  absl::Status Run(const std::function<absl::Status(int device)>& fn);

 private:
  void DeviceLoop(int device);

  const int n_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::atomic<uint64_t> generation_{0};  // bumped by every Run (and by the destructor)
  std::atomic<int> remaining_{0};        // device threads still running this generation
  std::atomic<bool> stopping_{false};
  const std::function<absl::Status(int)>* fn_ = nullptr;  // this generation's
  std::vector<absl::Status> results_;
  std::vector<std::thread> threads_;  // last: they start once the members above exist
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_DEVICE_THREADS_H_
