// The collectives conformance suite: what every Collectives backend (in-process, MPI,
// Gloo, NCCL) must do, written once. A backend's test instantiates it with a factory
// that makes this process's per-rank Collectives objects of a fresh communicator:
//
//   INSTANTIATE_TEST_SUITE_P(InProcess, CollectivesConformanceTest,
//                            testing::ValuesIn(ConformanceParams("in_process", factory)),
//                            ConformanceParamName);
//
// The same test bodies serve both kinds of backend. An in-process backend's factory
// returns every rank of the world: the test runs each on a thread of its own and checks
// every rank's result. A multi-process backend (one process per rank, e.g. under
// `mpirun -np N`) returns the process's own rank: every process runs the same tests in
// the same order, runs its rank and checks that rank's result, so a failure on any rank
// fails its process and thereby the job. Every process computes every rank's inputs
// (pseudo-random from a fixed, printed seed), so each can compute the expected values
// directly, and a failure reproduces.
#ifndef TESSERA_TESTS_RUNTIME_COLLECTIVES_COLLECTIVES_CONFORMANCE_H_
#define TESSERA_TESTS_RUNTIME_COLLECTIVES_COLLECTIVES_CONFORMANCE_H_

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/dtype.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "runtime/collectives/collectives.h"

namespace tsr {
namespace conformance {

// Makes the per-rank objects that this process runs of one fresh communicator of
// `world_size` ranks: all of them (in-process backends) or the process's own rank
// (multi-process backends). Each object's rank() says which rank it is.
using CollectivesFactory =
    std::function<std::vector<std::unique_ptr<Collectives>>(int world_size, CollectivesOptions options)>;

struct ConformanceParam {
  std::string backend;
  int world_size = 1;
  CollectivesFactory factory;
};

// The suite's parameters for a backend: world sizes 1, 2, 3 and 4 (an in-process
// backend), or the one world size of the job (a multi-process backend).
inline std::vector<ConformanceParam> ConformanceParams(const std::string& backend, CollectivesFactory factory,
                                                       const std::vector<int>& world_sizes = {1, 2, 3, 4}) {
  std::vector<ConformanceParam> params;
  for (int world : world_sizes) params.push_back({backend, world, factory});
  return params;
}

// Nanoseconds on the machine-wide monotonic clock (CLOCK_MONOTONIC on Linux): comparable
// across the processes of one machine.
inline int64_t MonotonicNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline std::string ConformanceParamName(const testing::TestParamInfo<ConformanceParam>& info) {
  return absl::StrCat(info.param.backend, "_world", info.param.world_size);
}

inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Pseudo-random values from `seed`: floats in [-1, 1), integers in [-1000, 1000] (so
// sums are exact), other dtypes random bytes (only ever copied).
inline Tensor RandomTensor(DType dtype, const Shape& shape, uint64_t seed) {
  Tensor t(dtype, shape);
  const int64_t n = t.num_elements();
  const uint64_t base = SplitMix64(seed);
  auto unit = [base](int64_t i) { return static_cast<double>(SplitMix64(base + i) >> 11) * 0x1.0p-52 - 1.0; };
  auto integer = [base](int64_t i) { return static_cast<int64_t>(SplitMix64(base + i) % 2001) - 1000; };
  switch (dtype) {
    case DType::kF32:
      for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = static_cast<float>(unit(i));
      break;
    case DType::kF64:
      for (int64_t i = 0; i < n; ++i) t.data<double>()[i] = unit(i);
      break;
    case DType::kI32:
      for (int64_t i = 0; i < n; ++i) t.data<int32_t>()[i] = static_cast<int32_t>(integer(i));
      break;
    case DType::kI64:
      for (int64_t i = 0; i < n; ++i) t.data<int64_t>()[i] = integer(i) * 1000003;
      break;
    default: {
      auto* bytes = static_cast<unsigned char*>(t.raw_data());
      for (size_t i = 0; i < t.num_bytes(); ++i) bytes[i] = static_cast<unsigned char>(SplitMix64(base + i));
      break;
    }
  }
  return t;
}

// Checks element i of `got` against `op` over element `offset + i` of every input, in
// double (floats, to `tolerance`) or int64 (integers, exactly; kMean truncates toward
// zero). Reports the first few differences only.
inline void ExpectReduced(const Tensor& got, const std::vector<Tensor>& inputs, int64_t offset, ReduceOp op,
                          const std::string& what) {
  const int world = static_cast<int>(inputs.size());
  const bool floating = IsFloating(got.dtype());
  const double tolerance = got.dtype() == DType::kF32 ? 1e-6 : 1e-13;
  int reported = 0;
  for (int64_t i = 0; i < got.num_elements() && reported < 5; ++i) {
    if (floating) {
      double want = inputs[0].GetAsDouble(offset + i);
      for (int q = 1; q < world; ++q) {
        const double v = inputs[q].GetAsDouble(offset + i);
        want = op == ReduceOp::kMax ? std::max(want, v) : op == ReduceOp::kMin ? std::min(want, v) : want + v;
      }
      if (op == ReduceOp::kMean) want /= world;
      const double have = got.GetAsDouble(i);
      if (!(std::abs(have - want) <= tolerance * (1 + std::abs(want)))) {
        ADD_FAILURE() << what << ": element " << i << " is " << have << ", want " << want;
        ++reported;
      }
    } else {
      int64_t want = inputs[0].GetAsInt64(offset + i);
      for (int q = 1; q < world; ++q) {
        const int64_t v = inputs[q].GetAsInt64(offset + i);
        want = op == ReduceOp::kMax ? std::max(want, v) : op == ReduceOp::kMin ? std::min(want, v) : want + v;
      }
      if (op == ReduceOp::kMean) want /= world;
      if (got.GetAsInt64(i) != want) {
        ADD_FAILURE() << what << ": element " << i << " is " << got.GetAsInt64(i) << ", want " << want;
        ++reported;
      }
    }
  }
}

// Rows [begin, end) of `t` (a copy, for comparisons).
inline Tensor Rows(const Tensor& t, int64_t begin, int64_t end) {
  Shape shape = t.shape();
  shape.set_dim(0, end - begin);
  Tensor out(t.dtype(), shape);
  const size_t row_bytes = t.shape().dim(0) == 0 ? 0 : t.num_bytes() / t.shape().dim(0);
  if (out.num_bytes() > 0) {
    std::memcpy(out.raw_data(), static_cast<const char*>(t.raw_data()) + begin * row_bytes, out.num_bytes());
  }
  return out;
}

// `parts` concatenated along dim 0 (all have `like`'s dtype and trailing dims).
inline Tensor Concat(const std::vector<Tensor>& parts, const Tensor& like) {
  Shape shape = like.shape();
  int64_t rows = 0;
  for (const Tensor& p : parts) rows += p.shape().dim(0);
  shape.set_dim(0, rows);
  Tensor out(like.dtype(), shape);
  size_t offset = 0;
  for (const Tensor& p : parts) {
    if (p.num_bytes() > 0) std::memcpy(static_cast<char*>(out.raw_data()) + offset, p.raw_data(), p.num_bytes());
    offset += p.num_bytes();
  }
  return out;
}

inline constexpr DType kReducibleDTypes[] = {DType::kF32, DType::kF64, DType::kI32, DType::kI64};
inline constexpr ReduceOp kReduceOps[] = {ReduceOp::kSum, ReduceOp::kMean, ReduceOp::kMax, ReduceOp::kMin};
// Copies must work for every dtype; these cover every element size.
inline constexpr DType kCopyDTypes[] = {DType::kF32, DType::kF64, DType::kI32, DType::kI64, DType::kF16, DType::kI8};

class CollectivesConformanceTest : public testing::TestWithParam<ConformanceParam> {
 protected:
  // Fixed, printed: rerun with the same seed to reproduce.
  static constexpr uint64_t kSeed = 20261201;

  static void SetUpTestSuite() { std::cout << "[ seed     ] " << kSeed << "\n"; }

  void SetUp() override {
    CollectivesOptions options;
    options.timeout = absl::Seconds(30);  // a broken backend fails instead of hanging
    ranks_ = GetParam().factory(world(), options);
    ASSERT_FALSE(ranks_.empty());
    ASSERT_LE(static_cast<int>(ranks_.size()), world());
    for (const std::unique_ptr<Collectives>& coll : ranks_) {
      ASSERT_NE(coll, nullptr);
      ASSERT_GE(coll->rank(), 0);
      ASSERT_LT(coll->rank(), world());
      EXPECT_EQ(coll->world_size(), world());
      local_ranks_.push_back(coll->rank());
    }
    std::sort(local_ranks_.begin(), local_ranks_.end());
    ASSERT_EQ(std::unique(local_ranks_.begin(), local_ranks_.end()), local_ranks_.end()) << "a rank twice";
  }

  int world() const { return GetParam().world_size; }
  // The ranks this process runs and checks, ascending.
  const std::vector<int>& local_ranks() const { return local_ranks_; }
  bool IsLocal(int r) const { return std::binary_search(local_ranks_.begin(), local_ranks_.end(), r); }

  // The seed of rank r's input in case `c` of a test.
  static uint64_t SeedFor(int c, int r) { return kSeed * 1000003 + c * 64 + r; }

  // Runs fn(rank's Collectives) for every local rank, on one thread per rank when there
  // are several; the statuses by rank (OK for the ranks of other processes).
  std::vector<absl::Status> OnEveryRank(const std::function<absl::Status(Collectives&)>& fn) {
    std::vector<absl::Status> statuses(world());
    if (ranks_.size() == 1) {
      statuses[ranks_[0]->rank()] = fn(*ranks_[0]);
      return statuses;
    }
    std::vector<std::thread> threads;
    for (std::unique_ptr<Collectives>& coll : ranks_) {
      threads.emplace_back([&, c = coll.get()] { statuses[c->rank()] = fn(*c); });
    }
    for (std::thread& t : threads) t.join();
    return statuses;
  }

  // fn's collective after two barriers (so it is seq 2) on every local rank: the statuses.
  std::vector<absl::Status> AfterTwoBarriers(const std::function<CollectiveHandle(Collectives&)>& issue) {
    return OnEveryRank([&](Collectives& coll) {
      absl::Status status = coll.Barrier("a").Wait();
      status.Update(coll.Barrier("b").Wait());
      if (!status.ok()) return status;
      return issue(coll).Wait();
    });
  }

  void ExpectAllOk(const std::vector<absl::Status>& statuses, const std::string& what) {
    for (int r : local_ranks()) EXPECT_TRUE(statuses[r].ok()) << what << " rank " << r << ": " << statuses[r];
  }

  // All-reduces one input per rank (made from `c`'s seeds) and checks every rank's result.
  void CheckAllReduce(int c, DType dtype, const Shape& shape, ReduceOp op) {
    const std::string what = absl::StrCat("all_reduce(", ReduceOpName(op), ") ", DTypeName(dtype), shape.ToString(),
                                          " case ", c, " world ", world());
    std::vector<Tensor> inputs, results(world());
    for (int r = 0; r < world(); ++r) {
      inputs.push_back(RandomTensor(dtype, shape, SeedFor(c, r)));
      if (IsLocal(r)) results[r] = inputs.back().Clone();
    }
    ExpectAllOk(OnEveryRank([&](Collectives& coll) {
                  return coll.AllReduce(results[coll.rank()], op, absl::StrCat("t", c)).Wait();
                }),
                what);
    for (int r : local_ranks()) {
      EXPECT_EQ(results[r].type(), inputs[r].type());
      ExpectReduced(results[r], inputs, 0, op, absl::StrCat(what, " rank ", r));
    }
  }

  std::vector<std::unique_ptr<Collectives>> ranks_;
  std::vector<int> local_ranks_;
};

TEST_P(CollectivesConformanceTest, AllReduceEveryDTypeOpAndSize) {
  int c = 0;
  for (DType dtype : kReducibleDTypes) {
    for (ReduceOp op : kReduceOps) {
      for (const Shape& shape : {Shape({0}), Shape(), Shape({1}), Shape({7, 3}), Shape({1000}), Shape({2, 0, 4})}) {
        CheckAllReduce(c++, dtype, shape, op);
      }
    }
  }
}

// Sizes past the backends' small-message paths (MPI's eager all-reduce, Gloo's frames
// and its two-rank stream), every dtype and op: element counts that are no multiple of
// anything a backend cuts by.
TEST_P(CollectivesConformanceTest, AllReduceLargerThanSmallMessagesEveryDTypeAndOp) {
  int c = 0;
  for (DType dtype : kReducibleDTypes) {
    for (ReduceOp op : kReduceOps) {
      for (const Shape& shape : {Shape({70001}), Shape({3, 100003})}) CheckAllReduce(c++, dtype, shape, op);
    }
  }
}

// 64 MiB of f32: large enough for a backend to split, pipeline or chunk it.
TEST_P(CollectivesConformanceTest, AllReduce64MiB) {
  CheckAllReduce(0, DType::kF32, Shape({16 << 20}), ReduceOp::kSum);
}

// Rows of 3 elements, and rows wide enough (40009) that a block is past the backends'
// small-message paths.
inline constexpr int64_t kRowWidths[] = {3, 40009};

// Rows that do not divide evenly: rank r gets [r*n/W, (r+1)*n/W).
TEST_P(CollectivesConformanceTest, ReduceScatterUnevenRows) {
  int c = 0;
  for (DType dtype : kReducibleDTypes) {
    for (ReduceOp op : kReduceOps) {
      for (int64_t width : kRowWidths) {
        for (int64_t rows : {int64_t{0}, int64_t{1}, int64_t{5}, int64_t{3 * world() + 1}}) {
          const Shape shape({rows, width});
          const std::string what = absl::StrCat("reduce_scatter(", ReduceOpName(op), ") ", DTypeName(dtype),
                                                shape.ToString(), " world ", world());
          std::vector<Tensor> inputs, outputs;
          for (int r = 0; r < world(); ++r) {
            inputs.push_back(RandomTensor(dtype, shape, SeedFor(c, r)));
            const int64_t mine = SplitBegin(rows, world(), r + 1) - SplitBegin(rows, world(), r);
            outputs.emplace_back(dtype, Shape({mine, width}));
          }
          ++c;
          ExpectAllOk(OnEveryRank([&](Collectives& coll) {
                        const int r = coll.rank();
                        return coll.ReduceScatter(inputs[r], outputs[r], op, "rs").Wait();
                      }),
                      what);
          for (int r : local_ranks()) {
            ExpectReduced(outputs[r], inputs, SplitBegin(rows, world(), r) * width, op,
                          absl::StrCat(what, " rank ", r));
          }
        }
      }
    }
  }
}

// Ranks contribute different row counts (some none); every dtype size.
TEST_P(CollectivesConformanceTest, AllGatherUnevenInputs) {
  int c = 0;
  for (DType dtype : kCopyDTypes) {
    for (int64_t width : kRowWidths) {
      for (int pattern = 0; pattern < 3; ++pattern) {
        std::vector<Tensor> inputs;
        for (int r = 0; r < world(); ++r) {
          const int64_t rows = pattern == 0 ? 2 : pattern == 1 ? r : (r * 7 + 3) % 5;
          inputs.push_back(RandomTensor(dtype, Shape({rows, 2, width}), SeedFor(c, r)));
        }
        ++c;
        const Tensor want = Concat(inputs, inputs[0]);
        std::vector<Tensor> outputs;
        for (int r = 0; r < world(); ++r) outputs.emplace_back(dtype, want.shape());
        ExpectAllOk(OnEveryRank([&](Collectives& coll) {
                      const int r = coll.rank();
                      return coll.AllGather(inputs[r], outputs[r], "ag").Wait();
                    }),
                    "all_gather");
        for (int r : local_ranks()) {
          EXPECT_TRUE(outputs[r].BitwiseEquals(want))
              << "all_gather " << DTypeName(dtype) << " width " << width << " pattern " << pattern << " rank " << r;
        }
      }
    }
  }
}

TEST_P(CollectivesConformanceTest, BroadcastFromEveryRoot) {
  int c = 0;
  for (DType dtype : kCopyDTypes) {
    for (int root = 0; root < world(); ++root) {
      for (const Shape& shape : {Shape({0}), Shape({5, 3}), Shape({5, 40009})}) {
        std::vector<Tensor> tensors;
        for (int r = 0; r < world(); ++r) tensors.push_back(RandomTensor(dtype, shape, SeedFor(c, r)));
        ++c;
        const Tensor want = tensors[root].Clone();
        ExpectAllOk(
            OnEveryRank([&](Collectives& coll) { return coll.Broadcast(tensors[coll.rank()], root, "bc").Wait(); }),
            "broadcast");
        for (int r : local_ranks()) {
          EXPECT_TRUE(tensors[r].BitwiseEquals(want))
              << "broadcast " << DTypeName(dtype) << shape.ToString() << " root " << root << " rank " << r;
        }
      }
    }
  }
}

// Rank r's input splits into world() parts by the SplitBegin rule; part j goes to rank j.
TEST_P(CollectivesConformanceTest, AllToAllUneven) {
  int c = 0;
  for (DType dtype : kCopyDTypes) {
    for (int64_t width : kRowWidths) {
      for (int pattern = 0; pattern < 3; ++pattern) {
        std::vector<Tensor> inputs;
        for (int r = 0; r < world(); ++r) {
          const int64_t rows = pattern == 0 ? 2 * world() : pattern == 1 ? 2 * r + 1 : (r == 0 ? 0 : 5);
          inputs.push_back(RandomTensor(dtype, Shape({rows, width}), SeedFor(c, r)));
        }
        ++c;
        std::vector<Tensor> wants, outputs;
        for (int r = 0; r < world(); ++r) {
          std::vector<Tensor> parts;
          for (const Tensor& in : inputs) {
            const int64_t n = in.shape().dim(0);
            parts.push_back(Rows(in, SplitBegin(n, world(), r), SplitBegin(n, world(), r + 1)));
          }
          wants.push_back(Concat(parts, inputs[0]));
          outputs.emplace_back(dtype, wants.back().shape());
        }
        ExpectAllOk(OnEveryRank([&](Collectives& coll) {
                      const int r = coll.rank();
                      return coll.AllToAll(inputs[r], outputs[r], "a2a").Wait();
                    }),
                    "all_to_all");
        for (int r : local_ranks()) {
          EXPECT_TRUE(outputs[r].BitwiseEquals(wants[r]))
              << "all_to_all " << DTypeName(dtype) << " width " << width << " pattern " << pattern << " rank " << r;
        }
      }
    }
  }
}

// Every rank sends to the next and receives from the previous, four messages of
// different sizes in a row (world 1: to itself), the last of 8 MiB: more than a
// connection buffers, in both directions at once. Sends are issued before receives.
TEST_P(CollectivesConformanceTest, SendRecvRing) {
  const std::vector<Shape> shapes = {Shape({4, 2}), Shape({0}), Shape({1000}), Shape({int64_t{1} << 21})};
  std::vector<std::vector<Tensor>> sent(world()), received(world());
  for (int r = 0; r < world(); ++r) {
    for (size_t m = 0; m < shapes.size(); ++m) {
      sent[r].push_back(RandomTensor(DType::kF32, shapes[m], SeedFor(static_cast<int>(m), r)));
      received[r].emplace_back(DType::kF32, shapes[m]);
    }
  }
  ExpectAllOk(OnEveryRank([&](Collectives& coll) {
                const int r = coll.rank();
                const int next = (r + 1) % world();
                const int prev = (r + world() - 1) % world();
                std::vector<CollectiveHandle> handles;
                for (size_t m = 0; m < shapes.size(); ++m) {
                  handles.push_back(coll.Send(sent[r][m], next, absl::StrCat("msg", m)));
                }
                for (size_t m = 0; m < shapes.size(); ++m) {
                  handles.push_back(coll.Recv(received[r][m], prev, absl::StrCat("msg", m)));
                }
                absl::Status status;
                for (CollectiveHandle& h : handles) status.Update(h.Wait());
                return status;
              }),
              "send/recv ring");
  for (int r : local_ranks()) {
    const int prev = (r + world() - 1) % world();
    for (size_t m = 0; m < shapes.size(); ++m) {
      EXPECT_TRUE(received[r][m].BitwiseEquals(sent[prev][m])) << "rank " << r << " message " << m;
    }
  }
}

// Receives may be posted before the matching sends, from the same thread.
TEST_P(CollectivesConformanceTest, RecvPostedBeforeSend) {
  std::vector<Tensor> sent, received;
  for (int r = 0; r < world(); ++r) {
    sent.push_back(RandomTensor(DType::kI64, Shape({3, 5}), SeedFor(0, r)));
    received.emplace_back(DType::kI64, Shape({3, 5}));
  }
  ExpectAllOk(OnEveryRank([&](Collectives& coll) {
                const int r = coll.rank();
                CollectiveHandle recv = coll.Recv(received[r], (r + world() - 1) % world(), "early");
                CollectiveHandle send = coll.Send(sent[r], (r + 1) % world(), "early");
                absl::Status status = recv.Wait();
                status.Update(send.Wait());
                return status;
              }),
              "recv before send");
  for (int r : local_ranks()) {
    EXPECT_TRUE(received[r].BitwiseEquals(sent[(r + world() - 1) % world()])) << "rank " << r;
  }
}

// A collective issued and not yet waited for still finishes while its rank waits on a
// point-to-point transfer: every rank but 0 issues an all-reduce, then waits for a token
// that rank 0 sends (to each) only once its own all-reduce is done; then all wait. Small
// and large (a backend may move them differently).
TEST_P(CollectivesConformanceTest, PendingCollectiveFinishesWhileTheRankWaitsOnARecv) {
  for (int64_t n : {int64_t{257}, int64_t{1} << 16}) {
    std::vector<Tensor> inputs, x;
    for (int r = 0; r < world(); ++r) {
      inputs.push_back(RandomTensor(DType::kF32, Shape({n}), SeedFor(0, r)));
      x.push_back(inputs.back().Clone());
    }
    ExpectAllOk(OnEveryRank([&](Collectives& coll) {
                  const int r = coll.rank();
                  const std::string name = absl::StrCat("pending", n);
                  if (r == 0) {
                    absl::Status status = coll.AllReduce(x[r], ReduceOp::kSum, name).Wait();
                    for (int q = 1; q < world() && status.ok(); ++q) {
                      status.Update(coll.Send(Tensor::FromVector<int32_t>(Shape({1}), {q}), q, "token").Wait());
                    }
                    return status;
                  }
                  CollectiveHandle reduce = coll.AllReduce(x[r], ReduceOp::kSum, name);
                  Tensor token(DType::kI32, Shape({1}));
                  absl::Status status = coll.Recv(token, 0, "token").Wait();
                  status.Update(reduce.Wait());
                  return status;
                }),
                absl::StrCat("pending all-reduce of ", n, " and recv"));
    for (int r : local_ranks()) ExpectReduced(x[r], inputs, 0, ReduceOp::kSum, absl::StrCat("n=", n, " rank ", r));
  }
}

// No rank leaves a barrier before every rank has entered it, even a slow one. Each rank
// notes when it entered and left the barrier on the machine-wide clock; the entry times
// are then all-gathered, and each rank checks that it left after every rank entered.
TEST_P(CollectivesConformanceTest, BarrierWaitsForEveryRank) {
  for (int round = 0; round < 5; ++round) {
    std::vector<Tensor> entered(world()), all_entered(world());
    std::vector<int64_t> left(world(), 0);
    ExpectAllOk(OnEveryRank([&](Collectives& coll) {
                  const int r = coll.rank();
                  if (r == round % world()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
                  entered[r] = Tensor::FromVector<int64_t>(Shape({1}), {MonotonicNanos()});
                  absl::Status status = coll.Barrier(absl::StrCat("round", round)).Wait();
                  left[r] = MonotonicNanos();
                  if (!status.ok()) return status;
                  all_entered[r] = Tensor(DType::kI64, Shape({world()}));
                  return coll.AllGather(entered[r], all_entered[r], "entry times").Wait();
                }),
                "barrier");
    for (int r : local_ranks()) {
      if (!all_entered[r].valid()) continue;  // reported above
      for (int q = 0; q < world(); ++q) {
        EXPECT_LE(all_entered[r].data<int64_t>()[q], left[r])
            << "round " << round << ": rank " << r << " left the barrier before rank " << q << " entered it";
      }
    }
  }
}

// One communicator carries many collectives in a row.
TEST_P(CollectivesConformanceTest, HundredSmallAllReducesInARow) {
  std::vector<std::vector<Tensor>> inputs(world()), results(world());
  for (int r = 0; r < world(); ++r) {
    for (int i = 0; i < 100; ++i) {
      inputs[r].push_back(RandomTensor(DType::kI32, Shape({i % 7 + 1}), SeedFor(i, r)));
      results[r].push_back(inputs[r].back().Clone());
    }
  }
  ExpectAllOk(OnEveryRank([&](Collectives& coll) {
                for (int i = 0; i < 100; ++i) {
                  absl::Status s = coll.AllReduce(results[coll.rank()][i], ReduceOp::kSum, absl::StrCat("g", i)).Wait();
                  if (!s.ok()) return s;
                }
                return absl::OkStatus();
              }),
              "100 all_reduces");
  for (int i = 0; i < 100; ++i) {
    std::vector<Tensor> ins;
    for (int r = 0; r < world(); ++r) ins.push_back(inputs[r][i]);
    for (int r : local_ranks()) ExpectReduced(results[r][i], ins, 0, ReduceOp::kSum, absl::StrCat("#", i));
  }
}

// Several operations in flight from every rank, waited in reverse order.
TEST_P(CollectivesConformanceTest, ConcurrentOpsWaitedInReverse) {
  const int w = world();
  std::vector<Tensor> ar_in, ar, rs_in, rs, ag_in, ag, bc;
  for (int r = 0; r < w; ++r) {
    ar_in.push_back(RandomTensor(DType::kF64, Shape({100}), SeedFor(0, r)));
    ar.push_back(ar_in.back().Clone());
    rs_in.push_back(RandomTensor(DType::kI64, Shape({10, 2}), SeedFor(1, r)));
    rs.emplace_back(DType::kI64, Shape({SplitBegin(10, w, r + 1) - SplitBegin(10, w, r), 2}));
    ag_in.push_back(RandomTensor(DType::kI32, Shape({r + 1}), SeedFor(2, r)));
    ag.emplace_back(DType::kI32, Shape({w * (w + 1) / 2}));
    bc.push_back(RandomTensor(DType::kF32, Shape({33}), SeedFor(3, r)));
  }
  const Tensor bc_want = bc[w - 1].Clone();
  ExpectAllOk(OnEveryRank([&](Collectives& coll) {
                const int r = coll.rank();
                std::vector<CollectiveHandle> handles = {coll.AllReduce(ar[r], ReduceOp::kSum, "ar"),
                                                         coll.ReduceScatter(rs_in[r], rs[r], ReduceOp::kMax, "rs"),
                                                         coll.AllGather(ag_in[r], ag[r], "ag"),
                                                         coll.Broadcast(bc[r], w - 1, "bc"), coll.Barrier("b")};
                absl::Status status;
                for (auto it = handles.rbegin(); it != handles.rend(); ++it) status.Update(it->Wait());
                for (CollectiveHandle& h : handles) EXPECT_TRUE(h.Done());
                return status;
              }),
              "concurrent");
  const Tensor ag_want = Concat(ag_in, ag_in[0]);
  for (int r : local_ranks()) {
    ExpectReduced(ar[r], ar_in, 0, ReduceOp::kSum, absl::StrCat("all_reduce rank ", r));
    ExpectReduced(rs[r], rs_in, SplitBegin(10, w, r) * 2, ReduceOp::kMax, absl::StrCat("reduce_scatter rank ", r));
    EXPECT_TRUE(ag[r].BitwiseEquals(ag_want)) << "all_gather rank " << r;
    EXPECT_TRUE(bc[r].BitwiseEquals(bc_want)) << "broadcast rank " << r;
  }
}

// Operations whose handles are only polled (Done) finish without a Wait: a backend that
// runs an operation on the thread that waits for it must hand a polled one on. A small
// and a large all-reduce, each polled to completion.
TEST_P(CollectivesConformanceTest, PolledOpsFinishWithoutWait) {
  const int w = world();
  for (int64_t n : {int64_t{3}, int64_t{1} << 18}) {
    std::vector<Tensor> in, out;
    for (int r = 0; r < w; ++r) {
      in.push_back(RandomTensor(DType::kF32, Shape({n}), SeedFor(static_cast<int>(n % 1000), r)));
      out.push_back(in.back().Clone());
    }
    ExpectAllOk(OnEveryRank([&](Collectives& coll) {
                  CollectiveHandle h = coll.AllReduce(out[coll.rank()], ReduceOp::kMax, "polled");
                  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
                  while (!h.Done() && std::chrono::steady_clock::now() < deadline) {
                    std::this_thread::sleep_for(std::chrono::microseconds(100));
                  }
                  if (!h.Done()) return absl::DeadlineExceededError("a polled all-reduce never finished");
                  return h.Wait();
                }),
                "polled");
    for (int r : local_ranks()) ExpectReduced(out[r], in, 0, ReduceOp::kMax, absl::StrCat("polled rank ", r));
  }
}

// ---- Mismatches: every rank gets the same error, naming the collective, its sequence
// number and both sides; nothing moves and the communicator stays usable. ----

// Expects `status` of local rank `r` to be InvalidArgument with `message` in it.
inline void ExpectMismatch(const absl::Status& status, int r, const std::string& message) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << "rank " << r << ": " << status;
  EXPECT_NE(status.message().find(message), absl::string_view::npos)
      << "rank " << r << ": " << status << "\n  expected to contain: " << message;
}

TEST_P(CollectivesConformanceTest, ShapeMismatchNamesBothSidesOnEveryRank) {
  if (world() < 2) GTEST_SKIP() << "needs two ranks";
  std::vector<Tensor> tensors;
  for (int r = 0; r < world(); ++r) tensors.emplace_back(DType::kF32, Shape({r == 1 ? 10 : 12}));
  const std::vector<absl::Status> statuses = AfterTwoBarriers(
      [&](Collectives& coll) { return coll.AllReduce(tensors[coll.rank()], ReduceOp::kSum, "grad/w1"); });
  for (int r : local_ranks()) {
    ExpectMismatch(statuses[r], r, "all_reduce 'grad/w1' (seq 2): rank 1 passed f32[10] but rank 0 passed f32[12]");
  }
  ExpectAllOk(OnEveryRank([&](Collectives& coll) { return coll.Barrier("after").Wait(); }), "barrier after mismatch");
}

TEST_P(CollectivesConformanceTest, OpMismatchNamesBothSidesOnEveryRank) {
  if (world() < 2) GTEST_SKIP() << "needs two ranks";
  std::vector<Tensor> in, gathered;
  for (int r = 0; r < world(); ++r) {
    in.emplace_back(DType::kF32, Shape({10}));
    gathered.emplace_back(DType::kF32, Shape({10 * world()}));
  }
  const std::vector<absl::Status> statuses = AfterTwoBarriers([&](Collectives& coll) {
    const int r = coll.rank();
    return r == 0 ? coll.AllReduce(in[r], ReduceOp::kSum, "grad/w1") : coll.AllGather(in[r], gathered[r], "grad/w1");
  });
  for (int r : local_ranks()) {
    ExpectMismatch(statuses[r], r,
                   absl::StrCat("collective seq 2 differs across ranks: rank 1 issued all_gather 'grad/w1' f32[10] -> "
                                "f32[",
                                10 * world(), "] but rank 0 issued all_reduce(sum) 'grad/w1' f32[10]"));
  }
  ExpectAllOk(OnEveryRank([&](Collectives& coll) { return coll.Barrier("after").Wait(); }), "barrier after mismatch");
}

TEST_P(CollectivesConformanceTest, NameReduceOpAndDTypeMismatchesFailOnEveryRank) {
  if (world() < 2) GTEST_SKIP() << "needs two ranks";
  const int odd_rank = world() - 1;
  struct Case {
    std::string odd_name;
    ReduceOp odd_op;
    DType odd_dtype;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"grad/w2", ReduceOp::kSum, DType::kF32, absl::StrCat("rank ", odd_rank, " issued all_reduce(sum) 'grad/w2'")},
      {"grad/w1", ReduceOp::kMax, DType::kF32, absl::StrCat("rank ", odd_rank, " issued all_reduce(max) 'grad/w1'")},
      {"grad/w1", ReduceOp::kSum, DType::kI32,
       absl::StrCat("rank ", odd_rank, " passed i32[4] but rank 0 passed f32[4]")},
  };
  for (const Case& c : cases) {
    std::vector<Tensor> tensors;
    for (int r = 0; r < world(); ++r) tensors.emplace_back(r == odd_rank ? c.odd_dtype : DType::kF32, Shape({4}));
    const std::vector<absl::Status> statuses = OnEveryRank([&](Collectives& coll) {
      const bool odd = coll.rank() == odd_rank;
      return coll.AllReduce(tensors[coll.rank()], odd ? c.odd_op : ReduceOp::kSum, odd ? c.odd_name : "grad/w1").Wait();
    });
    for (int r : local_ranks()) ExpectMismatch(statuses[r], r, c.expected);
  }
}

TEST_P(CollectivesConformanceTest, WrongOutputShapeAndUnreducibleDTypeFailOnEveryRank) {
  if (world() < 2) GTEST_SKIP() << "needs two ranks";
  Tensor in(DType::kF32, Shape({3, 2}));
  std::vector<Tensor> out, halves;
  for (int r = 0; r < world(); ++r) {
    out.emplace_back(DType::kF32, Shape({r == 1 ? 3 * world() - 1 : 3 * world(), 2}));
    halves.emplace_back(DType::kF16, Shape({4}));
  }
  std::vector<absl::Status> statuses =
      OnEveryRank([&](Collectives& coll) { return coll.AllGather(in, out[coll.rank()], "acts").Wait(); });
  for (int r : local_ranks()) {
    ExpectMismatch(statuses[r], r,
                   absl::StrCat("all_gather 'acts' (seq 0): rank 1's output is f32[", 3 * world() - 1, ",2] but f32[",
                                3 * world(), ",2] is needed"));
  }
  statuses =
      OnEveryRank([&](Collectives& coll) { return coll.AllReduce(halves[coll.rank()], ReduceOp::kSum, "h").Wait(); });
  for (int r : local_ranks()) ExpectMismatch(statuses[r], r, "all_reduce 'h' (seq 1): dtype f16 cannot be reduced");
}

// Rank 0 sends f32[4] where rank 1 receives f32[5]: both sides fail alike, the pair's
// next transfer is matched correctly, and a send to a rank outside the world is refused.
TEST_P(CollectivesConformanceTest, SendRecvMismatchAndBadPeerFail) {
  if (world() < 2) GTEST_SKIP() << "needs two ranks";
  const std::string expected =
      "send/recv rank 0 -> rank 1 (seq 0): rank 0 sends 'x' f32[4] but rank 1 receives 'x' f32[5]";
  std::vector<Tensor> next(world());
  const std::vector<absl::Status> statuses = OnEveryRank([&](Collectives& coll) -> absl::Status {
    const int r = coll.rank();
    if (r > 1) return absl::OkStatus();
    Tensor t(DType::kF32, Shape({r == 0 ? 4 : 5}));
    absl::Status status = r == 0 ? coll.Send(t, 1, "x").Wait() : coll.Recv(t, 0, "x").Wait();
    next[r] = Tensor::FromVector<int32_t>(Shape({3}), {r, 7, 9});
    absl::Status next_status = r == 0 ? coll.Send(next[r], 1, "next").Wait() : coll.Recv(next[r], 0, "next").Wait();
    EXPECT_TRUE(next_status.ok()) << "rank " << r << ": " << next_status;
    if (r == 0) {
      EXPECT_EQ(coll.Send(t, world(), "x").Wait().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_EQ(coll.Send(t, -1, "x").Wait().code(), absl::StatusCode::kInvalidArgument);
    }
    return status;
  });
  for (int r : local_ranks()) {
    if (r > 1) continue;
    EXPECT_EQ(statuses[r].code(), absl::StatusCode::kInvalidArgument) << "rank " << r << ": " << statuses[r];
    EXPECT_EQ(statuses[r].message(), expected) << "rank " << r;
    EXPECT_EQ(next[r].data<int32_t>()[0], 0) << "rank " << r;
  }
  ExpectAllOk(OnEveryRank([&](Collectives& coll) { return coll.Barrier("after").Wait(); }), "barrier after mismatch");
}

}  // namespace conformance
}  // namespace tsr

#endif  // TESSERA_TESTS_RUNTIME_COLLECTIVES_COLLECTIVES_CONFORMANCE_H_
