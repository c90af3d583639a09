// Tests of the in-process collectives backend: the conformance suite (mismatched
// collectives included), then its own error reporting — a missing rank times out naming
// it, unmatched sends and receives time out, a pending receive is cancelled.
#include "runtime/collectives/in_process_collectives.h"

#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "tests/runtime/collectives/collectives_conformance.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

std::vector<std::unique_ptr<Collectives>> MakeRanks(int world_size, CollectivesOptions options) {
  std::vector<std::unique_ptr<Collectives>> ranks;
  absl::StatusOr<std::shared_ptr<InProcessCommunicator>> comm = InProcessCommunicator::Create(world_size, options);
  if (!comm.ok()) return ranks;
  for (int r = 0; r < world_size; ++r) ranks.push_back((*comm)->ForRank(r));
  return ranks;
}

using conformance::CollectivesConformanceTest;

INSTANTIATE_TEST_SUITE_P(InProcess, CollectivesConformanceTest,
                         testing::ValuesIn(conformance::ConformanceParams("in_process", MakeRanks)),
                         conformance::ConformanceParamName);

CollectivesOptions ShortTimeout() {
  CollectivesOptions options;
  options.timeout = absl::Milliseconds(200);
  return options;
}

// Runs fn(rank) on one thread per rank of `ranks`; the statuses by rank.
std::vector<absl::Status> OnEveryRank(std::vector<std::unique_ptr<Collectives>>& ranks,
                                      const std::function<absl::Status(Collectives&)>& fn) {
  std::vector<absl::Status> statuses(ranks.size());
  std::vector<std::thread> threads;
  for (size_t r = 0; r < ranks.size(); ++r) threads.emplace_back([&, r] { statuses[r] = fn(*ranks[r]); });
  for (std::thread& t : threads) t.join();
  return statuses;
}

TEST(InProcessCommunicatorTest, RejectsBadWorldSizeAndRank) {
  EXPECT_EQ(InProcessCommunicator::Create(0, {}).status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::shared_ptr<InProcessCommunicator>> comm = InProcessCommunicator::Create(2, {});
  ASSERT_TRUE(comm.ok()) << comm.status();
  EXPECT_EQ((*comm)->world_size(), 2);
  EXPECT_EQ((*comm)->ForRank(2), nullptr);
  EXPECT_EQ((*comm)->ForRank(-1), nullptr);
}

// Ranks 0 and 1 of 3 all-reduce; rank 2 never comes. Both fail within the timeout,
// naming the collective and rank 2; when rank 2 comes late it gets the error too.
TEST(InProcessCommunicatorTest, MissingRankTimesOutNamingIt) {
  std::vector<std::unique_ptr<Collectives>> ranks = MakeRanks(3, ShortTimeout());
  std::vector<Tensor> grads(3, Tensor());
  for (Tensor& g : grads) g = Tensor(DType::kF32, Shape({10}));
  std::vector<absl::Status> statuses(2);
  const absl::Time start = absl::Now();
  {
    std::thread r0([&] { statuses[0] = ranks[0]->AllReduce(grads[0], ReduceOp::kSum, "grad/w1").Wait(); });
    std::thread r1([&] { statuses[1] = ranks[1]->AllReduce(grads[1], ReduceOp::kSum, "grad/w1").Wait(); });
    r0.join();
    r1.join();
  }
  const absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, absl::Milliseconds(190));
  EXPECT_LT(took, absl::Seconds(5));
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(statuses[r].code(), absl::StatusCode::kDeadlineExceeded) << statuses[r];
    EXPECT_THAT(statuses[r].message(), HasSubstr("all_reduce 'grad/w1' (seq 0)"));
    EXPECT_THAT(statuses[r].message(), HasSubstr("rank 2 of 3 did not arrive"));
  }
  absl::Status late = ranks[2]->AllReduce(grads[2], ReduceOp::kSum, "grad/w1").Wait();
  EXPECT_EQ(late.code(), absl::StatusCode::kDeadlineExceeded) << late;
  EXPECT_THAT(late.message(), HasSubstr("all_reduce 'grad/w1' (seq 0)"));
}

TEST(InProcessCommunicatorTest, TimeoutNamesEveryMissingRank) {
  std::vector<std::unique_ptr<Collectives>> ranks = MakeRanks(4, ShortTimeout());
  absl::Status status = ranks[1]->Barrier("step").Wait();
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(status.message(), HasSubstr("barrier 'step' (seq 0): rank 1 waited 200ms but ranks 0, 2, 3 of 4"));
}

TEST(InProcessCommunicatorTest, UnmatchedSendAndRecvTimeOut) {
  std::vector<std::unique_ptr<Collectives>> ranks = MakeRanks(2, ShortTimeout());
  Tensor t(DType::kF32, Shape({4}));
  absl::Status recv = ranks[0]->Recv(t, 1, "x").Wait();
  EXPECT_EQ(recv.code(), absl::StatusCode::kDeadlineExceeded) << recv;
  EXPECT_THAT(recv.message(), HasSubstr("recv 'x' rank 1 -> rank 0 (seq 0): rank 1 did not post the matching send"));
  absl::Status send = ranks[0]->Send(t, 1, "y").Wait();
  EXPECT_EQ(send.code(), absl::StatusCode::kDeadlineExceeded) << send;
  EXPECT_THAT(send.message(), HasSubstr("send 'y' rank 0 -> rank 1 (seq 0): rank 1 did not post the matching recv"));
}

// A pending Recv completes (cancelled) when its communicator goes away.
TEST(InProcessCommunicatorTest, PendingRecvIsCancelledWithTheCommunicator) {
  std::vector<std::unique_ptr<Collectives>> ranks = MakeRanks(2, CollectivesOptions{});
  Tensor t(DType::kF32, Shape({4}));
  CollectiveHandle recv = ranks[0]->Recv(t, 1, "orphan");
  EXPECT_FALSE(recv.Done());
  ranks.clear();  // the last owners of the communicator
  absl::Status status = recv.Wait();
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_THAT(status.message(), HasSubstr("'orphan' rank 1 -> rank 0 (seq 0): the communicator was destroyed"));
}

}  // namespace
}  // namespace tsr

namespace tsr {
namespace {

// A collective issued while the rank is idle is held for the thread that waits for it;
// it must still run when that rank blocks elsewhere first. Rank 1 issues an all-reduce
// and then waits for a Recv that rank 0 sends only after the all-reduce finished:
// posting the Recv hands the held all-reduce to rank 1's worker. Likewise a handle
// that is only polled completes (the poll hands it over).
TEST(InProcessCommunicatorTest, HeldCollectiveRunsWhenTheRankBlocksOnPointToPointOrPolls) {
  std::vector<std::unique_ptr<Collectives>> ranks = MakeRanks(2, ShortTimeout());
  ASSERT_EQ(ranks.size(), 2u);
  std::vector<absl::Status> statuses = OnEveryRank(ranks, [](Collectives& c) -> absl::Status {
    const float v = static_cast<float>(c.rank() + 1);
    Tensor x = Tensor::FromVector<float>(Shape({4}), {v, v, v, v});
    Tensor token = Tensor::FromVector<float>(Shape({1}), {7.0f});
    if (c.rank() == 0) {
      if (absl::Status s = c.AllReduce(x, ReduceOp::kSum, "x").Wait(); !s.ok()) return s;
      if (absl::Status s = c.Send(token, 1, "token").Wait(); !s.ok()) return s;
    } else {
      CollectiveHandle reduce = c.AllReduce(x, ReduceOp::kSum, "x");
      if (absl::Status s = c.Recv(token, 0, "token").Wait(); !s.ok()) return s;
      if (absl::Status s = reduce.Wait(); !s.ok()) return s;
    }
    if (x.flat<float>()[0] != 3.0f) return absl::InternalError("wrong sum");
    CollectiveHandle polled = c.AllReduce(x, ReduceOp::kSum, "polled");
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!polled.Done()) {
      if (absl::Now() > deadline) return absl::DeadlineExceededError("a polled collective never completed");
      absl::SleepFor(absl::Microseconds(100));
    }
    return x.flat<float>()[0] == 6.0f ? absl::OkStatus() : absl::InternalError("wrong polled sum");
  });
  for (int r = 0; r < 2; ++r) EXPECT_TRUE(statuses[r].ok()) << "rank " << r << ": " << statuses[r];
}

}  // namespace
}  // namespace tsr
