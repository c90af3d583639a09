// Tests of the MPI collectives backend, one process per rank: run under
// `mpirun -np N` (CTest runs it at N = 2, 3 and 4 with the ranks' shared-memory board, at
// 2 and 3 with MPI messages instead -- TESSERA_MPI_SHARED_MEMORY=0 -- and at 2 with MPI
// calls serialized: TESSERA_MPI_SERIALIZED=1). The conformance suite at the job's world size (mismatched
// collectives included), then MPI's own error reporting: a missing rank times out on
// every rank that came, naming it, and poisons the communicator; eager and large
// all-reduces disagreeing; unmatched sends and receives; a rank stalling in the data
// movement. Every test gets a fresh communicator
// (MPI_Comm_dup of the world), and the ranks meet at an MPI_Barrier after each test that
// makes them act differently, so they stay in step.
#include "runtime/collectives/mpi/mpi_collectives.h"

#include <algorithm>
#include <cstdlib>
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
#include "runtime/collectives/mpi/mpi_exchange.h"
#include "runtime/collectives/mpi/mpi_shared_memory_exchange.h"
#include "tests/runtime/collectives/collectives_conformance.h"
#include "tests/runtime/collectives/rank_test_output.h"

namespace tsr {
namespace {

using ::testing::AnyOf;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;

std::vector<std::unique_ptr<Collectives>> MakeRank(int world_size, CollectivesOptions options) {
  std::vector<std::unique_ptr<Collectives>> ranks;
  absl::StatusOr<std::unique_ptr<MpiCollectives>> comm = MpiCollectives::Create(options);
  if (!comm.ok()) {
    ADD_FAILURE() << comm.status();
    return ranks;
  }
  ranks.push_back(*std::move(comm));
  return ranks;
}

// Whether the job asked for MPI messages instead of the shared-memory board.
bool MessagesAsked() {
  const char* value = std::getenv("TESSERA_MPI_SHARED_MEMORY");
  return value != nullptr && std::string(value) == "0";
}

int JobWorldSize() {
  absl::StatusOr<MpiProcessInfo> mpi = InitializeMpi();
  return mpi.ok() ? mpi->world_size : 1;
}

using conformance::CollectivesConformanceTest;

INSTANTIATE_TEST_SUITE_P(Mpi, CollectivesConformanceTest,
                         testing::ValuesIn(conformance::ConformanceParams("mpi", MakeRank, {JobWorldSize()})),
                         conformance::ConformanceParamName);

// Each test: this process's rank of a fresh communicator. Its timeout is generous (ranks
// of a loaded machine — the sanitizer build, other tests beside — may arrive seconds
// apart); the tests of timeouts use MpiTimeoutTest's short one.
class MpiCollectivesTest : public testing::Test {
 protected:
  virtual absl::Duration Timeout() const { return absl::Seconds(60); }

  void SetUp() override {
    CollectivesOptions options;
    options.timeout = Timeout();
    absl::StatusOr<std::unique_ptr<MpiCollectives>> comm = MpiCollectives::Create(options);
    ASSERT_TRUE(comm.ok()) << comm.status();
    comm_ = *std::move(comm);
    rank_ = comm_->rank();
    world_ = comm_->world_size();
  }
  // Ranks that acted differently meet here before the next test.
  void TearDown() override { MPI_Barrier(MPI_COMM_WORLD); }

  // Two barriers first, so that the collective `issue` makes is seq 2.
  absl::Status AfterTwoBarriers(const std::function<CollectiveHandle(Collectives&)>& issue) {
    absl::Status status = comm_->Barrier("a").Wait();
    status.Update(comm_->Barrier("b").Wait());
    if (!status.ok()) return status;
    return issue(*comm_).Wait();
  }

  std::unique_ptr<MpiCollectives> comm_;
  int rank_ = 0;
  int world_ = 1;
};

class MpiTimeoutTest : public MpiCollectivesTest {
 protected:
  absl::Duration Timeout() const override { return absl::Seconds(4); }
};

TEST_F(MpiCollectivesTest, CreateReportsRankAndWorld) {
  absl::StatusOr<MpiProcessInfo> mpi = InitializeMpi();
  ASSERT_TRUE(mpi.ok()) << mpi.status();
  EXPECT_EQ(rank_, mpi->world_rank);
  EXPECT_EQ(world_, mpi->world_size);
  EXPECT_FALSE(comm_->poisoned());
  // Every rank of a test job runs on this machine: the ranks share a board unless told not to.
  EXPECT_EQ(comm_->shared_memory(), !MessagesAsked());
  // MPI cannot be finalized while a communicator exists.
  EXPECT_EQ(FinalizeMpi().code(), absl::StatusCode::kFailedPrecondition);
}

// TESSERA_MPI_SHARED_MEMORY takes 0 or 1; anything else is refused on every rank (none is
// left waiting in a collective call), and the next communicator is fine.
TEST_F(MpiCollectivesTest, BadSharedMemorySettingIsRefused) {
  const char* before = std::getenv("TESSERA_MPI_SHARED_MEMORY");
  const std::string saved = before == nullptr ? "" : before;
  ASSERT_EQ(setenv("TESSERA_MPI_SHARED_MEMORY", "yes", 1), 0);
  absl::StatusOr<std::unique_ptr<MpiCollectives>> refused = MpiCollectives::Create({});
  if (before == nullptr) {
    unsetenv("TESSERA_MPI_SHARED_MEMORY");
  } else {
    setenv("TESSERA_MPI_SHARED_MEMORY", saved.c_str(), 1);
  }
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("TESSERA_MPI_SHARED_MEMORY must be 0 (MPI messages) or 1"));
  EXPECT_THAT(refused.status().message(), HasSubstr("not 'yes'"));
  absl::StatusOr<std::unique_ptr<MpiCollectives>> next = MpiCollectives::Create({});
  ASSERT_TRUE(next.ok()) << next.status();
  Tensor t(DType::kF32, Shape({3}));
  for (int i = 0; i < 3; ++i) t.data<float>()[i] = static_cast<float>(rank_ + i);
  ASSERT_TRUE((*next)->AllReduce(t, ReduceOp::kSum, "after").Wait().ok());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(t.data<float>()[i], world_ * (world_ - 1) / 2.0f + world_ * i);
}

// The last rank skips an all-reduce. The others fail after the timeout, naming it; when
// it comes late it fails at once (the others told it they gave up), and every rank's
// communicator is poisoned: the next collective fails at once.
TEST_F(MpiTimeoutTest, MissingRankTimesOutNamingIt) {
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
  MPI_Barrier(MPI_COMM_WORLD);  // the late rank comes after the others gave up
  if (rank_ == late) {
    const absl::Time start = absl::Now();
    absl::Status status = comm_->AllReduce(grad, ReduceOp::kSum, "grad/w1").Wait();
    EXPECT_LT(absl::Now() - start, absl::Seconds(3)) << "the late rank should fail at once";
    EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
    EXPECT_THAT(status.message(), HasSubstr("all_reduce 'grad/w1' (seq 0): rank"));
    EXPECT_THAT(status.message(), HasSubstr(absl::StrCat("gave up waiting (timeout 4s) before rank ", late)));
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
TEST_F(MpiTimeoutTest, TimeoutNamesEveryMissingRank) {
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

// A small all-reduce goes eagerly (its data behind its descriptor), a large one through
// MPI's all-reduce: when ranks disagree about which, every rank still takes every message
// sent to it, fails the same way, and the communicator stays usable.
TEST_F(MpiCollectivesTest, EagerAgainstLargeAllReduceMismatchLeavesCommunicatorUsable) {
  if (world_ < 2) GTEST_SKIP() << "needs two ranks";
  Tensor t(DType::kF32, Shape({rank_ == 1 ? 10 : int64_t{1} << 20}));
  absl::Status s = AfterTwoBarriers([&](Collectives& c) { return c.AllReduce(t, ReduceOp::kSum, "grad/w1"); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(s.message(), "all_reduce 'grad/w1' (seq 2): rank 1 passed f32[10] but rank 0 passed f32[1048576]");
  EXPECT_FALSE(comm_->poisoned());
  Tensor small(DType::kF32, Shape({5}));
  for (int i = 0; i < 5; ++i) small.data<float>()[i] = static_cast<float>(rank_ + i);
  ASSERT_TRUE(comm_->AllReduce(small, ReduceOp::kSum, "after").Wait().ok());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(small.data<float>()[i], world_ * (world_ - 1) / 2.0f + world_ * i);
}

// A rank whose eager tensor has a rest of one message posts the receive for every other
// rank's rest before their descriptors come, cut as its own. When a rank's tensor is cut
// otherwise -- no rest, a rest of several frames, one large rest, not eager at all, or a
// descriptor of another length -- every rank still takes exactly the messages sent to
// it, fails alike, and the next collective (behind nothing left in MPI) is right; with
// the roles swapped as well.
TEST_F(MpiCollectivesTest, EagerRestsCutDifferentlyAcrossRanksFailAlike) {
  if (world_ < 2) GTEST_SKIP() << "needs two ranks";
  const int64_t one_rest = 1024;  // 4 KiB: a first frame and a rest of 256 bytes
  struct Case {
    int64_t other;  // rank 1's element count (the others pass one_rest)
    std::string other_name;
  };
  const std::vector<Case> cases = {
      {10, "g"},                          // fits in the first frame
      {5000, "g"},                        // a rest of several frames
      {30000, "g"},                       // a rest above kFramedRestBytes, one large message
      {int64_t{1} << 20, "g"},            // not eager: MPI's all-reduce
      {one_rest, std::string(900, 'n')},  // the same tensor behind a longer descriptor
  };
  int64_t seq = 0;
  for (bool swapped : {false, true}) {
    for (const Case& c : cases) {
      const bool odd = (rank_ == 1) != swapped;
      const int64_t n = odd ? c.other : one_rest;
      const std::string name = odd ? c.other_name : "g";
      SCOPED_TRACE(absl::StrCat("rank 1 passes ", swapped ? one_rest : c.other, ", the others ",
                                swapped ? c.other : one_rest, " (name of ", c.other_name.size(), ")"));
      Tensor t(DType::kF32, Shape({n}));
      for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = 1.0f;
      absl::Status s = comm_->AllReduce(t, ReduceOp::kSum, name).Wait();
      ++seq;
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
      EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("seq ", seq - 1)));
      EXPECT_FALSE(comm_->poisoned());
      Tensor next(DType::kF32, Shape({one_rest}));
      for (int64_t i = 0; i < one_rest; ++i) next.data<float>()[i] = static_cast<float>(rank_ + i);
      ASSERT_TRUE(comm_->AllReduce(next, ReduceOp::kSum, "g").Wait().ok());
      ++seq;
      for (int64_t i = 0; i < one_rest; ++i) {
        ASSERT_EQ(next.data<float>()[i], world_ * (world_ - 1) / 2.0f + world_ * static_cast<float>(i)) << i;
      }
    }
  }
}

// The eager all-reduce reduces in rank order, ((x0 op x1) op x2) ..., on every rank: the
// same bits everywhere, even where float addition's order matters, for every op (mean
// divides once, at the end), up to the largest eager size.
TEST_F(MpiCollectivesTest, EagerAllReduceReducesInRankOrderOnEveryRank) {
  const auto value = [](int rank, int64_t i) {
    return rank % 2 == 0 ? 1e8f * static_cast<float>(i % 1000 + 1) : 1.0f + static_cast<float>(i % 777);
  };
  const int64_t largest = static_cast<int64_t>(mpi_internal::kEagerAllReduceBytes / 4 / std::max(1, world_ - 1));
  for (int64_t n : {int64_t{64}, largest}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMean, ReduceOp::kMax, ReduceOp::kMin}) {
      SCOPED_TRACE(absl::StrCat("n=", n, " op=", ReduceOpName(op)));
      Tensor t(DType::kF32, Shape({n}));
      for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = value(rank_, i);
      ASSERT_TRUE(comm_->AllReduce(t, op, "ordered").Wait().ok());
      for (int64_t i = 0; i < n; ++i) {
        float expected = value(0, i);
        for (int q = 1; q < world_; ++q) {
          const float v = value(q, i);
          expected = op == ReduceOp::kMax   ? std::max(expected, v)
                     : op == ReduceOp::kMin ? std::min(expected, v)
                                            : expected + v;
        }
        if (op == ReduceOp::kMean) expected /= static_cast<float>(world_);
        ASSERT_EQ(t.data<float>()[i], expected) << "element " << i;
      }
    }
  }
}

// An eager all-reduce nobody waits for is finished by the communicator's thread when a
// collective queued behind it needs it out of the way; Done() alone also moves it on.
TEST_F(MpiCollectivesTest, UnwaitedEagerAllReduceFinishesBehindQueuedOnes) {
  Tensor small(DType::kF32, Shape({3}));
  Tensor large(DType::kF32, Shape({int64_t{1} << 20}));
  small.data<float>()[0] = 1.0f;
  large.data<float>()[7] = 2.0f;
  CollectiveHandle first = comm_->AllReduce(small, ReduceOp::kSum, "small");
  ASSERT_TRUE(comm_->AllReduce(large, ReduceOp::kSum, "large").Wait().ok());
  EXPECT_TRUE(first.Done());
  EXPECT_TRUE(first.Wait().ok());
  EXPECT_EQ(small.data<float>()[0], static_cast<float>(world_));
  EXPECT_EQ(large.data<float>()[7], 2.0f * world_);

  CollectiveHandle polled = comm_->AllReduce(small, ReduceOp::kMax, "polled");
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (!polled.Done() && absl::Now() < deadline) {
  }
  ASSERT_TRUE(polled.Done()) << "Done() alone never finished an eager all-reduce";
  EXPECT_TRUE(polled.Wait().ok());
  EXPECT_EQ(small.data<float>()[0], static_cast<float>(world_));
}

// An eager all-reduce travels in frames of at most kFrameBytes -- the first holds the
// descriptor and the start of the tensor -- and its rest, beyond kFramedRestBytes, in one
// message. Every cut (a tensor ending in the first frame, exactly at a frame's end, one
// byte past it, rests on both sides of kFramedRestBytes, the largest eager size) and a
// name long enough to fill most of the first frame arrive whole; so does the same size
// through MPI's all-reduce just above the eager limit.
TEST_F(MpiCollectivesTest, EagerFramesCarryEveryCutOfTheTensor) {
  const std::string long_name(900, 'n');
  const int64_t eager_floats = static_cast<int64_t>(mpi_internal::kEagerAllReduceBytes / 4 / (world_ - 1));
  // Element counts, or (negative) byte counts: rests of kFramedRestBytes +- a first
  // frame's share, in either dtype.
  std::vector<int64_t> sizes = {
      1, 960, 961, 992, 1984, 1985, eager_floats - 1, eager_floats, eager_floats + 1, eager_floats + 999};
  for (size_t bytes = mpi_internal::kFramedRestBytes + 2560; bytes <= mpi_internal::kFramedRestBytes + 4480;
       bytes += 320) {
    sizes.push_back(-static_cast<int64_t>(bytes));
  }
  for (const std::string& name : {std::string("g"), long_name}) {
    for (int64_t size : sizes) {
      for (DType dtype : {DType::kF32, DType::kF64}) {
        const int64_t n = size > 0 ? size : -size / static_cast<int64_t>(DTypeSize(dtype));
        SCOPED_TRACE(absl::StrCat("n=", n, " dtype=", DTypeName(dtype), " name of ", name.size()));
        Tensor t(dtype, Shape({n}));
        for (int64_t i = 0; i < n; ++i) {
          const double v = (rank_ + 1) * 1000.0 + static_cast<double>(i % 977);
          if (dtype == DType::kF32)
            t.data<float>()[i] = static_cast<float>(v);
          else
            t.data<double>()[i] = v;
        }
        ASSERT_TRUE(comm_->AllReduce(t, ReduceOp::kSum, name).Wait().ok());
        for (int64_t i = 0; i < n; ++i) {
          const double expected = 1000.0 * world_ * (world_ + 1) / 2 + world_ * static_cast<double>(i % 977);
          const double got = dtype == DType::kF32 ? t.data<float>()[i] : t.data<double>()[i];
          ASSERT_EQ(got, expected) << "element " << i;
        }
      }
    }
  }
}

// Rank 0 posts a receive and a send that rank 1 never matches; both time out alone and
// leave the communicator usable.
TEST_F(MpiTimeoutTest, UnmatchedSendAndRecvTimeOut) {
  if (world_ < 2) GTEST_SKIP() << "needs two ranks";
  if (rank_ == 0) {
    Tensor t(DType::kF32, Shape({4}));
    absl::Status recv = comm_->Recv(t, 1, "x").Wait();
    EXPECT_EQ(recv.code(), absl::StatusCode::kDeadlineExceeded) << recv;
    EXPECT_THAT(recv.message(),
                HasSubstr("recv 'x' rank 1 -> rank 0 (seq 0): rank 1 did not post the matching send within 4s"));
    absl::Status send = comm_->Send(t, 1, "y").Wait();
    EXPECT_EQ(send.code(), absl::StatusCode::kDeadlineExceeded) << send;
    EXPECT_THAT(send.message(),
                HasSubstr("send 'y' rank 0 -> rank 1 (seq 0): rank 1 did not post the matching recv within 4s"));
  }
  MPI_Barrier(MPI_COMM_WORLD);  // rank 0 spent two timeouts on its own
  EXPECT_TRUE(comm_->Barrier("after").Wait().ok());
  EXPECT_FALSE(comm_->poisoned());
}

// A pending Recv completes (cancelled) when its communicator goes away.
TEST_F(MpiCollectivesTest, PendingRecvIsCancelledWithTheCommunicator) {
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

// Large tensors go straight through (a quarter of a GiB of f64, summed in place), with
// the default timeout: at 4 ranks on 2 cores this takes seconds.
TEST(MpiCollectivesLargeTest, AllReduceInPlace) {
  absl::StatusOr<std::unique_ptr<MpiCollectives>> comm = MpiCollectives::Create(CollectivesOptions{});
  ASSERT_TRUE(comm.ok()) << comm.status();
  const int rank_ = (*comm)->rank();
  const int world_ = (*comm)->world_size();
  Tensor t(DType::kF64, Shape({int64_t{32} << 20}));
  for (int64_t i = 0; i < t.num_elements(); i += 4099) t.data<double>()[i] = rank_ + 1.0 + i;
  void* buffer = t.raw_data();
  ASSERT_TRUE((*comm)->AllReduce(t, ReduceOp::kSum, "big").Wait().ok());
  EXPECT_EQ(t.raw_data(), buffer);
  const double ranks_sum = world_ * (world_ + 1) / 2.0;
  for (int64_t i = 0; i < t.num_elements(); i += 4099) {
    ASSERT_EQ(t.data<double>()[i], ranks_sum + world_ * static_cast<double>(i)) << "element " << i;
  }
  EXPECT_EQ(t.data<double>()[1], 0.0);
}

// A rank that stalls in the data movement of a collective, after every rank's descriptor
// arrived (as a rank that hangs or dies inside MPI's broadcast would; a large all-reduce
// on the shared-memory board is the last test's). The last rank plays the protocol by
// hand: it duplicates the world as MpiCollectives::Create does, joins the descriptor
// exchange of collective 0 with the same descriptor, then holds back from the data
// movement for a while before it comes.
class MpiDataMovementStallTest : public testing::Test {
 public:
  static constexpr absl::Duration kTimeout = absl::Seconds(2);
  // How long the silent rank holds back: well past the others' timeout.
  static constexpr absl::Duration kHoldBack = absl::Seconds(6);

 protected:
  void SetUp() override {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &world_);
    silent_ = world_ - 1;
  }
  void TearDown() override { MPI_Barrier(MPI_COMM_WORLD); }

  // The silent rank's side of collective `name` of `grad` (seq 0 of a fresh communicator):
  // a broadcast from it (every other rank waits for its bytes) through MPI_Bcast or (with
  // `all_reduce`) the board's all-reduce.
  void StallThenJoin(Tensor& grad, absl::string_view name, bool all_reduce = false) {
    MPI_Comm collectives = MPI_COMM_NULL;
    MPI_Comm p2p = MPI_COMM_NULL;
    ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &collectives), MPI_SUCCESS);
    ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &p2p), MPI_SUCCESS);
    int* tag_ub = nullptr;
    int found = 0;
    MPI_Comm_get_attr(collectives, MPI_TAG_UB, &tag_ub, &found);
    ASSERT_TRUE(found && tag_ub != nullptr);
    {
      // The exchange the other ranks' communicators took (a collective call, as in Create).
      absl::StatusOr<std::unique_ptr<mpi_internal::CollectiveExchange>> made =
          mpi_internal::MakeExchange(collectives, rank_, world_, /*notice_tag=*/*tag_ub);
      ASSERT_TRUE(made.ok()) << made.status();
      mpi_internal::CollectiveExchange& exchange = **made;
      const CollectiveDescriptor mine =
          all_reduce
              ? MakeDescriptor(CollectiveKind::kAllReduce, name, grad.type(), {}, ReduceOp::kSum)
              : MakeDescriptor(CollectiveKind::kBroadcast, name, grad.type(), {}, ReduceOp::kSum, /*root=*/rank_);
      ASSERT_EQ(mpi_internal::EagerPayloadBytes(mine, world_), 0u) << "the tensor should not go eagerly";
      exchange.Start(/*tag=*/0, /*seq=*/0, mine, grad, kTimeout);
      exchange.Post();
      std::vector<mpi_internal::ParkedRequests> parked;
      absl::StatusOr<bool> done = exchange.Progress(/*wait=*/true, &parked);
      ASSERT_TRUE(done.ok()) << done.status();
      ASSERT_TRUE(*done);
      absl::SleepFor(kHoldBack);
      if (all_reduce) {
        // The others gave up meanwhile: the board says so at once.
        const absl::Time start = absl::Now();
        absl::Status moved = exchange.MoveAllReduce(grad, ReduceOp::kSum);
        EXPECT_LT(absl::Now() - start, absl::Seconds(1));
        EXPECT_EQ(moved.code(), absl::StatusCode::kDeadlineExceeded) << moved;
        // (The first rank to time out says so on the board; the others see it and fail.)
        EXPECT_THAT(std::string(moved.message()),
                    ContainsRegex(absl::StrCat("all_reduce 'grad/w1' \\(seq 0\\): rank [0-9]+ of ", world_,
                                               " gave up \\(on seq 0\\) while rank ", rank_,
                                               " moved this all-reduce's data through shared memory")));
      } else {
        ASSERT_EQ(MPI_Bcast(grad.raw_data(), static_cast<int>(grad.num_bytes()), MPI_BYTE, rank_, collectives),
                  MPI_SUCCESS);
      }
      exchange.End();
      exchange.Close();
    }
    MPI_Comm_free(&p2p);
    MPI_Comm_free(&collectives);
  }

  int rank_ = 0;
  int world_ = 1;
  int silent_ = 0;
};

// The others' side: `wait_for` issues broadcast 'w1' as seq 0 (and perhaps more
// collectives) and waits for it in its own way, returning its status. At
// the timeout the watchdog fails it, naming the collective and the waiting rank, and
// poisons the communicator; the waiting thread sees that at once, not when MPI returns
// (a rank that died never comes). The communicator then shuts down cleanly once the
// silent rank has come.
void ExpectStallReported(int rank, const std::function<absl::Status(Collectives&)>& wait_for) {
  CollectivesOptions options;
  options.timeout = MpiDataMovementStallTest::kTimeout;
  absl::StatusOr<std::unique_ptr<MpiCollectives>> comm = MpiCollectives::Create(options);
  ASSERT_TRUE(comm.ok()) << comm.status();
  const absl::Time start = absl::Now();
  absl::Status status = wait_for(**comm);
  const absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, MpiDataMovementStallTest::kTimeout - absl::Milliseconds(100));
  EXPECT_LT(took, MpiDataMovementStallTest::kHoldBack - absl::Seconds(2)) << "the wait lasted until MPI returned";
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(status.message(),
              HasSubstr(absl::StrCat("broadcast 'w1' (seq 0): rank ", rank,
                                     " waited 2s for the data movement after every rank had arrived")));
  EXPECT_TRUE((*comm)->poisoned());
  const absl::Time before = absl::Now();
  absl::Status after = (*comm)->Barrier("after").Wait();
  EXPECT_LT(absl::Now() - before, absl::Seconds(1));
  EXPECT_EQ(after.code(), absl::StatusCode::kFailedPrecondition) << after;
  EXPECT_THAT(after.message(), HasSubstr("the communicator is unusable since broadcast 'w1' (seq 0)"));
  // The silent rank comes about kHoldBack after the start; the communicator's shutdown
  // waits a timeout at most for MPI's broadcast to return, which it then does. (One
  // left behind would fail the job at MPI_Finalize, in main.)
  absl::SleepFor(MpiDataMovementStallTest::kHoldBack - (absl::Now() - start));
  comm->reset();
}

// The broadcast is polled (Done): the poll hands it to the communicator's thread, which
// sits in MPI's broadcast; later polls and the Wait return at once once it failed.
TEST_F(MpiDataMovementStallTest, PolledCollectiveFailsAtTheTimeoutAndPoisons) {
  if (world_ < 2) GTEST_SKIP() << "needs two ranks";
  Tensor grad(DType::kF32, Shape({int64_t{1} << 18}));
  if (rank_ == silent_) {
    StallThenJoin(grad, "w1");
    return;
  }
  ExpectStallReported(rank_, [&](Collectives& comm) {
    CollectiveHandle handle = comm.Broadcast(grad, /*root=*/silent_, "w1");
    while (!handle.Done()) absl::SleepFor(absl::Milliseconds(5));
    return handle.Wait();
  });
}

// Collectives issued in a row, as gradient all-reduces overlapping the backward pass are:
// the second one queued makes the communicator's thread take the first over; the wait for
// the first fails at the timeout (it used to wait until MPI returned), the second fails
// as poisoned.
TEST_F(MpiDataMovementStallTest, WaitBehindQueuedCollectiveFailsAtTheTimeout) {
  if (world_ < 2) GTEST_SKIP() << "needs two ranks";
  Tensor grad(DType::kF32, Shape({int64_t{1} << 18}));
  if (rank_ == silent_) {
    StallThenJoin(grad, "w1");
    return;
  }
  Tensor bias(DType::kF32, Shape({16}));
  absl::Status second;
  ExpectStallReported(rank_, [&](Collectives& comm) {
    CollectiveHandle first = comm.Broadcast(grad, /*root=*/silent_, "w1");
    CollectiveHandle queued = comm.AllReduce(bias, ReduceOp::kSum, "grad/b1");
    // The worker takes the first over at once; a wait that came before it would move the
    // first itself, inside MPI, and the watchdog would end the job (the test above).
    absl::SleepFor(absl::Milliseconds(300));
    absl::Status status = first.Wait();
    second = queued.Wait();
    return status;
  });
  EXPECT_EQ(second.code(), absl::StatusCode::kFailedPrecondition) << second;
  EXPECT_THAT(second.message(), HasSubstr("all_reduce 'grad/b1' (seq 1): the communicator is unusable since "
                                          "broadcast 'w1' (seq 0)"));
}

// A large all-reduce on the shared-memory board whose data movement a rank never joins
// (as a rank that hangs or dies in it would): the others fail at the timeout, naming the
// chunk, the step and the rank they waited for (or that a rank gave up, which then fails
// the others at once), and poison the communicator; when the rank comes, it fails at once
// (the others said on the board that they gave up).
TEST_F(MpiDataMovementStallTest, BoardAllReduceStallFailsAtTheTimeout) {
  if (world_ < 2) GTEST_SKIP() << "needs two ranks";
  if (MessagesAsked()) GTEST_SKIP() << "the ranks exchange MPI messages (TESSERA_MPI_SHARED_MEMORY=0)";
  Tensor grad(DType::kF32, Shape({int64_t{1} << 18}));
  if (rank_ == silent_) {
    StallThenJoin(grad, "grad/w1", /*all_reduce=*/true);
    return;
  }
  CollectivesOptions options;
  options.timeout = kTimeout;
  absl::StatusOr<std::unique_ptr<MpiCollectives>> comm = MpiCollectives::Create(options);
  ASSERT_TRUE(comm.ok()) << comm.status();
  ASSERT_TRUE((*comm)->shared_memory());
  const absl::Time start = absl::Now();
  absl::Status status = (*comm)->AllReduce(grad, ReduceOp::kSum, "grad/w1").Wait();
  const absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, kTimeout - absl::Milliseconds(100));
  EXPECT_LT(took, kHoldBack - absl::Seconds(2));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  // The first rank to time out names the one it waited for; the others may see that rank
  // give up first.
  EXPECT_THAT(std::string(status.message()),
              AnyOf(HasSubstr(absl::StrCat("all_reduce 'grad/w1' (seq 0): rank ", rank_,
                                           " waited 2s in the data movement (chunk 0) for rank ", silent_, " of ",
                                           world_, " to put in its chunk (a rank may have died)")),
                    ContainsRegex(absl::StrCat("all_reduce 'grad/w1' \\(seq 0\\): rank [0-9]+ of ", world_,
                                               " gave up \\(on seq 0\\) while rank ", rank_,
                                               " moved this all-reduce's data through shared memory"))));
  EXPECT_TRUE((*comm)->poisoned());
  absl::Status after = (*comm)->Barrier("after").Wait();
  EXPECT_EQ(after.code(), absl::StatusCode::kFailedPrecondition) << after;
}

// Run alone, by the tests ..._stall_aborts (tests/CMakeLists.txt, tests/BUILD.bazel): the
// others wait for their broadcast at once, so the thread inside MPI's broadcast is the one
// that waits and would never see its handle fail. At the timeout the watchdog ends the
// job (MPI_Abort), saying which collective and which rank, as PyTorch's NCCL watchdog
// does; those tests expect that message and a failed job.
TEST_F(MpiDataMovementStallTest, DISABLED_WaiterInsideMpiEndsTheJob) {
  if (world_ < 2) GTEST_SKIP() << "needs two ranks";
  Tensor grad(DType::kF32, Shape({int64_t{1} << 18}));
  if (rank_ == silent_) {
    StallThenJoin(grad, "w1");
    ADD_FAILURE() << "the job should have ended while this rank held back";
    return;
  }
  CollectivesOptions options;
  options.timeout = kTimeout;
  absl::StatusOr<std::unique_ptr<MpiCollectives>> comm = MpiCollectives::Create(options);
  ASSERT_TRUE(comm.ok()) << comm.status();
  absl::Status status = (*comm)->Broadcast(grad, /*root=*/silent_, "w1").Wait();
  ADD_FAILURE() << "the wait returned: " << status;
}

}  // namespace
}  // namespace tsr

int main(int argc, char** argv) {
  const bool serialized = std::getenv("TESSERA_MPI_SERIALIZED") != nullptr;
  absl::StatusOr<tsr::MpiProcessInfo> mpi =
      tsr::InitializeMpi(serialized ? tsr::MpiThreading::kSerialized : tsr::MpiThreading::kMultiple);
  if (!mpi.ok()) {
    std::cerr << mpi.status() << "\n";
    return 1;
  }
  testing::InitGoogleTest(&argc, argv);
  tsr::conformance::PrintOnlyFailuresUnlessRankZero(mpi->world_rank);
  if (mpi->world_rank == 0) {
    std::cout << "[ mpi      ] " << mpi->world_size << " ranks, MPI calls "
              << (mpi->thread_multiple ? "concurrent (MPI_THREAD_MULTIPLE)" : "serialized") << "\n";
  }
  const int result = RUN_ALL_TESTS();
  const absl::Status finalized = tsr::FinalizeMpi();
  if (!finalized.ok()) std::cerr << finalized << "\n";
  return result != 0 || !finalized.ok() ? 1 : 0;
}
