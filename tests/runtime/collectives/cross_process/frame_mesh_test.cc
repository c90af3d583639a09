// Tests of FrameMesh with its ranks as threads of this process (the sockets are real
// loopback TCP): frames of every size, up to megabytes that fill the sockets' buffers
// both ways at once, reach every rank intact over many rounds; a rank that does not
// come is named by rendezvous and exchange; a rank arriving late at an exchange the
// others gave up on fails although their frames are there; Close ends a waiting
// exchange; an oversized frame is refused; a stray connection cannot join.
#include "runtime/collectives/cross_process/frame_mesh.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/launch/file_key_value_store.h"
#include "runtime/launch/loopback_socket.h"

namespace tsr {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string NewStoreDirectory() {
  std::string pattern = testing::TempDir() + "/frame_mesh_XXXXXX";
  EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
  return pattern;
}

// Connects `world_size` ranks, one thread each; the meshes by rank.
std::vector<std::unique_ptr<FrameMesh>> ConnectAll(int world_size, KeyValueStore& store, const std::string& prefix) {
  std::vector<std::unique_ptr<FrameMesh>> meshes(world_size);
  std::vector<std::thread> threads;
  for (int r = 0; r < world_size; ++r) {
    threads.emplace_back([&, r] {
      absl::StatusOr<std::unique_ptr<FrameMesh>> mesh =
          FrameMesh::Connect(r, world_size, store, prefix, absl::Seconds(20));
      ASSERT_TRUE(mesh.ok()) << mesh.status();
      meshes[r] = *std::move(mesh);
    });
  }
  for (std::thread& t : threads) t.join();
  return meshes;
}

// Runs body(rank) on one thread per rank.
void OnEveryRank(int world_size, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < world_size; ++r) threads.emplace_back(body, r);
  for (std::thread& t : threads) t.join();
}

// Rank r's frame of round k: `bytes` bytes that say whose and which they are.
std::string FrameOf(int rank, int round, size_t bytes) {
  std::string frame(bytes, '\0');
  for (size_t i = 0; i < bytes; ++i) frame[i] = static_cast<char>((rank * 131 + round * 31 + i * 7) & 0xff);
  return frame;
}

TEST(FrameMeshTest, EveryRankGetsEveryFrameOverManyRounds) {
  FileKeyValueStore store(NewStoreDirectory());
  constexpr int kWorld = 3;
  std::vector<std::unique_ptr<FrameMesh>> meshes = ConnectAll(kWorld, store, "rounds");
  ASSERT_EQ(meshes.size(), kWorld);
  // Sizes from empty to 3 MiB (more than a loopback socket buffers, so the ranks must
  // read while they write), the same sequence on every rank.
  const unsigned seed = 20261203;
  std::mt19937 rng(seed);
  std::vector<std::vector<size_t>> sizes(40, std::vector<size_t>(kWorld));
  for (auto& round : sizes) {
    for (size_t& s : round) {
      const int kind = static_cast<int>(rng() % 4);
      s = kind == 0 ? 0 : kind == 1 ? rng() % 64 : kind == 2 ? rng() % 70000 : size_t{1} << 20 | rng() % (2 << 20);
    }
  }
  const size_t capacity = size_t{3} << 20;
  OnEveryRank(kWorld, [&](int r) {
    std::vector<char> theirs(kWorld * capacity);
    std::vector<size_t> lengths;
    std::vector<int> missing;
    for (int k = 0; k < static_cast<int>(sizes.size()); ++k) {
      const std::string mine = FrameOf(r, k, sizes[k][r]);
      absl::Status status =
          meshes[r]->Exchange(mine, theirs.data(), capacity, &lengths, absl::Now() + absl::Seconds(30), &missing);
      ASSERT_TRUE(status.ok()) << "seed " << seed << " rank " << r << " round " << k << ": " << status;
      for (int q = 0; q < kWorld; ++q) {
        if (q == r) continue;
        ASSERT_EQ(lengths[q], sizes[k][q]) << "seed " << seed << " rank " << r << " round " << k << " from " << q;
        ASSERT_EQ(std::string(theirs.data() + q * capacity, lengths[q]), FrameOf(q, k, sizes[k][q]))
            << "seed " << seed << " rank " << r << " round " << k << " from " << q;
      }
    }
  });
}

// A streamed exchange (each rank's frame into its own buffer, progress reported as it
// moves): every report is monotone, what it says has arrived is there and what it says
// has been sent may be overwritten (the sender scribbles over it at once, as an in-place
// all-reduce does), and the last report says everything.
TEST(FrameMeshTest, StreamedExchangeReportsWhatMovedAndEndsWithEverything) {
  FileKeyValueStore store(NewStoreDirectory());
  constexpr int kWorld = 3;
  std::vector<std::unique_ptr<FrameMesh>> meshes = ConnectAll(kWorld, store, "stream");
  ASSERT_EQ(meshes.size(), kWorld);
  // 9 MiB: more than a loopback socket buffers, so the frame moves in many passes.
  constexpr size_t kBytes = (size_t{9} << 20) + 5;
  OnEveryRank(kWorld, [&](int r) {
    for (int round = 0; round < 2; ++round) {
      std::string mine = FrameOf(r, round, kBytes);
      std::vector<std::string> theirs(kWorld, std::string(kBytes, '\0'));
      std::vector<char*> into(kWorld, nullptr);
      for (int q = 0; q < kWorld; ++q) {
        if (q != r) into[q] = theirs[q].data();
      }
      size_t last_sent = 0, last_received = 0, checked = 0;
      int reports = 0;
      bool ok = true;
      auto progress = [&](size_t sent, size_t received) {
        ++reports;
        if (sent < last_sent || received < last_received || sent > kBytes || received > kBytes) ok = false;
        for (int q = 0; q < kWorld; ++q) {
          if (q == r) continue;
          const std::string want = FrameOf(q, round, kBytes);
          if (theirs[q].compare(checked, received - checked, want, checked, received - checked) != 0) ok = false;
        }
        checked = received;
        std::fill(mine.begin() + last_sent, mine.begin() + sent, 'x');  // sent: the peers need it no more
        last_sent = sent;
        last_received = received;
      };
      std::vector<size_t> lengths;
      std::vector<int> missing;
      absl::Status status =
          meshes[r]->Exchange(mine, into, kBytes, &lengths, absl::Now() + absl::Seconds(60), &missing, progress);
      ASSERT_TRUE(status.ok()) << "rank " << r << " round " << round << ": " << status;
      EXPECT_TRUE(ok) << "rank " << r << " round " << round;
      // (Usually many reports; one when a late rank finds the others' frames waiting in
      // its socket buffers and sends its own in one go.)
      EXPECT_GE(reports, 1) << "rank " << r << " round " << round;
      EXPECT_EQ(last_sent, kBytes);
      EXPECT_EQ(last_received, kBytes);
      for (int q = 0; q < kWorld; ++q) {
        if (q == r) continue;
        EXPECT_EQ(lengths[q], kBytes);
        EXPECT_TRUE(theirs[q] == FrameOf(q, round, kBytes)) << "rank " << r << " round " << round << " from " << q;
      }
    }
  });
}

TEST(FrameMeshTest, OneRankAloneExchangesNothing) {
  FileKeyValueStore store(NewStoreDirectory());
  std::vector<std::unique_ptr<FrameMesh>> meshes = ConnectAll(1, store, "alone");
  char theirs[16];
  std::vector<size_t> lengths;
  std::vector<int> missing;
  EXPECT_TRUE(meshes[0]->Exchange("x", theirs, sizeof(theirs), &lengths, absl::Now(), &missing).ok());
  EXPECT_THAT(lengths, ElementsAre(0));
}

TEST(FrameMeshTest, RendezvousNamesTheRankThatDidNotCome) {
  FileKeyValueStore store(NewStoreDirectory());
  // Rank 1 of 3 comes: rank 0 never publishes, rank 2 never connects.
  absl::StatusOr<std::unique_ptr<FrameMesh>> mesh = FrameMesh::Connect(1, 3, store, "lonely", absl::Milliseconds(300));
  EXPECT_EQ(mesh.status().code(), absl::StatusCode::kDeadlineExceeded) << mesh.status();
  EXPECT_THAT(mesh.status().message(), HasSubstr("frame mesh 'lonely' rank 1 of 3: rank 0 did not arrive within"));
  // Rank 0 of 2 alone: rank 1 never connects.
  mesh = FrameMesh::Connect(0, 2, store, "lonely0", absl::Milliseconds(300));
  EXPECT_EQ(mesh.status().code(), absl::StatusCode::kDeadlineExceeded) << mesh.status();
  EXPECT_THAT(mesh.status().message(), HasSubstr("rank 1 did not connect within"));
  EXPECT_EQ(FrameMesh::Connect(2, 2, store, "bad", absl::Seconds(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(FrameMeshTest, ExchangeNamesTheMissingRankAndALateRankFails) {
  FileKeyValueStore store(NewStoreDirectory());
  constexpr int kWorld = 3;
  std::vector<std::unique_ptr<FrameMesh>> meshes = ConnectAll(kWorld, store, "late");
  constexpr size_t kCapacity = 64;
  // Ranks 0 and 1 exchange without rank 2 and give up, as a communicator does.
  OnEveryRank(2, [&](int r) {
    char theirs[kWorld * kCapacity];
    std::vector<size_t> lengths;
    std::vector<int> missing;
    const absl::Time start = absl::Now();
    absl::Status status =
        meshes[r]->Exchange("early", theirs, kCapacity, &lengths, absl::Now() + absl::Milliseconds(300), &missing);
    EXPECT_GE(absl::Now() - start, absl::Milliseconds(290));
    EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
    EXPECT_THAT(missing, ElementsAre(2));
    meshes[r]->Close();
  });
  // Their frames for the exchange have reached rank 2, but they gave up on it.
  char theirs[kWorld * kCapacity];
  std::vector<size_t> lengths;
  std::vector<int> missing;
  const absl::Time start = absl::Now();
  absl::Status status =
      meshes[2]->Exchange("late", theirs, kCapacity, &lengths, absl::Now() + absl::Seconds(10), &missing);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(status.message(), HasSubstr("gave up on the communicator"));
  // A closed mesh refuses at once.
  EXPECT_EQ(meshes[0]->Exchange("x", theirs, kCapacity, &lengths, absl::Now() + absl::Seconds(10), &missing).code(),
            absl::StatusCode::kCancelled);
}

TEST(FrameMeshTest, CloseEndsAWaitingExchange) {
  FileKeyValueStore store(NewStoreDirectory());
  std::vector<std::unique_ptr<FrameMesh>> meshes = ConnectAll(2, store, "close");
  absl::Notification closing;
  std::thread closer([&] {
    absl::SleepFor(absl::Milliseconds(200));  // past the spin: the exchange sleeps in poll()
    closing.Notify();
    meshes[0]->Close();
  });
  char theirs[2 * 16];
  std::vector<size_t> lengths;
  std::vector<int> missing;
  const absl::Time start = absl::Now();
  absl::Status status = meshes[0]->Exchange("x", theirs, 16, &lengths, absl::Now() + absl::Seconds(20), &missing);
  closer.join();
  EXPECT_TRUE(closing.HasBeenNotified());
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  // The other rank sees the mesh given up on.
  status = meshes[1]->Exchange("y", theirs, 16, &lengths, absl::Now() + absl::Seconds(10), &missing);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
}

TEST(FrameMeshTest, AFrameLongerThanTheCapacityIsRefused) {
  FileKeyValueStore store(NewStoreDirectory());
  std::vector<std::unique_ptr<FrameMesh>> meshes = ConnectAll(2, store, "long");
  std::vector<absl::Status> statuses(2);
  OnEveryRank(2, [&](int r) {
    std::vector<char> theirs(2 * 100);
    std::vector<size_t> lengths;
    std::vector<int> missing;
    const std::string mine(r == 0 ? 101 : 10, 'a');
    statuses[r] = meshes[r]->Exchange(mine, theirs.data(), 100, &lengths, absl::Now() + absl::Seconds(10), &missing);
  });
  EXPECT_TRUE(statuses[0].ok()) << statuses[0];
  EXPECT_EQ(statuses[1].code(), absl::StatusCode::kDataLoss) << statuses[1];
  EXPECT_THAT(statuses[1].message(), HasSubstr("rank 0 sent a frame of 101 bytes, more than the 100 expected"));
}

// A process that connects to a rank's port without its secret is dropped; the ranks
// still connect, and nothing the stray sent reaches an exchange.
TEST(FrameMeshTest, AStrayConnectionCannotJoin) {
  FileKeyValueStore store(NewStoreDirectory());
  absl::StatusOr<std::unique_ptr<FrameMesh>> rank0;
  std::thread first([&] { rank0 = FrameMesh::Connect(0, 2, store, "stray", absl::Seconds(20)); });
  absl::StatusOr<std::string> published = store.Get("stray/frames/0", absl::Seconds(20));
  ASSERT_TRUE(published.ok()) << published.status();
  std::vector<std::string> fields = absl::StrSplit(*published, ' ');
  int port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(fields[0], &port));
  // Claims to be rank 1 with a wrong secret, then a second stray says nothing at all.
  const int stray = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to = LoopbackAddress(port);
  ASSERT_EQ(connect(stray, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0);
  std::string hello = "TSR-FRM1";
  hello.append("\x01\0\0\0\0\0\0\0", 8);
  hello.append("\x2a\0\0\0\0\0\0\0", 8);
  ASSERT_EQ(send(stray, hello.data(), hello.size(), MSG_NOSIGNAL), static_cast<ssize_t>(hello.size()));
  const int silent = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(silent, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0);
  absl::StatusOr<std::unique_ptr<FrameMesh>> rank1 = FrameMesh::Connect(1, 2, store, "stray", absl::Seconds(20));
  first.join();
  ASSERT_TRUE(rank0.ok()) << rank0.status();
  ASSERT_TRUE(rank1.ok()) << rank1.status();
  close(stray);
  close(silent);
  std::vector<std::unique_ptr<FrameMesh>> meshes;
  meshes.push_back(*std::move(rank0));
  meshes.push_back(*std::move(rank1));
  OnEveryRank(2, [&](int r) {
    char theirs[2 * 16];
    std::vector<size_t> lengths;
    std::vector<int> missing;
    ASSERT_TRUE(meshes[r]
                    ->Exchange(r == 0 ? "zero" : "one", theirs, 16, &lengths, absl::Now() + absl::Seconds(10), &missing)
                    .ok());
    EXPECT_EQ(std::string(theirs + (1 - r) * 16, lengths[1 - r]), r == 0 ? "one" : "zero");
  });
}

}  // namespace
}  // namespace tsr
