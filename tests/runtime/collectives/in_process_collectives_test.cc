// Tests of the in-process collectives backend: the conformance suite, then its error
// reporting — a missing rank times out, mismatched collectives fail on every rank.
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

// Two barriers first, so the failing collective is seq 2.
std::vector<absl::Status> AfterTwoBarriers(std::vector<std::unique_ptr<Collectives>>& ranks,
                                           const std::function<CollectiveHandle(Collectives&)>& issue) {
  return OnEveryRank(ranks, [&](Collectives& c) {
    absl::Status status = c.Barrier("a").Wait();
    status.Update(c.Barrier("b").Wait());
    if (!status.ok()) return status;
    return issue(c).Wait();
  });
}

TEST(InProcessCommunicatorTest, ShapeMismatchNamesBothSidesOnEveryRank) {
  std::vector<std::unique_ptr<Collectives>> ranks = MakeRanks(2, ShortTimeout());
  std::vector<Tensor> t = {Tensor(DType::kF32, Shape({12})), Tensor(DType::kF32, Shape({10}))};
  std::vector<absl::Status> statuses =
      AfterTwoBarriers(ranks, [&](Collectives& c) { return c.AllReduce(t[c.rank()], ReduceOp::kSum, "grad/w1"); });
  for (const absl::Status& s : statuses) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_EQ(s.message(), "all_reduce 'grad/w1' (seq 2): rank 1 passed f32[10] but rank 0 passed f32[12]");
  }
}

TEST(InProcessCommunicatorTest, OpMismatchNamesBothSidesOnEveryRank) {
  std::vector<std::unique_ptr<Collectives>> ranks = MakeRanks(2, ShortTimeout());
  std::vector<Tensor> in = {Tensor(DType::kF32, Shape({10})), Tensor(DType::kF32, Shape({10}))};
  Tensor gathered(DType::kF32, Shape({20}));
  std::vector<absl::Status> statuses = AfterTwoBarriers(ranks, [&](Collectives& c) {
    return c.rank() == 0 ? c.AllReduce(in[0], ReduceOp::kSum, "grad/w1") : c.AllGather(in[1], gathered, "grad/w1");
  });
  for (const absl::Status& s : statuses) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_EQ(s.message(),
              "collective seq 2 differs across ranks: rank 1 issued all_gather 'grad/w1' f32[10] -> f32[20] but rank 0 "
              "issued all_reduce(sum) 'grad/w1' f32[10]");
  }
}

TEST(InProcessCommunicatorTest, NameReduceOpAndDTypeMismatchesFailOnEveryRank) {
  std::vector<std::unique_ptr<Collectives>> ranks = MakeRanks(3, ShortTimeout());
  struct Case {
    std::string rank2_name;
    ReduceOp rank2_op;
    DType rank2_dtype;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"grad/w2", ReduceOp::kSum, DType::kF32, "rank 2 issued all_reduce(sum) 'grad/w2' f32[4]"},
      {"grad/w1", ReduceOp::kMax, DType::kF32, "rank 2 issued all_reduce(max) 'grad/w1' f32[4]"},
      {"grad/w1", ReduceOp::kSum, DType::kI32, "rank 2 passed i32[4] but rank 0 passed f32[4]"},
  };
  for (const Case& c : cases) {
    std::vector<Tensor> t;
    for (int r = 0; r < 3; ++r) t.emplace_back(r == 2 ? c.rank2_dtype : DType::kF32, Shape({4}));
    std::vector<absl::Status> statuses = OnEveryRank(ranks, [&](Collectives& coll) {
      const bool odd = coll.rank() == 2;
      return coll.AllReduce(t[coll.rank()], odd ? c.rank2_op : ReduceOp::kSum, odd ? c.rank2_name : "grad/w1").Wait();
    });
    for (const absl::Status& s : statuses) {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
      EXPECT_THAT(s.message(), HasSubstr(c.expected));
    }
  }
}

TEST(InProcessCommunicatorTest, WrongOutputShapeAndUnreducibleDTypeFailOnEveryRank) {
  std::vector<std::unique_ptr<Collectives>> ranks = MakeRanks(2, ShortTimeout());
  Tensor in(DType::kF32, Shape({3, 2}));
  std::vector<Tensor> out = {Tensor(DType::kF32, Shape({6, 2})), Tensor(DType::kF32, Shape({5, 2}))};
  for (const absl::Status& s :
       OnEveryRank(ranks, [&](Collectives& c) { return c.AllGather(in, out[c.rank()], "acts").Wait(); })) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(),
                HasSubstr("all_gather 'acts' (seq 0): rank 1's output is f32[5,2] but f32[6,2] is needed"));
  }
  std::vector<Tensor> halves = {Tensor(DType::kF16, Shape({4})), Tensor(DType::kF16, Shape({4}))};
  for (const absl::Status& s :
       OnEveryRank(ranks, [&](Collectives& c) { return c.AllReduce(halves[c.rank()], ReduceOp::kSum, "h").Wait(); })) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("all_reduce 'h' (seq 1): dtype f16 cannot be reduced"));
  }
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

TEST(InProcessCommunicatorTest, SendRecvMismatchAndBadPeerFail) {
  std::vector<std::unique_ptr<Collectives>> ranks = MakeRanks(2, ShortTimeout());
  Tensor a(DType::kF32, Shape({4}));
  Tensor b(DType::kF32, Shape({5}));
  CollectiveHandle send = ranks[0]->Send(a, 1, "x");
  absl::Status recv = ranks[1]->Recv(b, 0, "x").Wait();
  EXPECT_EQ(recv.code(), absl::StatusCode::kInvalidArgument) << recv;
  EXPECT_EQ(recv.message(),
            "send/recv rank 0 -> rank 1 (seq 0): rank 0 sends 'x' f32[4] but rank 1 receives 'x' f32[5]");
  EXPECT_EQ(send.Wait(), recv);
  EXPECT_EQ(ranks[0]->Send(a, 2, "x").Wait().code(), absl::StatusCode::kInvalidArgument);
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
