// SharedMemoryExchange: the board one machine's ranks share (a POSIX shared-memory segment
// rank 0 creates and the others map), its publish-and-poll exchange, and MakeExchange,
// which picks the board or MPI messages for a communicator.
#include "runtime/collectives/mpi/mpi_shared_memory_exchange.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "runtime/collectives/cross_process/elementwise_reduce.h"
#include "runtime/collectives/mpi/mpi_process.h"

namespace tsr {
namespace mpi_internal {
namespace {

// What every rank's region starts with (a cache line of its own). Counts, not sequence
// numbers, so that the segment's zeros mean "nothing yet".
struct alignas(64) RankControl {
  std::atomic<int64_t> published;  // seq + 1 of the last collective this rank published
  std::atomic<int64_t> gave_up;    // seq + 1 of the collective it gave up on; 0: none
  // A large all-reduce's chunks (counted over the communicator's life, chunk c in chunk
  // buffer c % 2): how many this rank has put in its buffer, reduced its piece of, and
  // taken every piece of.
  std::atomic<int64_t> chunks_in;
  std::atomic<int64_t> chunks_reduced;
  std::atomic<int64_t> chunks_out;
};
static_assert(std::atomic<int64_t>::is_always_lock_free, "the board's counters are shared between processes");

constexpr int kSlots = 2;
// The chunk buffers of a large all-reduce, two per rank (two ranks, fast spell: 2-16 MiB
// all-reduces 1.65-2.5x MPI_Allreduce with 512 KiB chunks against 1.02-1.75x with 256 KiB;
// 1 and 2 MiB chunks no better).
constexpr size_t kChunkBytes = size_t{512} << 10;
constexpr size_t kPageBytes = 4096;
// The segment's first page: written by rank 0 before the others map it, so that a rank
// that opened something else by that name (another job's) notices.
struct SegmentHeader {
  uint64_t token;
  int64_t world_size;
  uint64_t region_bytes;
};

size_t RoundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// A slot: the descriptor's kDescriptorWireBytes, then the largest eager payload.
size_t SlotBytes(int world_size) {
  return kDescriptorWireBytes + RoundUp(kEagerAllReduceBytes / static_cast<size_t>(world_size - 1), 64);
}
// A rank's region, whole pages so that no two ranks write the same line or page: its
// control line, its slots, its chunk buffers.
size_t RegionBytes(int world_size) {
  return RoundUp(sizeof(RankControl) + kSlots * SlotBytes(world_size) + kSlots * kChunkBytes, kPageBytes);
}

// The segment, mapped; unmapped with the object.
class MappedSegment {
 public:
  MappedSegment(void* base, size_t bytes) : base_(static_cast<char*>(base)), bytes_(bytes) {}
  ~MappedSegment() { munmap(base_, bytes_); }
  MappedSegment(const MappedSegment&) = delete;
  MappedSegment& operator=(const MappedSegment&) = delete;
  char* base() const { return base_; }

 private:
  char* const base_;
  const size_t bytes_;
};

// Maps the segment `name` (creating it, `bytes` long, with `create`). Null on any failure
// (the communicator then exchanges messages).
std::unique_ptr<MappedSegment> MapSegment(const std::string& name, size_t bytes, bool create) {
  const int fd = shm_open(name.c_str(), create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
  if (fd < 0) return nullptr;
  struct stat st;
  bool ok = create ? ftruncate(fd, static_cast<off_t>(bytes)) == 0
                   : fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) == bytes;
  void* base = ok ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  close(fd);
  if (base == MAP_FAILED) {
    if (create) shm_unlink(name.c_str());
    return nullptr;
  }
  return std::make_unique<MappedSegment>(base, bytes);
}

// The processor's hint that this thread spins on memory another core writes.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Copies `bytes` from `src` to the board at `dst` (64-byte aligned) with stores that go
// past this core's caches: the other ranks read the bytes from memory instead of from this
// core's cache, which on this machine's slower spells (its two cores then on different
// dies, as far as one can tell) moves a chunk 4-7x faster. The stores are ordered before
// the release store that publishes them by the fence at the end.
void StreamToBoard(char* dst, const char* src, size_t bytes) {
#if defined(__x86_64__) || defined(__i386__)
  size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), d);
  }
  std::memcpy(dst + i, src + i, bytes - i);
  _mm_sfence();
#else
  std::memcpy(dst, src, bytes);
#endif
}

// From this size on an eager tensor goes to its slot past the caches too (two ranks, fast
// spell: 16 KiB 2.43 us against 2.75, 128 KiB 13.0 against 18.9; below it the streamed
// stores cost more than they save there: 4 KiB 1.11 against 0.81).
constexpr size_t kStreamedPayloadBytes = size_t{16} << 10;

class SharedMemoryExchange final : public CollectiveExchange {
 public:
  SharedMemoryExchange(std::unique_ptr<MappedSegment> segment, int rank, int world_size)
      : CollectiveExchange(rank, world_size),
        segment_(std::move(segment)),
        region_bytes_(RegionBytes(world_size)),
        slot_bytes_(SlotBytes(world_size)),
        taken_(world_size, false) {}

  void Close() override {}
  bool shared_memory() const override { return true; }

  void Post() override {
    char* slot = Slot(rank_);
    EncodeDescriptor(descriptors_[rank_], seq_, slot);
    if (eager()) {
      if (payload_->num_bytes() >= kStreamedPayloadBytes) {
        StreamToBoard(slot + kDescriptorWireBytes, static_cast<const char*>(payload_->raw_data()),
                      payload_->num_bytes());
      } else {
        std::memcpy(slot + kDescriptorWireBytes, payload_->raw_data(), payload_->num_bytes());
      }
    }
    Control(rank_).published.store(seq_ + 1, std::memory_order_release);
  }

  absl::StatusOr<bool> Progress(bool wait, std::vector<ParkedRequests>* /*parked*/) override {
    int polls = 0;
    while (true) {
      for (int q = 0; q < world_size_; ++q) {
        if (q == rank_) continue;
        const RankControl& control = Control(q);
        // (Also from a rank that arrived: it may give up waiting for another.)
        if (const int64_t gave_up = control.gave_up.load(std::memory_order_relaxed); gave_up > 0) {
          gave_up_seq_[q] = gave_up - 1;
          any_notice_ = true;
        }
        // Rank q may be one collective ahead (it finished this one): its slot for this one
        // stays until this rank publishes the next.
        if (taken_[q] || control.published.load(std::memory_order_acquire) <= seq_) continue;
        TSR_RETURN_IF_ERROR(Take(q));
      }
      // A rank that gave up on an earlier collective will not come: fail now. One that gave
      // up on this one did so waiting for another rank: fail once every rank is here (as
      // the message exchange does), while waiting for one that is not, time out naming it.
      if (any_notice_) TSR_RETURN_IF_ERROR(NoticesError(/*current=*/arrived_ == world_size_));
      if (arrived_ == world_size_) return true;
      switch (AfterPoll(wait, &polls)) {
        case Pace::kPollAgain:
          CpuRelax();
          break;
        case Pace::kReturn:
          return false;
        case Pace::kDeadline:
          return GiveUp();
      }
    }
  }

  const void* payload(int q) const override { return Slot(q) + kDescriptorWireBytes; }

  bool moves_all_reduces() const override { return true; }

  // Chunk by chunk, through the chunk buffers: every rank puts its chunk there (but for
  // its own piece of it, SplitBegin of the chunk's elements, which only it reads), reduces
  // its piece in rank order from every rank's buffer into its own tensor and its buffer,
  // then takes the other pieces from their owners' buffers. Each element is reduced once,
  // by its owner: the same bits everywhere. A rank reuses a buffer once every rank has
  // taken the chunk before from it.
  absl::Status MoveAllReduce(Tensor& inout, ReduceOp op) override {
    const DType dtype = inout.dtype();
    const size_t esize = DTypeSize(dtype);
    const int64_t total = inout.num_elements();
    char* data = static_cast<char*>(inout.raw_data());
    const int64_t chunk_elements = static_cast<int64_t>(kChunkBytes / esize);
    // Pieces start on 64-byte boundaries, so that no two ranks write one cache line.
    const int64_t align = std::max<int64_t>(1, 64 / static_cast<int64_t>(esize));
    auto piece_begin = [&](int64_t n, int q) {
      return q == world_size_ ? n : std::min(n, SplitBegin(n / align, world_size_, q) * align);
    };
    const absl::Time deadline = absl::Now() + timeout_;
    for (int64_t begin = 0; begin < total; begin += chunk_elements) {
      const int64_t n = std::min(chunk_elements, total - begin);
      const int64_t chunk = chunks_++;
      const int buffer = static_cast<int>(chunk % kSlots);
      char* chunk_data = data + begin * esize;
      const size_t mine_begin = static_cast<size_t>(piece_begin(n, rank_)) * esize;
      const size_t mine_end = static_cast<size_t>(piece_begin(n, rank_ + 1)) * esize;
      char* own = ChunkBuffer(rank_, buffer);
      TSR_RETURN_IF_ERROR(WaitForAll(&RankControl::chunks_out, chunk - 1, deadline, chunk, "free its chunk buffer"));
      StreamToBoard(own, chunk_data, mine_begin);
      StreamToBoard(own + mine_end, chunk_data + mine_end, n * esize - mine_end);
      Control(rank_).chunks_in.store(chunk + 1, std::memory_order_release);
      TSR_RETURN_IF_ERROR(WaitForAll(&RankControl::chunks_in, chunk + 1, deadline, chunk, "put in its chunk"));
      ReduceInRankOrder(
          dtype, op, world_size_, rank_, [&](int q) -> const void* { return ChunkBuffer(q, buffer) + mine_begin; },
          chunk_data + mine_begin, own + mine_begin, (mine_end - mine_begin) / esize);
      StreamToBoard(own + mine_begin, chunk_data + mine_begin, mine_end - mine_begin);
      Control(rank_).chunks_reduced.store(chunk + 1, std::memory_order_release);
      TSR_RETURN_IF_ERROR(WaitForAll(&RankControl::chunks_reduced, chunk + 1, deadline, chunk, "reduce its piece"));
      for (int q = 0; q < world_size_; ++q) {
        if (q == rank_) continue;
        const size_t from = static_cast<size_t>(piece_begin(n, q)) * esize;
        const size_t to = static_cast<size_t>(piece_begin(n, q + 1)) * esize;
        std::memcpy(chunk_data + from, ChunkBuffer(q, buffer) + from, to - from);
      }
      Control(rank_).chunks_out.store(chunk + 1, std::memory_order_release);
    }
    return absl::OkStatus();
  }

 private:
  void Restart(int /*tag*/) override {
    std::fill(taken_.begin(), taken_.end(), false);
    taken_[rank_] = true;
    arrived_ = 1;
  }

  RankControl& Control(int q) const {
    return *reinterpret_cast<RankControl*>(segment_->base() + kPageBytes + static_cast<size_t>(q) * region_bytes_);
  }
  // Rank q's slot for the current collective.
  char* Slot(int q) const {
    return reinterpret_cast<char*>(&Control(q)) + sizeof(RankControl) +
           static_cast<size_t>(seq_ % kSlots) * slot_bytes_;
  }

  // Rank q's chunk buffer `i`.
  char* ChunkBuffer(int q, int i) const {
    return reinterpret_cast<char*>(&Control(q)) + sizeof(RankControl) + kSlots * slot_bytes_ +
           static_cast<size_t>(i) * kChunkBytes;
  }

  // Waits until every other rank's `counter` reaches `target` (chunk `chunk`'s step: what
  // it is, for errors), or fails at the deadline naming the ranks behind -- after saying on
  // the board that this rank gave up -- or at once when another rank gave up.
  absl::Status WaitForAll(std::atomic<int64_t> RankControl::*counter, int64_t target, absl::Time deadline,
                          int64_t chunk, absl::string_view what) {
    absl::Time first = absl::InfinitePast();  // the first clock reading of this wait
    for (int polls = 1;; ++polls) {
      bool all = true;
      for (int q = 0; q < world_size_; ++q) {
        if (q == rank_) continue;
        const RankControl& control = Control(q);
        if (const int64_t gave_up = control.gave_up.load(std::memory_order_relaxed); gave_up > 0) {
          return absl::DeadlineExceededError(absl::StrCat(Where(), ": rank ", q, " of ", world_size_,
                                                          " gave up (on seq ", gave_up - 1, ") while rank ", rank_,
                                                          " moved this all-reduce's data through shared memory"));
        }
        all = all && (control.*counter).load(std::memory_order_acquire) >= target;
      }
      if (all) return absl::OkStatus();
      if (polls % 64 != 0) {
        CpuRelax();
        continue;
      }
      const absl::Time now = absl::Now();
      if (first == absl::InfinitePast()) first = now;
      if (now >= deadline) {
        Control(rank_).gave_up.store(seq_ + 1, std::memory_order_release);
        std::vector<int> behind;
        for (int q = 0; q < world_size_; ++q) {
          if (q != rank_ && (Control(q).*counter).load(std::memory_order_acquire) < target) behind.push_back(q);
        }
        return absl::DeadlineExceededError(
            absl::StrCat(Where(), ": rank ", rank_, " waited ", absl::FormatDuration(timeout_),
                         " in the data movement (chunk ", chunk, ") for rank", behind.size() > 1 ? "s " : " ",
                         absl::StrJoin(behind, ", "), " of ", world_size_, " to ", what, " (a rank may have died)"));
      }
      WaitBeforePolling(now - first, deadline - now);
    }
  }

  // Reads rank q's descriptor for this collective from its slot.
  absl::Status Take(int q) {
    int64_t seq = 0;
    if (absl::Status d = DecodeDescriptorInto(Slot(q), &seq, nullptr, &descriptors_[q]); !d.ok()) {
      return absl::DataLossError(absl::StrCat(Where(), ": from rank ", q, "'s shared-memory slot: ", d.message()));
    }
    if (seq != seq_) {
      return absl::InternalError(absl::StrCat(Where(), ": rank ", q, " published the descriptor of seq ", seq,
                                              " (the communicator's ranks are out of step)"));
    }
    taken_[q] = true;
    ++arrived_;
    return absl::OkStatus();
  }

  // The deadline passed: says so on the board (a rank arriving later fails at once) and
  // names the ranks that did not arrive.
  absl::Status GiveUp() {
    Control(rank_).gave_up.store(seq_ + 1, std::memory_order_release);
    std::vector<int> missing;
    for (int q = 0; q < world_size_; ++q) {
      if (!taken_[q]) missing.push_back(q);
    }
    return MissingRanksError(Where(), rank_, timeout_, missing, world_size_);
  }

  const std::unique_ptr<MappedSegment> segment_;
  const size_t region_bytes_;
  const size_t slot_bytes_;
  std::vector<bool> taken_;  // by rank: its descriptor for this collective was read
  int arrived_ = 0;
  int64_t chunks_ = 0;  // the large all-reduces' chunks so far (the same count on every rank)
};

// TESSERA_MPI_SHARED_MEMORY: unset or 1 (the board where it can serve), 0 (messages).
absl::StatusOr<bool> SharedMemoryWanted() {
  const char* value = std::getenv("TESSERA_MPI_SHARED_MEMORY");
  if (value == nullptr || std::strcmp(value, "1") == 0) return true;
  if (std::strcmp(value, "0") == 0) return false;
  return absl::InvalidArgumentError(
      absl::StrCat("TESSERA_MPI_SHARED_MEMORY must be 0 (MPI messages) or 1 (a shared-memory board where every rank "
                   "runs on one machine), not '",
                   value, "'"));
}

// Whether every rank passes `mine` (a collective call over comm).
absl::StatusOr<bool> Everyone(MPI_Comm comm, bool mine, absl::string_view what) {
  int all = mine ? 1 : 0;
  TSR_RETURN_IF_ERROR(
      MpiStatus(MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, comm), absl::StrCat("MpiCollectives: ", what)));
  return all == 1;
}

// The board for `comm`, or null where it cannot serve (see MakeExchange). Every rank
// makes the same MPI calls whatever happens on it.
absl::StatusOr<std::unique_ptr<CollectiveExchange>> MakeBoard(MPI_Comm comm, int rank, int world_size, bool wanted) {
  ScopedMpiCall mpi;
  bool one_machine = false;
  {
    MPI_Comm node = MPI_COMM_NULL;
    TSR_RETURN_IF_ERROR(MpiStatus(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
                                  "MpiCollectives: MPI_Comm_split_type"));
    int node_size = 0;
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    one_machine = node_size == world_size;
  }
  TSR_ASSIGN_OR_RETURN(const bool board, Everyone(comm, wanted && one_machine && world_size > 1, "MPI_Allreduce"));
  if (!board) return nullptr;

  const size_t bytes = kPageBytes + static_cast<size_t>(world_size) * RegionBytes(world_size);
  // Rank 0 names and creates the segment and tells the others (the name, then the token
  // its header carries); an empty name says it could not.
  struct {
    char name[64];
    uint64_t token;
  } announced = {};
  std::unique_ptr<MappedSegment> segment;
  if (rank == 0) {
    std::random_device random;
    announced.token = (uint64_t{random()} << 32) ^ random();
    const std::string name = absl::StrCat("/tessera-mpi-", getpid(), "-", absl::Hex(announced.token));
    segment = MapSegment(name, bytes, /*create=*/true);
    if (segment != nullptr) {
      std::snprintf(announced.name, sizeof(announced.name), "%s", name.c_str());
      *reinterpret_cast<SegmentHeader*>(segment->base()) = {announced.token, world_size, RegionBytes(world_size)};
    }
  }
  TSR_RETURN_IF_ERROR(
      MpiStatus(MPI_Bcast(&announced, sizeof(announced), MPI_BYTE, 0, comm), "MpiCollectives: MPI_Bcast"));
  if (rank != 0 && announced.name[0] != '\0') {
    segment = MapSegment(announced.name, bytes, /*create=*/false);
    if (segment != nullptr) {
      const SegmentHeader& header = *reinterpret_cast<const SegmentHeader*>(segment->base());
      if (header.token != announced.token || header.world_size != world_size ||
          header.region_bytes != RegionBytes(world_size)) {
        segment.reset();
      }
    }
  }
  // Each rank touches its own region first, so that its pages come from the memory
  // nearest the rank that writes them.
  const size_t region_bytes = RegionBytes(world_size);
  if (segment != nullptr) std::memset(segment->base() + kPageBytes + rank * region_bytes, 0, region_bytes);
  absl::StatusOr<bool> mapped = Everyone(comm, segment != nullptr, "MPI_Allreduce");
  // Every rank that could open the segment has it mapped: its name can go (the memory
  // stays until the last rank unmaps it, and nothing is left behind if a process dies).
  if (rank == 0 && announced.name[0] != '\0') shm_unlink(announced.name);
  if (!mapped.ok()) return mapped.status();
  if (!*mapped) return nullptr;
  // Every page is there now: map them all before the first collective instead of faulting
  // them in during it.
  for (size_t at = 0; at < bytes; at += kPageBytes) {
    static_cast<void>(*static_cast<volatile char*>(segment->base() + at));
  }
  return std::make_unique<SharedMemoryExchange>(std::move(segment), rank, world_size);
}

}  // namespace

absl::StatusOr<std::unique_ptr<CollectiveExchange>> MakeExchange(MPI_Comm comm, int rank, int world_size,
                                                                 int notice_tag) {
  absl::StatusOr<bool> wanted = SharedMemoryWanted();
  TSR_ASSIGN_OR_RETURN(std::unique_ptr<CollectiveExchange> board,
                       MakeBoard(comm, rank, world_size, wanted.ok() && *wanted));
  if (!wanted.ok()) return wanted.status();
  if (board != nullptr) return board;
  return std::make_unique<MessageExchange>(comm, rank, world_size, notice_tag);
}

}  // namespace mpi_internal
}  // namespace tsr
