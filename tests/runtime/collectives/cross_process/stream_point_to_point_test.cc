// Tests of StreamPointToPoint with its ranks as objects of this process over real
// loopback connections: many transfers of mixed sizes both ways between two ranks,
// posted in any order, arrive intact and in order; a rank that closes fails its
// peer's pending transfers (Unavailable) and poisons through the hook; an unmatched
// transfer times out naming the peer.
#include "runtime/collectives/cross_process/stream_point_to_point.h"

#include <unistd.h>

#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/collectives/cross_process/loopback_mesh.h"
#include "runtime/launch/file_key_value_store.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

// A rank's poison hook: the first failure, as a communicator keeps it.
struct Health {
  absl::Mutex mu;
  std::string reason;
  StreamPointToPoint::Hooks Hooks() {
    return {.check = [this](absl::string_view) -> absl::Status { return absl::OkStatus(); },
            .poison =
                [this](absl::Status failure) {
                  absl::MutexLock lock(&mu);
                  if (reason.empty()) reason = std::string(failure.message());
                  return failure;
                }};
  }
};

// Two ranks' transports, connected through a fresh store.
std::vector<std::unique_ptr<StreamPointToPoint>> ConnectPair(absl::Duration timeout, Health* health) {
  std::string dir = testing::TempDir() + "/stream_p2p_XXXXXX";
  EXPECT_NE(::mkdtemp(dir.data()), nullptr);
  FileKeyValueStore store(dir);
  std::vector<std::vector<int>> fds(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      absl::StatusOr<std::vector<int>> connected = ConnectLoopbackMesh(r, 2, store, "p2p", absl::Seconds(20));
      ASSERT_TRUE(connected.ok()) << connected.status();
      fds[r] = *connected;
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<std::unique_ptr<StreamPointToPoint>> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.push_back(std::make_unique<StreamPointToPoint>(r, fds[r], timeout, health[r].Hooks()));
  }
  return ranks;
}

Tensor Filled(int64_t n, float base) {
  Tensor t(DType::kF32, Shape({n}));
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = base + static_cast<float>(i);
  return t;
}

TEST(StreamPointToPointTest, ManyTransfersBothWaysArriveInOrder) {
  Health health[2];
  std::vector<std::unique_ptr<StreamPointToPoint>> ranks = ConnectPair(absl::Seconds(30), health);
  const unsigned seed = 7;
  std::mt19937 rng(seed);
  constexpr int kTransfers = 30;
  std::vector<int64_t> sizes(kTransfers);
  for (int64_t& n : sizes) n = rng() % 3 == 0 ? (int64_t{1} << 20) + rng() % 1000 : rng() % 300;
  // Rank r sends transfer i to the other with values from 1000 * i + r; each rank posts
  // its receives first for even i, its sends first for odd ones.
  std::vector<std::vector<Tensor>> received(2);
  std::vector<std::vector<CollectiveHandle>> handles(2);
  for (int i = 0; i < kTransfers; ++i) {
    for (int r = 0; r < 2; ++r) {
      received[r].emplace_back(DType::kF32, Shape({sizes[i]}));
      const std::string name = absl::StrCat("t", i);
      if (i % 2 == 0) handles[r].push_back(ranks[r]->Post(false, 1 - r, name, received[r].back()));
      handles[r].push_back(ranks[r]->Post(true, 1 - r, name, Filled(sizes[i], 1000.0f * i + r)));
      if (i % 2 == 1) handles[r].push_back(ranks[r]->Post(false, 1 - r, name, received[r].back()));
    }
  }
  for (int r = 0; r < 2; ++r) {
    for (CollectiveHandle& h : handles[r]) ASSERT_TRUE(h.Wait().ok()) << "seed " << seed << ": " << h.Wait();
    for (int i = 0; i < kTransfers; ++i) {
      EXPECT_TRUE(received[r][i].BitwiseEquals(Filled(sizes[i], 1000.0f * i + (1 - r))))
          << "seed " << seed << " rank " << r << " transfer " << i;
    }
  }
  EXPECT_TRUE(health[0].reason.empty() && health[1].reason.empty());
}

TEST(StreamPointToPointTest, ARankThatClosesFailsItsPeersTransfers) {
  Health health[2];
  std::vector<std::unique_ptr<StreamPointToPoint>> ranks = ConnectPair(absl::Seconds(30), health);
  Tensor t(DType::kF32, Shape({4}));
  CollectiveHandle recv = ranks[0]->Post(false, 1, "never", t);
  absl::SleepFor(absl::Milliseconds(50));
  ranks[1]->Close();
  const absl::Time start = absl::Now();
  absl::Status status = recv.Wait();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(status.message(), HasSubstr("recv 'never' rank 1 -> rank 0 (seq 0): rank 0 lost its connection"));
  absl::MutexLock lock(&health[0].mu);
  EXPECT_THAT(health[0].reason, HasSubstr("recv 'never'"));
}

TEST(StreamPointToPointTest, AnUnmatchedSendTimesOutNamingThePeer) {
  Health health[2];
  std::vector<std::unique_ptr<StreamPointToPoint>> ranks = ConnectPair(absl::Milliseconds(300), health);
  const absl::Time start = absl::Now();
  absl::Status status = ranks[1]->Post(true, 0, "lonely", Filled(8, 0)).Wait();
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(290));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  EXPECT_THAT(status.message(),
              HasSubstr("send 'lonely' rank 1 -> rank 0 (seq 0): rank 0 did not post the matching recv within 300ms"));
  // A bad peer is refused at once.
  EXPECT_EQ(ranks[1]->Post(true, 2, "x", Filled(1, 0)).Wait().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tsr
