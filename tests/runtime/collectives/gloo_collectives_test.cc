// Tests of the Gloo collectives backend, one process per rank. Started without
// TESSERA_RANK (as CTest and Bazel start it), the binary runs worlds of 1, 2, 3 and 4
// ranks one after the other: it starts that many copies of itself, each with
// TESSERA_RANK and TESSERA_WORLD_SIZE (the launch contract, runtime/launch/world_info.h)
// and TESSERA_GLOO_TEST_STORE, a fresh directory for the FileKeyValueStore through which
// its communicators rendezvous, and fails if any copy fails (the others of that world
// are then stopped). Each copy runs the conformance suite at its world size (mismatched
// collectives reported alike on every rank included), then Gloo's own error reporting:
// rendezvous and collective timeouts naming the missing ranks, send/recv timeouts. Ranks that
// act differently in a test meet at a barrier in the store afterwards.
#include "runtime/collectives/gloo/gloo_collectives.h"

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/launch/file_key_value_store.h"
#include "runtime/launch/world_info.h"
#include "tests/runtime/collectives/collectives_conformance.h"
#include "tests/runtime/collectives/rank_test_output.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

constexpr char kStoreVariable[] = "TESSERA_GLOO_TEST_STORE";

// This process's rank (set in main before the tests are registered).
int g_rank = 0;
int g_world_size = 1;
FileKeyValueStore* g_store = nullptr;

// Every rank creates its communicators in the same order, so the n-th gets the same
// name everywhere.
std::string NextCommunicatorName() {
  static int count = 0;
  return absl::StrCat("comm", count++);
}

// Every rank waits here until every rank has arrived (through the store, not through a
// communicator under test).
void StoreBarrier(absl::string_view name) {
  static int count = 0;
  const std::string prefix = absl::StrCat("barrier", count++, "-", name, "/");
  ASSERT_TRUE(g_store->Set(absl::StrCat(prefix, g_rank), "").ok());
  for (int r = 0; r < g_world_size; ++r) {
    absl::StatusOr<std::string> arrived = g_store->Get(absl::StrCat(prefix, r), absl::Seconds(120));
    ASSERT_TRUE(arrived.ok()) << arrived.status();
  }
}

std::vector<std::unique_ptr<Collectives>> MakeRank(int world_size, CollectivesOptions options) {
  std::vector<std::unique_ptr<Collectives>> ranks;
  absl::StatusOr<std::unique_ptr<GlooCollectives>> comm =
      GlooCollectives::Create(g_rank, world_size, *g_store, NextCommunicatorName(), options);
  if (!comm.ok()) {
    ADD_FAILURE() << comm.status();
    return ranks;
  }
  ranks.push_back(*std::move(comm));
  return ranks;
}

using conformance::CollectivesConformanceTest;

INSTANTIATE_TEST_SUITE_P(Gloo, CollectivesConformanceTest,
                         testing::ValuesIn(conformance::ConformanceParams("gloo", MakeRank, {g_world_size})),
                         conformance::ConformanceParamName);

// Each test: this process's rank of a fresh communicator. Its timeout is generous (ranks
// of a loaded machine — the sanitizer build, other tests beside — may arrive seconds
// apart); the tests of timeouts use GlooTimeoutTest's short one.
class GlooCollectivesTest : public testing::Test {
 protected:
  virtual absl::Duration Timeout() const { return absl::Seconds(60); }

  void SetUp() override {
    CollectivesOptions options;
    options.timeout = Timeout();
    absl::StatusOr<std::unique_ptr<GlooCollectives>> comm =
        GlooCollectives::Create(g_rank, g_world_size, *g_store, NextCommunicatorName(), options);
    ASSERT_TRUE(comm.ok()) << comm.status();
    comm_ = *std::move(comm);
    rank_ = comm_->rank();
    world_ = comm_->world_size();
  }
  // Ranks that acted differently meet here before the next test.
  void TearDown() override { StoreBarrier("teardown"); }

  std::unique_ptr<GlooCollectives> comm_;
  int rank_ = 0;
  int world_ = 1;
};

class GlooTimeoutTest : public GlooCollectivesTest {
 protected:
  absl::Duration Timeout() const override { return absl::Seconds(4); }
};

TEST_F(GlooCollectivesTest, CreateReportsRankAndWorld) {
  EXPECT_EQ(rank_, g_rank);
  EXPECT_EQ(world_, g_world_size);
  EXPECT_FALSE(comm_->poisoned());
  EXPECT_EQ(GlooCollectives::Create(g_world_size, g_world_size, *g_store, "bad", {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GlooCollectives::Create(0, 0, *g_store, "bad", {}).status().code(), absl::StatusCode::kInvalidArgument);
}

// Rank 0 alone joins a communicator: the rendezvous times out naming rank 1.
TEST_F(GlooCollectivesTest, RendezvousTimesOutNamingTheMissingRank) {
  if (world_ < 2) GTEST_SKIP() << "needs two ranks";
  if (rank_ != 0) return;
  CollectivesOptions options;
  options.timeout = absl::Seconds(1);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<GlooCollectives>> lonely =
      GlooCollectives::Create(0, world_, *g_store, absl::StrCat("lonely", world_), options);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_EQ(lonely.status().code(), absl::StatusCode::kDeadlineExceeded) << lonely.status();
  EXPECT_THAT(lonely.status().message(), HasSubstr(absl::StrCat("gloo communicator 'lonely", world_, "' rank 0 of ",
                                                                world_, ": rank 1 did not arrive within 1s")));
}

// The last rank skips an all-reduce. The others fail after the timeout, naming it. Gloo
// then closes their connections, so when the last rank comes late it fails at once, and
// every rank's communicator is poisoned.
TEST_F(GlooTimeoutTest, MissingRankTimesOutNamingIt) {
  if (world_ < 2) GTEST_SKIP() << "needs two ranks";
  const int late = world_ - 1;
  Tensor grad(DType::kF32, Shape({10}));
  if (rank_ != late) {
    const absl::Time start = absl::Now();
    absl::Status status = comm_->AllReduce(grad, ReduceOp::kSum, "grad/w1").Wait();
    const absl::Duration took = absl::Now() - start;
    EXPECT_GE(took, absl::Milliseconds(3900));
    EXPECT_LT(took, absl::Seconds(20));
    EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
    EXPECT_THAT(status.message(),
                HasSubstr(absl::StrCat("all_reduce 'grad/w1' (seq 0): rank ", rank_, " waited 4s but rank ", late,
                                       " of ", world_, " did not arrive")));
  }
  StoreBarrier("late");
  if (rank_ == late) {
    // Well under the 4 s timeout, even on a loaded machine.
    const absl::Time start = absl::Now();
    absl::Status status = comm_->AllReduce(grad, ReduceOp::kSum, "grad/w1").Wait();
    EXPECT_LT(absl::Now() - start, absl::Seconds(3)) << "the late rank should fail at once";
    EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
    EXPECT_THAT(status.message(), HasSubstr(absl::StrCat("all_reduce 'grad/w1' (seq 0): rank ", late,
                                                         " lost its connections to the other ranks")));
  }
  EXPECT_TRUE(comm_->poisoned());
  const absl::Time start = absl::Now();
  absl::Status after = comm_->Barrier("after").Wait();
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  EXPECT_EQ(after.code(), absl::StatusCode::kFailedPrecondition) << after;
  EXPECT_THAT(after.message(), HasSubstr("barrier 'after' (seq 1): the communicator is unusable since all_reduce "
                                         "'grad/w1' (seq 0)"));
}

// Only rank 1 comes to the barrier: it names every other rank.
TEST_F(GlooTimeoutTest, TimeoutNamesEveryMissingRank) {
  if (world_ < 2) GTEST_SKIP() << "needs two ranks";
  if (rank_ != 1) return;
  absl::Status status = comm_->Barrier("step").Wait();
  std::vector<int> others;
  for (int r = 0; r < world_; ++r) {
    if (r != 1) others.push_back(r);
  }
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(status.message(), HasSubstr(absl::StrCat("barrier 'step' (seq 0): rank 1 waited 4s but rank",
                                                       others.size() > 1 ? "s " : " ", absl::StrJoin(others, ", "),
                                                       " of ", world_, " did not arrive")));
}

// Rank 0 posts a receive that rank 1 never matches: it times out naming rank 1, and (a
// Gloo timeout closes every connection) poisons rank 0's communicator.
TEST_F(GlooTimeoutTest, UnmatchedRecvTimesOutAndPoisons) {
  if (world_ < 2) GTEST_SKIP() << "needs two ranks";
  if (rank_ != 0) return;
  Tensor t(DType::kF32, Shape({4}));
  absl::Status recv = comm_->Recv(t, 1, "x").Wait();
  EXPECT_EQ(recv.code(), absl::StatusCode::kDeadlineExceeded) << recv;
  EXPECT_THAT(recv.message(),
              HasSubstr("recv 'x' rank 1 -> rank 0 (seq 0): rank 1 did not post the matching send within 4s"));
  EXPECT_TRUE(comm_->poisoned());
  absl::Status send = comm_->Send(t, 1, "y").Wait();
  EXPECT_EQ(send.code(), absl::StatusCode::kFailedPrecondition) << send;
  EXPECT_THAT(send.message(), HasSubstr("send 'y' rank 0 -> rank 1 (seq 0): the communicator is unusable since "
                                        "recv 'x'"));
}

// A pending Recv completes (cancelled) when its communicator goes away.
TEST_F(GlooCollectivesTest, PendingRecvIsCancelledWithTheCommunicator) {
  if (world_ < 2) GTEST_SKIP() << "needs two ranks";
  if (rank_ != 0) return;
  Tensor t(DType::kF32, Shape({4}));
  CollectiveHandle recv = comm_->Recv(t, 1, "orphan");
  EXPECT_FALSE(recv.Done());
  comm_.reset();
  absl::Status status = recv.Wait();
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_THAT(status.message(), HasSubstr("'orphan' rank 1 -> rank 0 (seq 0): the communicator was destroyed"));
}

// Sends to itself are matched in memory.
TEST_F(GlooCollectivesTest, SendToSelf) {
  Tensor sent = Tensor::FromVector<int64_t>(Shape({2}), {rank_, 42});
  Tensor received(DType::kI64, Shape({2}));
  CollectiveHandle recv = comm_->Recv(received, rank_, "self");
  EXPECT_TRUE(comm_->Send(sent, rank_, "self").Wait().ok());
  EXPECT_TRUE(recv.Wait().ok());
  EXPECT_TRUE(received.BitwiseEquals(sent));
}

// ---- The launcher: worlds of 1 to 4 ranks, each rank a copy of this binary. ----

void RemoveDirectory(const std::string& dir) {
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") ::unlink((dir + "/" + name).c_str());
    }
    ::closedir(d);
  }
  ::rmdir(dir.c_str());
}

// Runs one world of `world_size` copies of this binary; whether every copy passed.
bool RunWorld(int world_size, char** argv) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(tmp != nullptr ? tmp : "/tmp") + "/gloo_test_XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) {
    std::perror("mkdtemp");
    return false;
  }
  std::cout << "[ gloo     ] world of " << world_size << " ranks, store " << dir << std::endl;
  const absl::Time start = absl::Now();
  // This binary by its own path (not /proc/self/exe), so that the ranks show under its
  // name in ps.
  char self[4096];
  const ssize_t self_size = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (self_size <= 0) {
    std::perror("readlink /proc/self/exe");
    return false;
  }
  self[self_size] = '\0';
  std::vector<pid_t> pids;
  for (int r = 0; r < world_size; ++r) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv(kRankVariable, std::to_string(r).c_str(), 1);
      ::setenv(kWorldSizeVariable, std::to_string(world_size).c_str(), 1);
      ::setenv(kStoreVariable, dir.c_str(), 1);
      ::execv(self, argv);
      std::perror("execv");
      ::_exit(127);
    }
    pids.push_back(pid);
  }
  // Waits for every copy; once one fails (or the world runs too long) the others get a
  // grace period to finish their own reports, then are killed.
  std::vector<int> failed;
  int running = world_size;
  absl::Time kill_at = start + absl::Minutes(5);
  while (running > 0) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      for (int r = 0; r < world_size; ++r) {
        if (pids[r] != pid) continue;
        pids[r] = 0;
        --running;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
          failed.push_back(r);
          std::cout << "[ gloo     ] rank " << r << " of " << world_size << " failed ("
                    << (WIFEXITED(status) ? absl::StrCat("exit ", WEXITSTATUS(status))
                                          : absl::StrCat("signal ", WTERMSIG(status)))
                    << ")" << std::endl;
          kill_at = std::min(kill_at, absl::Now() + absl::Seconds(10));
        }
      }
      continue;
    }
    if (absl::Now() >= kill_at) {
      for (int r = 0; r < world_size; ++r) {
        if (pids[r] != 0) ::kill(pids[r], SIGKILL);
      }
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  RemoveDirectory(dir);
  std::cout << "[ gloo     ] world of " << world_size << " ranks: "
            << (failed.empty() ? "every rank passed" : absl::StrCat("ranks ", absl::StrJoin(failed, ", "), " failed"))
            << " (" << absl::FormatDuration(absl::Trunc(absl::Now() - start, absl::Milliseconds(1))) << ")"
            << std::endl;
  return failed.empty();
}

}  // namespace
}  // namespace tsr

int main(int argc, char** argv) {
  if (std::getenv(tsr::kRankVariable) == nullptr) {
    bool passed = true;
    for (int world_size : {1, 2, 3, 4}) passed &= tsr::RunWorld(world_size, argv);
    return passed ? 0 : 1;
  }
  absl::StatusOr<tsr::WorldInfo> world = tsr::WorldInfoFromEnvironment();
  const char* store_dir = std::getenv(tsr::kStoreVariable);
  if (!world.ok() || store_dir == nullptr) {
    std::cerr << "gloo test rank: " << (world.ok() ? "TESSERA_GLOO_TEST_STORE is not set" : world.status().ToString())
              << "\n";
    return 1;
  }
  tsr::g_rank = world->rank;
  tsr::g_world_size = world->world_size;
  tsr::FileKeyValueStore store(store_dir);
  tsr::g_store = &store;
  testing::InitGoogleTest(&argc, argv);
  tsr::conformance::PrintOnlyFailuresUnlessRankZero(tsr::g_rank);
  return RUN_ALL_TESTS();
}
