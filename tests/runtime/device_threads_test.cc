// Tests of DeviceThreads and RunOnEveryDevice: every device runs at once (devices that
// wait for one another finish), over many calls on the same threads, and the failure
// reported is the first in cause.
#include "runtime/device_threads.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

// Every device waits until all n have started: only concurrent runs finish.
absl::Status MeetAll(std::atomic<int>& arrived, int n) {
  arrived.fetch_add(1);
  while (arrived.load() < n) std::this_thread::yield();
  return absl::OkStatus();
}

TEST(DeviceThreadsTest, RunsEveryDeviceAtOnceManyTimes) {
  for (int n : {1, 2, 3, 5}) {
    DeviceThreads threads(n);
    EXPECT_EQ(threads.size(), n);
    std::vector<int> runs(n, 0);
    for (int call = 0; call < 300; ++call) {
      std::atomic<int> arrived{0};
      ASSERT_TRUE(threads
                      .Run([&](int d) {
                        ++runs[d];
                        return MeetAll(arrived, n);
                      })
                      .ok())
          << "n=" << n << " call " << call;
      // A pause now and then lets the threads go to sleep between calls.
      if (call % 50 == 49) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    for (int d = 0; d < n; ++d) EXPECT_EQ(runs[d], 300) << "device " << d;
  }
  std::atomic<int> arrived{0};
  EXPECT_TRUE(RunOnEveryDevice(3, [&](int) { return MeetAll(arrived, 3); }).ok());
  EXPECT_TRUE(DeviceThreads(0).Run([](int) { return absl::InternalError("no device runs"); }).ok());
}

TEST(DeviceThreadsTest, ReportsTheFailureFirstInCause) {
  DeviceThreads threads(3);
  // Device 2 failed on its own; devices 0 and 1 timed out waiting for it.
  absl::Status status = threads.Run([](int d) {
    return d == 2 ? absl::InvalidArgumentError("bad feed") : absl::DeadlineExceededError("waited for device 2");
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("device 2: bad feed"));
  // The threads stay usable after a failure.
  EXPECT_TRUE(threads.Run([](int) { return absl::OkStatus(); }).ok());
  status = RunOnEveryDevice(2, [](int d) { return d == 1 ? absl::InternalError("x") : absl::OkStatus(); });
  EXPECT_THAT(status.message(), HasSubstr("device 1: x"));
}

}  // namespace
}  // namespace tsr
