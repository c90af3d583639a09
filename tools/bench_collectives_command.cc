// `tessera bench-collectives --backend inprocess|gloo|mpi --np N [--op OP] ...`: times one
// collective of a Collectives backend over a range of message sizes and prints the table
// nccl-tests prints (size, count, type, op, time, algbw, busbw, with its definitions), so
// that figures compare across backends and with NCCL's. With --peer it also times the raw
// library's all-reduce (MPI_Allreduce, or gloo::allreduce's ring) in the same run.
//
// inprocess runs the ranks as threads of this process. gloo and mpi start this command
// again as N worker processes through the launcher (runtime/launch/launcher.h), with the
// same flags and --worker; each worker joins the job (tools/world_collectives.h) and rank
// 0 prints the table.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <streambuf>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "runtime/collectives/collectives.h"
#include "runtime/collectives/in_process_collectives.h"
#include "runtime/launch/launcher.h"
#include "runtime/launch/world_info.h"
#include "tools/command.h"
#include "tools/world_collectives.h"
#ifdef TESSERA_HAS_GLOO
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <sys/socket.h>

#include "runtime/collectives/gloo/gloo_store.h"
#include "runtime/launch/tcp_key_value_store.h"
#endif
#ifdef TESSERA_HAS_MPI
#include <mpi.h>

#include "runtime/collectives/mpi/mpi_collectives.h"
#endif

namespace tsr::cli {
namespace {

constexpr absl::string_view kUsage =
    "tessera bench-collectives --backend inprocess|gloo|mpi [--np N] [--op OP] [--min-bytes B]\n"
    "                                 [--max-bytes B] [--iters N] [--warmup N] [--dtype T] [--peer]";
constexpr absl::string_view kDescription =
    "Times one collective of a collectives backend over N ranks for message sizes from\n"
    "--min-bytes to --max-bytes (doubling; suffixes K, M, G are powers of 1024) and prints a\n"
    "table as nccl-tests does: size(B) is the largest buffer of one rank, count its elements\n"
    "per rank (per rank and peer for all_to_all), time(us) the median over --iters timed\n"
    "iterations (after --warmup untimed ones) taken as the slowest rank's, algbw = size / time\n"
    "and busbw = algbw x 2(n-1)/n for allreduce, (n-1)/n for reduce_scatter, all_gather and\n"
    "all_to_all, 1 for broadcast: the bandwidth of one link of an optimal algorithm, which\n"
    "compares across rank counts. Every size is checked once (the result of known inputs)\n"
    "before it is timed. Backends: inprocess (threads of this process), gloo (processes on\n"
    "loopback, started with `tessera launch`'s launcher), mpi (processes under mpirun). With\n"
    "--peer (allreduce only) the raw library is timed in the same run on a buffer of its own:\n"
    "MPI_Allreduce on MPI_COMM_WORLD, or gloo::allreduce's ring on a Gloo context made as the\n"
    "gloo backend makes its own; the columns peer time(us), peer busbw and ratio (ours / peer\n"
    "busbw) follow. Ours and the peer are timed in alternating turns of a tenth of the\n"
    "iterations, so that a machine whose speed drifts slows both alike. Timings are\n"
    "figures, not checks: the exit code says only whether the run\n"
    "and its result checks succeeded.";

enum class BenchOp { kAllReduce, kReduceScatter, kAllGather, kBroadcast, kAllToAll };

constexpr struct {
  BenchOp op;
  absl::string_view name;
} kOps[] = {{BenchOp::kAllReduce, "allreduce"},
            {BenchOp::kReduceScatter, "reduce_scatter"},
            {BenchOp::kAllGather, "all_gather"},
            {BenchOp::kBroadcast, "broadcast"},
            {BenchOp::kAllToAll, "all_to_all"}};

absl::string_view OpName(BenchOp op) {
  for (const auto& entry : kOps) {
    if (entry.op == op) return entry.name;
  }
  return "?";
}

// nccl-tests' bus-bandwidth factor: the share of the buffer that crosses one link of an
// optimal algorithm over n ranks.
double BusFactor(BenchOp op, int n) {
  switch (op) {
    case BenchOp::kAllReduce:
      return 2.0 * (n - 1) / n;
    case BenchOp::kBroadcast:
      return 1.0;
    default:
      return static_cast<double>(n - 1) / n;
  }
}

struct BenchConfig {
  std::string backend;
  int np = 2;
  BenchOp op = BenchOp::kAllReduce;
  int64_t min_bytes = 4 << 10;
  int64_t max_bytes = 64 << 20;
  int iters = 20;
  int warmup = 5;
  DType dtype = DType::kF32;
  bool peer = false;
};

// "4096", "4K", "64M", "1G" (powers of 1024; "KiB"/"KB" and lowercase are accepted too).
std::optional<int64_t> ParseBytes(absl::string_view text) {
  std::string s = absl::AsciiStrToUpper(text);
  for (absl::string_view unit_suffix : {"IB", "B"}) {
    if (s.size() > unit_suffix.size() && absl::EndsWith(s, unit_suffix)) {
      s.resize(s.size() - unit_suffix.size());
      break;
    }
  }
  int64_t scale = 1;
  if (!s.empty() && (s.back() == 'K' || s.back() == 'M' || s.back() == 'G')) {
    scale = s.back() == 'K' ? int64_t{1} << 10 : s.back() == 'M' ? int64_t{1} << 20 : int64_t{1} << 30;
    s.pop_back();
  }
  int64_t n = 0;
  if (!absl::SimpleAtoi(s, &n) || n < 0 || n > (int64_t{1} << 40) / scale) return std::nullopt;
  return n * scale;
}

// ---------------------------------------------------------------------------------------
// Buffers: filled with known values before the check, with zeros for the timing (sums of
// zeros stay zero: no overflow, no denormals, however many iterations run).

template <typename T>
void FillTyped(Tensor& t, int64_t begin, int64_t end, double value) {
  std::fill(t.data<T>() + begin, t.data<T>() + end, static_cast<T>(value));
}

void Fill(Tensor& t, double value, int64_t begin = 0, int64_t end = -1) {
  if (end < 0) end = t.num_elements();
  switch (t.dtype()) {
    case DType::kF32:
      return FillTyped<float>(t, begin, end, value);
    case DType::kF64:
      return FillTyped<double>(t, begin, end, value);
    case DType::kI32:
      return FillTyped<int32_t>(t, begin, end, value);
    default:
      return FillTyped<int64_t>(t, begin, end, value);
  }
}

// The first index in [begin, end) whose element is not `expected`, or -1.
template <typename T>
int64_t FirstMismatchTyped(const Tensor& t, int64_t begin, int64_t end, double expected) {
  const T want = static_cast<T>(expected);
  const T* data = t.data<T>();
  for (int64_t i = begin; i < end; ++i) {
    if (data[i] != want) return i;
  }
  return -1;
}

int64_t FirstMismatch(const Tensor& t, int64_t begin, int64_t end, double expected) {
  switch (t.dtype()) {
    case DType::kF32:
      return FirstMismatchTyped<float>(t, begin, end, expected);
    case DType::kF64:
      return FirstMismatchTyped<double>(t, begin, end, expected);
    case DType::kI32:
      return FirstMismatchTyped<int32_t>(t, begin, end, expected);
    default:
      return FirstMismatchTyped<int64_t>(t, begin, end, expected);
  }
}

// One size's buffers for one rank: `count` is nccl-tests' count (elements per rank; per
// rank and peer for all_to_all), `bytes` the largest buffer's size.
struct OpBuffers {
  Tensor input;  // allreduce and broadcast: in place
  Tensor output;
  int64_t count = 0;
  int64_t bytes = 0;
};

OpBuffers MakeBuffers(BenchOp op, DType dtype, int64_t bytes, int n) {
  const int64_t elements = bytes / static_cast<int64_t>(DTypeSize(dtype));
  const int64_t per_rank = elements / n;  // nccl-tests rounds to a multiple of the ranks
  OpBuffers b;
  switch (op) {
    case BenchOp::kAllReduce:
    case BenchOp::kBroadcast:
      b.input = Tensor(dtype, Shape{elements});
      b.count = elements;
      break;
    case BenchOp::kReduceScatter:
      b.input = Tensor(dtype, Shape{per_rank * n});
      b.output = Tensor(dtype, Shape{per_rank});
      b.count = per_rank;
      break;
    case BenchOp::kAllGather:
      b.input = Tensor(dtype, Shape{per_rank});
      b.output = Tensor(dtype, Shape{per_rank * n});
      b.count = per_rank;
      break;
    case BenchOp::kAllToAll:
      b.input = Tensor(dtype, Shape{per_rank * n});
      b.output = Tensor(dtype, Shape{per_rank * n});
      b.count = per_rank;
      break;
  }
  b.bytes = static_cast<int64_t>(std::max(b.input.num_bytes(), b.output.num_bytes()));
  return b;
}

// Sets each rank's inputs to values that make every output element predictable: rank r
// contributes r + 1 (broadcast: the root's 1 must replace the others' r + 1).
void FillForCheck(int rank, OpBuffers& b) {
  Fill(b.input, rank + 1);
  if (b.output.num_elements() > 0) Fill(b.output, -1);
}

// What FillForCheck's inputs must give; an error naming the rank, op, size and the first
// wrong element otherwise.
absl::Status CheckResult(BenchOp op, int rank, int n, const OpBuffers& b, absl::string_view who) {
  auto wrong = [&](const Tensor& t, int64_t index, double expected) {
    return absl::InternalError(absl::StrCat(who, " ", OpName(op), " of ", b.bytes, " bytes on rank ", rank,
                                            ": element ", index, " of ", t.num_elements(), " is wrong (expected ",
                                            expected, ")"));
  };
  auto check_blocks = [&](const Tensor& t, int64_t block, std::function<double(int)> expected) -> absl::Status {
    for (int q = 0; q * block < t.num_elements(); ++q) {
      const int64_t at = FirstMismatch(t, q * block, std::min(t.num_elements(), (q + 1) * block), expected(q));
      if (at >= 0) return wrong(t, at, expected(q));
    }
    return absl::OkStatus();
  };
  const double sum = n * (n + 1) / 2.0;
  switch (op) {
    case BenchOp::kAllReduce:
      return check_blocks(b.input, b.input.num_elements() + 1, [&](int) { return sum; });
    case BenchOp::kBroadcast:
      return check_blocks(b.input, b.input.num_elements() + 1, [](int) { return 1.0; });
    case BenchOp::kReduceScatter:
      return check_blocks(b.output, b.output.num_elements() + 1, [&](int) { return sum; });
    case BenchOp::kAllGather:
    case BenchOp::kAllToAll:
      // Block q of the output came from rank q.
      return check_blocks(b.output, std::max<int64_t>(b.count, 1), [](int q) { return q + 1.0; });
  }
  return absl::OkStatus();
}

absl::Status RunOp(Collectives& comm, BenchOp op, OpBuffers& b, const std::string& name) {
  switch (op) {
    case BenchOp::kAllReduce:
      return comm.AllReduce(b.input, ReduceOp::kSum, name).Wait();
    case BenchOp::kReduceScatter:
      return comm.ReduceScatter(b.input, b.output, ReduceOp::kSum, name).Wait();
    case BenchOp::kAllGather:
      return comm.AllGather(b.input, b.output, name).Wait();
    case BenchOp::kBroadcast:
      return comm.Broadcast(b.input, /*root=*/0, name).Wait();
    case BenchOp::kAllToAll:
      return comm.AllToAll(b.input, b.output, name).Wait();
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// Peers: the raw library's all-reduce (sum, in place), timed beside ours.

class PeerAllReduce {
 public:
  virtual ~PeerAllReduce() = default;
  // What is measured, for the table's header.
  virtual std::string Describe() const = 0;
  virtual absl::Status Run(Tensor& inout) = 0;
};

#ifdef TESSERA_HAS_MPI
class MpiPeer final : public PeerAllReduce {
 public:
  std::string Describe() const override {
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    MPI_Get_library_version(version, &length);
    std::string library(version, static_cast<size_t>(std::max(length, 0)));
    library = library.substr(0, library.find_first_of(",\n"));
    return absl::StrCat("MPI_Allreduce (in place) on MPI_COMM_WORLD, ", library);
  }
  absl::Status Run(Tensor& inout) override {
    MPI_Datatype type = inout.dtype() == DType::kF32   ? MPI_FLOAT
                        : inout.dtype() == DType::kF64 ? MPI_DOUBLE
                        : inout.dtype() == DType::kI32 ? MPI_INT32_T
                                                       : MPI_INT64_T;
    const int code = MPI_Allreduce(MPI_IN_PLACE, inout.raw_data(), static_cast<int>(inout.num_elements()), type,
                                   MPI_SUM, MPI_COMM_WORLD);
    if (code != MPI_SUCCESS) return absl::InternalError(absl::StrCat("MPI_Allreduce failed with code ", code));
    return absl::OkStatus();
  }
};
#endif

#ifdef TESSERA_HAS_GLOO
class GlooPeer final : public PeerAllReduce {
 public:
  // Connects a Gloo context of its own through the job's store, the way GlooCollectives
  // connects its: the TCP transport on 127.0.0.1, a full mesh, GlooStore as the adapter.
  static absl::StatusOr<std::unique_ptr<GlooPeer>> Connect(const WorldInfo& world, absl::Duration timeout) {
    TSR_ASSIGN_OR_RETURN(std::unique_ptr<TcpKeyValueStore> store,
                         TcpKeyValueStore::Connect(world.coordinator_host, world.coordinator_port, world.token));
    const auto millis = std::chrono::milliseconds(absl::ToInt64Milliseconds(timeout));
    try {
      GlooStore adapter(*store, timeout);
      gloo::rendezvous::PrefixStore prefixed("tessera/bench-peer", adapter);
      gloo::transport::tcp::attr attr;
      attr.hostname = kLoopbackHost;
      attr.ai_family = AF_INET;
      auto context = std::make_shared<gloo::rendezvous::Context>(world.rank, world.world_size);
      context->setTimeout(millis);
      std::shared_ptr<gloo::transport::Device> device = gloo::transport::tcp::CreateDevice(attr);
      context->connectFullMesh(prefixed, device);
      return std::unique_ptr<GlooPeer>(new GlooPeer(std::move(context), millis));
    } catch (const GlooStoreError& e) {
      return absl::Status(e.status().code(), absl::StrCat("the Gloo peer's rendezvous: ", e.status().message()));
    } catch (const std::exception& e) {
      return absl::UnavailableError(absl::StrCat("connecting the Gloo peer's context failed: ", e.what()));
    }
  }

  std::string Describe() const override { return "gloo::allreduce (ring, gloo::sum) over TCP on 127.0.0.1"; }

  absl::Status Run(Tensor& inout) override {
    try {
      switch (inout.dtype()) {
        case DType::kF32:
          return RunTyped<float>(inout);
        case DType::kF64:
          return RunTyped<double>(inout);
        case DType::kI32:
          return RunTyped<int32_t>(inout);
        default:
          return RunTyped<int64_t>(inout);
      }
    } catch (const std::exception& e) {
      return absl::UnavailableError(absl::StrCat("gloo::allreduce failed: ", e.what()));
    }
  }

 private:
  GlooPeer(std::shared_ptr<gloo::Context> context, std::chrono::milliseconds timeout)
      : context_(std::move(context)), timeout_(timeout) {}

  template <typename T>
  absl::Status RunTyped(Tensor& inout) {
    gloo::AllreduceOptions options(context_);
    options.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
    options.setOutput<T>(inout.data<T>(), static_cast<size_t>(inout.num_elements()));
    options.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<T>));
    options.setTag(tag_++);
    options.setTimeout(timeout_);
    gloo::allreduce(options);
    return absl::OkStatus();
  }

  const std::shared_ptr<gloo::Context> context_;
  const std::chrono::milliseconds timeout_;
  uint32_t tag_ = 0;
};
#endif

// ---------------------------------------------------------------------------------------
// One rank's run.

double Median(std::vector<double> values) {
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2 == 1) return values[mid];
  return (values[mid] + *std::max_element(values.begin(), values.begin() + mid)) / 2;
}

// Runs each of `ops` config.warmup times untimed, then config.iters times timed, and
// returns each one's median in seconds. Several ops are timed in turns of a tenth of the
// iterations (ours, the peer's, ours, ...), so that a machine whose speed drifts during
// the run (a shared VM) slows both alike instead of whichever ran during the slow spell.
absl::StatusOr<std::vector<double>> TimeIterations(const BenchConfig& config,
                                                   const std::vector<std::function<absl::Status()>>& ops) {
  for (const auto& op : ops) {
    for (int i = 0; i < config.warmup; ++i) TSR_RETURN_IF_ERROR(op());
  }
  const int turn = ops.size() > 1 ? std::max(1, config.iters / 10) : config.iters;
  std::vector<std::vector<double>> seconds(ops.size());
  for (int done = 0; done < config.iters; done += turn) {
    for (size_t k = 0; k < ops.size(); ++k) {
      for (int i = done; i < std::min(config.iters, done + turn); ++i) {
        const auto start = std::chrono::steady_clock::now();
        TSR_RETURN_IF_ERROR(ops[k]());
        seconds[k].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
    }
  }
  std::vector<double> medians;
  for (std::vector<double>& s : seconds) medians.push_back(Median(std::move(s)));
  return medians;
}

// Whether every rank's check passed (a rank whose check failed still takes part, so that
// the others stop with it instead of waiting for it at the next collective).
absl::Status AgreeOnCheck(Collectives& comm, const absl::Status& mine, int64_t bytes) {
  Tensor failed(DType::kI64, Shape{1});
  failed.data<int64_t>()[0] = mine.ok() ? 0 : 1;
  TSR_RETURN_IF_ERROR(comm.AllReduceSync(failed, ReduceOp::kMax, absl::StrCat("bench/check/", bytes)));
  if (!mine.ok()) return mine;
  if (failed.data<int64_t>()[0] != 0) {
    return absl::InternalError(absl::StrCat("another rank's result check failed at ", bytes, " bytes"));
  }
  return absl::OkStatus();
}

std::string FormatRow(const BenchConfig& config, const OpBuffers& b, double seconds, std::optional<double> peer) {
  const double algbw = b.bytes / seconds / 1e9;
  const double busbw = algbw * BusFactor(config.op, config.np);
  std::string row = absl::StrFormat("%14d %12d %6s %14s %11.2f %12.3f %12.3f", b.bytes, b.count,
                                    DTypeName(config.dtype), OpName(config.op), seconds * 1e6, algbw, busbw);
  if (peer.has_value()) {
    const double peer_busbw = b.bytes / *peer / 1e9 * BusFactor(config.op, config.np);
    // ours / peer busbw: the peer's time over ours (defined when busbw is 0, as on 1 rank).
    absl::StrAppendFormat(&row, " %14.2f %11.3f %6.2f", *peer * 1e6, peer_busbw, *peer / seconds);
  }
  return row;
}

// Every rank runs this; `out` is set on rank 0 only, which prints the table.
absl::Status BenchRank(Collectives& comm, const BenchConfig& config, PeerAllReduce* peer, std::ostream* out) {
  const int rank = comm.rank();
  const int n = comm.world_size();
  if (out != nullptr) {
    *out << "# tessera bench-collectives: " << OpName(config.op) << " over " << n << (n == 1 ? " rank" : " ranks")
         << ", backend " << config.backend << ", " << DTypeName(config.dtype)
         << (config.op == BenchOp::kAllReduce || config.op == BenchOp::kReduceScatter ? " sum" : "") << ", "
         << config.iters << " iterations after " << config.warmup << " warm-up\n"
         << "# time: median of the iterations, the slowest rank's; algbw = size / time; busbw = algbw x "
         << (config.op == BenchOp::kAllReduce   ? "2(n-1)/n"
             : config.op == BenchOp::kBroadcast ? "1"
                                                : "(n-1)/n")
         << "\n";
#ifdef TESSERA_HAS_MPI
    if (const auto* mpi = dynamic_cast<const MpiCollectives*>(&comm)) {
      *out << "# mpi: descriptors and all-reduces "
           << (mpi->shared_memory() ? "on a shared-memory board (TESSERA_MPI_SHARED_MEMORY=0: MPI messages)"
                                    : "in MPI messages")
           << "\n";
    }
#endif
    if (peer != nullptr) *out << "# peer: " << peer->Describe() << "\n";
    *out << "#\n"
         << absl::StrFormat("#%13s %12s %6s %14s %11s %12s %12s", "size(B)", "count", "type", "op", "time(us)",
                            "algbw(GB/s)", "busbw(GB/s)");
    if (peer != nullptr) *out << absl::StrFormat(" %14s %11s %6s", "peer time(us)", "peer busbw", "ratio");
    *out << std::endl;
  }
  double busbw_total = 0, peer_busbw_total = 0;
  int rows = 0;
  for (int64_t bytes = config.min_bytes; bytes <= config.max_bytes; bytes *= 2) {
    const std::string name = absl::StrCat("bench/", OpName(config.op), "/", bytes);
    OpBuffers b = MakeBuffers(config.op, config.dtype, bytes, n);
    TSR_RETURN_IF_ERROR(comm.BarrierSync(absl::StrCat(name, "/barrier")));
    FillForCheck(rank, b);
    absl::Status checked = RunOp(comm, config.op, b, name);
    if (checked.ok()) checked = CheckResult(config.op, rank, n, b, "ours:");
    TSR_RETURN_IF_ERROR(AgreeOnCheck(comm, checked, bytes));
    Fill(b.input, 0);
    std::vector<std::function<absl::Status()>> ops = {[&] { return RunOp(comm, config.op, b, name); }};
    OpBuffers p;
    if (peer != nullptr) {
      p = MakeBuffers(config.op, config.dtype, bytes, n);
      TSR_RETURN_IF_ERROR(comm.BarrierSync(absl::StrCat(name, "/peer-barrier")));
      FillForCheck(rank, p);
      checked = peer->Run(p.input);
      if (checked.ok()) checked = CheckResult(config.op, rank, n, p, "peer:");
      TSR_RETURN_IF_ERROR(AgreeOnCheck(comm, checked, bytes));
      Fill(p.input, 0);
      ops.push_back([&] { return peer->Run(p.input); });
    }
    TSR_ASSIGN_OR_RETURN(std::vector<double> seconds, TimeIterations(config, ops));
    Tensor times(DType::kF64, Shape{2});
    times.data<double>()[0] = seconds[0];
    if (peer != nullptr) times.data<double>()[1] = seconds[1];
    // The slowest rank's time, as nccl-tests reports with -a 3.
    TSR_RETURN_IF_ERROR(comm.AllReduceSync(times, ReduceOp::kMax, absl::StrCat(name, "/times")));
    const double ours = times.data<double>()[0];
    std::optional<double> theirs;
    if (peer != nullptr) theirs = times.data<double>()[1];
    busbw_total += b.bytes / ours / 1e9 * BusFactor(config.op, n);
    if (theirs) peer_busbw_total += b.bytes / *theirs / 1e9 * BusFactor(config.op, n);
    ++rows;
    if (out != nullptr) *out << FormatRow(config, b, ours, theirs) << std::endl;
  }
  if (out != nullptr && rows > 0) {
    *out << absl::StrFormat("# average busbw: %.3f GB/s", busbw_total / rows);
    if (peer != nullptr) *out << absl::StrFormat(" (peer: %.3f GB/s)", peer_busbw_total / rows);
    *out << std::endl;
  }
  return absl::OkStatus();
}

// The ranks as threads of this process.
absl::Status RunInProcess(const BenchConfig& config, std::ostream& out) {
  TSR_ASSIGN_OR_RETURN(std::shared_ptr<InProcessCommunicator> communicator,
                       InProcessCommunicator::Create(config.np, CollectivesOptions{}));
  std::vector<std::unique_ptr<Collectives>> ranks;
  for (int r = 0; r < config.np; ++r) ranks.push_back(communicator->ForRank(r));
  std::vector<absl::Status> statuses(config.np);
  std::vector<std::thread> threads;
  for (int r = 0; r < config.np; ++r) {
    threads.emplace_back([&, r] { statuses[r] = BenchRank(*ranks[r], config, nullptr, r == 0 ? &out : nullptr); });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& s : statuses) TSR_RETURN_IF_ERROR(s);
  return absl::OkStatus();
}

// One worker process of a gloo or mpi job started by RunJob.
absl::Status RunWorker(const BenchConfig& config, std::ostream& out) {
  TSR_ASSIGN_OR_RETURN(WorldInfo world, WorldInfoFromEnvironment());
  if (world.world_size != config.np || world.backend != config.backend) {
    return absl::FailedPreconditionError(
        absl::StrCat("--worker is for the processes this command starts itself: the environment says rank ", world.rank,
                     " of ", world.world_size, " under backend ", world.backend, ", the flags --np ", config.np,
                     " --backend ", config.backend));
  }
  const CollectivesOptions options;
  TSR_ASSIGN_OR_RETURN(std::shared_ptr<Collectives> comm, JoinWorld(world, options));
  std::unique_ptr<PeerAllReduce> peer;
  if (config.peer && config.backend == "mpi") {
#ifdef TESSERA_HAS_MPI
    TSR_ASSIGN_OR_RETURN(MpiProcessInfo mpi, InitializeMpi());
    if (!mpi.thread_multiple) {
      return absl::FailedPreconditionError("--peer needs MPI_THREAD_MULTIPLE, which this MPI library does not provide");
    }
    peer = std::make_unique<MpiPeer>();
#endif
  }
  if (config.peer && config.backend == "gloo") {
#ifdef TESSERA_HAS_GLOO
    TSR_ASSIGN_OR_RETURN(peer, GlooPeer::Connect(world, options.timeout));
#endif
  }
  return BenchRank(*comm, config, peer.get(), world.rank == 0 ? &out : nullptr);
}

// Passes a job's stdout on without the launcher's "[rank 0] " prefix (only rank 0 prints:
// the table reads as nccl-tests' does). Other lines pass unchanged.
class RankZeroLines : public std::streambuf {
 public:
  explicit RankZeroLines(std::ostream& out) : out_(out) {}

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    if (matched_ >= 0) {
      if (ch == kPrefix[matched_]) {
        if (static_cast<size_t>(++matched_) == kPrefix.size()) matched_ = -1;
        return c;
      }
      out_.write(kPrefix.data(), matched_);
      matched_ = -1;
    }
    out_.put(ch);
    if (ch == '\n') matched_ = 0;
    return c;
  }
  int sync() override {
    out_.flush();
    return 0;
  }

 private:
  static constexpr absl::string_view kPrefix = "[rank 0] ";
  std::ostream& out_;
  int matched_ = 0;  // prefix characters matched at the start of a line; -1 past them
};

// Starts this command again as config.np workers under the launcher.
absl::StatusOr<int> RunJob(const BenchConfig& config, const std::vector<std::string>& args, std::ostream& out,
                           std::ostream& err) {
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0) return absl::InternalError("cannot find this program's path (/proc/self/exe)");
  LaunchOptions launch;
  launch.nproc = config.np;
  launch.backend = config.backend;
  launch.argv = {std::string(self, static_cast<size_t>(length)), "bench-collectives"};
  launch.argv.insert(launch.argv.end(), args.begin(), args.end());
  launch.argv.push_back("--worker");
  RankZeroLines lines(out);
  std::ostream table(&lines);
  launch.worker_stdout = &table;
  launch.worker_stderr = &err;
  return Launch(launch, err);
}

}  // namespace

int RunBenchCollectives(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  FlagParser flags;
  BenchConfig config;
  std::string op_name = "allreduce", min_text = "4K", max_text = "64M", dtype_name = "f32";
  int64_t np = 2, iters = 20, warmup = 5;
  bool worker = false;
  flags.AddString("backend", '\0', "NAME", &config.backend, "inprocess, gloo or mpi (required)");
  flags.AddInt("np", 'n', "N", &np, "ranks: threads (inprocess) or processes (default 2)");
  flags.AddString("op", '\0', "OP", &op_name,
                  "allreduce (default), reduce_scatter, all_gather, broadcast or all_to_all");
  flags.AddString("min-bytes", '\0', "B", &min_text, "smallest message (default 4K)");
  flags.AddString("max-bytes", '\0', "B", &max_text, "largest message, at most 1G (default 64M)");
  flags.AddInt("iters", '\0', "N", &iters, "timed iterations per size (default 20)");
  flags.AddInt("warmup", '\0', "N", &warmup, "untimed iterations before them (default 5)");
  flags.AddString("dtype", '\0', "T", &dtype_name, "element type: f32 (default), f64, i32 or i64");
  flags.AddBool("peer", '\0', &config.peer, "also time the raw library's all-reduce (gloo, mpi)");
  flags.AddBool("worker", '\0', &worker, "(internal) run as one rank of the job this command starts");
  absl::StatusOr<std::vector<std::string>> positionals = flags.Parse(args);
  if (!positionals.ok()) return UsageError(err, "bench-collectives", positionals.status().message());
  if (flags.help_requested()) {
    PrintHelp(out, kUsage, kDescription, flags);
    return kExitOk;
  }
  if (!positionals->empty()) {
    return UsageError(err, "bench-collectives", absl::StrCat("unexpected argument '", positionals->front(), "'"));
  }
  if (config.backend.empty()) return UsageError(err, "bench-collectives", "--backend is required");
  if (config.backend != "inprocess" && config.backend != "gloo" && config.backend != "mpi") {
    return UsageError(err, "bench-collectives",
                      absl::StrCat("--backend is '", config.backend, "' but inprocess, gloo or mpi is required"));
  }
  if (np < 1 || np > 256) return UsageError(err, "bench-collectives", "--np must be in [1, 256]");
  config.np = static_cast<int>(np);
  bool known_op = false;
  for (const auto& entry : kOps) {
    if (op_name == entry.name) {
      config.op = entry.op;
      known_op = true;
    }
  }
  if (!known_op) {
    return UsageError(err, "bench-collectives",
                      absl::StrCat("--op is '", op_name,
                                   "' but allreduce, reduce_scatter, all_gather, broadcast or all_to_all is required"));
  }
  absl::StatusOr<DType> dtype = ParseDType(dtype_name);
  if (!dtype.ok() || !IsReducibleDType(*dtype)) {
    return UsageError(err, "bench-collectives",
                      absl::StrCat("--dtype is '", dtype_name, "' but f32, f64, i32 or i64 is required"));
  }
  config.dtype = *dtype;
  std::optional<int64_t> min_bytes = ParseBytes(min_text), max_bytes = ParseBytes(max_text);
  if (!min_bytes || !max_bytes) {
    return UsageError(err, "bench-collectives",
                      absl::StrCat("--min-bytes and --max-bytes take a byte count such as 4096, 4K or 64M, not '",
                                   min_bytes ? max_text : min_text, "'"));
  }
  const int64_t smallest = static_cast<int64_t>(DTypeSize(config.dtype)) * config.np;
  if (*min_bytes < smallest || *max_bytes < *min_bytes || *max_bytes > (int64_t{1} << 30)) {
    return UsageError(err, "bench-collectives",
                      absl::StrCat("the sizes must satisfy ", smallest, " (an element per rank) <= --min-bytes <= ",
                                   "--max-bytes <= 1G; got ", *min_bytes, " and ", *max_bytes));
  }
  config.min_bytes = *min_bytes;
  config.max_bytes = *max_bytes;
  if (iters < 1 || iters > 100000 || warmup < 0 || warmup > 100000) {
    return UsageError(err, "bench-collectives", "--iters must be in [1, 100000] and --warmup in [0, 100000]");
  }
  config.iters = static_cast<int>(iters);
  config.warmup = static_cast<int>(warmup);
  if (config.peer && config.backend == "inprocess") {
    return UsageError(err, "bench-collectives", "--peer needs --backend gloo or mpi (a library to compare with)");
  }
  if (config.peer && config.op != BenchOp::kAllReduce) {
    return UsageError(err, "bench-collectives", "--peer times the library's all-reduce: it needs --op allreduce");
  }
#ifndef TESSERA_HAS_GLOO
  if (config.backend == "gloo") {
    return Failure(err, "bench-collectives", absl::UnimplementedError("this build has no Gloo backend"));
  }
#endif
#ifndef TESSERA_HAS_MPI
  if (config.backend == "mpi") {
    return Failure(err, "bench-collectives", absl::UnimplementedError("this build has no MPI backend"));
  }
#endif

  if (config.backend == "inprocess") {
    if (worker) return UsageError(err, "bench-collectives", "--worker is for the gloo and mpi backends");
    absl::Status status = RunInProcess(config, out);
    return status.ok() ? kExitOk : Failure(err, "bench-collectives", status);
  }
  if (worker) {
    absl::Status status = RunWorker(config, out);
    return status.ok() ? kExitOk : Failure(err, "bench-collectives", status);
  }
  absl::StatusOr<int> code = RunJob(config, args, out, err);
  if (!code.ok()) return Failure(err, "bench-collectives", code.status());
  return *code;
}

}  // namespace tsr::cli
