// CollectiveDescriptor: wire form, descriptions and the cross-rank checks.
#include "runtime/collectives/cross_process/collective_descriptor.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/stable_hash.h"

namespace tsr {
namespace {

constexpr uint32_t kMagic = 0x43525354;  // "TSRC"
constexpr uint8_t kVersion = 1;
constexpr uint8_t kFlagAbandoned = 1;
constexpr uint8_t kFlagAccepted = 2;
constexpr absl::string_view kCut = "...";

// FNV-1a: stable across processes (absl::Hash is seeded per process).
bool IsReduction(CollectiveKind kind) {
  return kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter;
}
bool HasOutput(CollectiveKind kind) {
  return kind == CollectiveKind::kReduceScatter || kind == CollectiveKind::kAllGather ||
         kind == CollectiveKind::kAllToAll;
}

bool SameTrailingDims(const Shape& a, const Shape& b) {
  return a.rank() == b.rank() && std::equal(a.dims().begin() + 1, a.dims().end(), b.dims().begin() + 1);
}

Shape WithRows(const Shape& s, int64_t rows) {
  Shape out = s;
  out.set_dim(0, rows);
  return out;
}

// Appends/reads plain values at a cursor (same machine, same layout on every rank).
class Writer {
 public:
  explicit Writer(char* out) : out_(out) {}
  template <typename T>
  void Put(T value) {
    std::memcpy(out_ + pos_, &value, sizeof(T));
    pos_ += sizeof(T);
  }
  void PutBytes(absl::string_view bytes) {
    std::memcpy(out_ + pos_, bytes.data(), bytes.size());
    pos_ += bytes.size();
  }
  size_t pos() const { return pos_; }

 private:
  char* out_;
  size_t pos_ = 0;
};

class Reader {
 public:
  explicit Reader(const char* in) : in_(in) {}
  template <typename T>
  bool Get(T* value) {
    if (pos_ + sizeof(T) > kDescriptorWireBytes) return false;
    std::memcpy(value, in_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool GetBytes(size_t n, std::string* out) {
    if (pos_ + n > kDescriptorWireBytes) return false;
    out->assign(in_ + pos_, n);
    pos_ += n;
    return true;
  }
  size_t pos() const { return pos_; }

 private:
  const char* in_;
  size_t pos_ = 0;
};

// Header: magic, version, kind, reduce op, flags, root, seq, name hash, dtypes, ranks,
// name length; then the dims of both types and the name.
constexpr size_t kHeaderBytes = 4 + 1 + 1 + 1 + 1 + 4 + 8 + 8 + 1 + 1 + 1 + 1 + 2;

}  // namespace

absl::string_view CollectiveKindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all_reduce";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kAllGather:
      return "all_gather";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kAllToAll:
      return "all_to_all";
    case CollectiveKind::kBarrier:
      return "barrier";
    case CollectiveKind::kSend:
      return "send";
    case CollectiveKind::kRecv:
      return "recv";
  }
  return "unknown";
}

CollectiveDescriptor MakeDescriptor(CollectiveKind kind, absl::string_view name, TensorType input, TensorType output,
                                    ReduceOp reduce_op, int root) {
  CollectiveDescriptor d;
  d.kind = kind;
  d.reduce_op = reduce_op;
  d.root = root;
  d.name = std::string(name);
  d.name_hash = StableHash64(name);
  d.input = std::move(input);
  d.output = std::move(output);
  return d;
}

size_t EncodeDescriptor(const CollectiveDescriptor& d, int64_t seq, char* out) {
  std::memset(out, 0, kDescriptorWireBytes);
  const int in_rank = std::min(d.input.shape.rank(), kMaxRank);
  const int out_rank = std::min(d.output.shape.rank(), kMaxRank);
  const size_t room = kDescriptorWireBytes - kHeaderBytes - 8 * static_cast<size_t>(in_rank + out_rank);
  std::string cut_name;  // only for a name longer than the room
  absl::string_view name = d.name;
  if (name.size() > room) name = cut_name = absl::StrCat(name.substr(0, room - kCut.size()), kCut);
  Writer w(out);
  w.Put<uint32_t>(kMagic);
  w.Put<uint8_t>(kVersion);
  w.Put<uint8_t>(static_cast<uint8_t>(d.kind));
  w.Put<uint8_t>(static_cast<uint8_t>(d.reduce_op));
  w.Put<uint8_t>((d.abandoned ? kFlagAbandoned : 0) | (d.accepted ? kFlagAccepted : 0));
  w.Put<int32_t>(d.root);
  w.Put<int64_t>(seq);
  w.Put<uint64_t>(d.name_hash);
  w.Put<uint8_t>(static_cast<uint8_t>(d.input.dtype));
  w.Put<uint8_t>(static_cast<uint8_t>(d.output.dtype));
  w.Put<uint8_t>(static_cast<uint8_t>(in_rank));
  w.Put<uint8_t>(static_cast<uint8_t>(out_rank));
  w.Put<uint16_t>(static_cast<uint16_t>(name.size()));
  for (int i = 0; i < in_rank; ++i) w.Put<int64_t>(d.input.shape.dim(i));
  for (int i = 0; i < out_rank; ++i) w.Put<int64_t>(d.output.shape.dim(i));
  w.PutBytes(name);
  return w.pos();
}

absl::StatusOr<CollectiveDescriptor> DecodeDescriptor(const char* in, int64_t* seq, size_t* bytes) {
  CollectiveDescriptor d;
  absl::Status decoded = DecodeDescriptorInto(in, seq, bytes, &d);
  if (!decoded.ok()) return decoded;
  return d;
}

absl::Status DecodeDescriptorInto(const char* in, int64_t* seq, size_t* bytes, CollectiveDescriptor* out) {
  Reader r(in);
  uint32_t magic = 0;
  uint8_t version = 0, kind = 0, reduce_op = 0, flags = 0, in_dtype = 0, out_dtype = 0, in_rank = 0, out_rank = 0;
  int32_t root = 0;
  uint16_t name_size = 0;
  CollectiveDescriptor& d = *out;
  bool ok = r.Get(&magic) && r.Get(&version) && r.Get(&kind) && r.Get(&reduce_op) && r.Get(&flags) && r.Get(&root) &&
            r.Get(seq) && r.Get(&d.name_hash) && r.Get(&in_dtype) && r.Get(&out_dtype) && r.Get(&in_rank) &&
            r.Get(&out_rank) && r.Get(&name_size);
  if (!ok || magic != kMagic || version != kVersion || kind > static_cast<uint8_t>(CollectiveKind::kRecv) ||
      reduce_op > static_cast<uint8_t>(ReduceOp::kMin) || in_rank > kMaxRank || out_rank > kMaxRank) {
    return absl::DataLossError("collective descriptor: the bytes received are not a descriptor of this version");
  }
  d.kind = static_cast<CollectiveKind>(kind);
  d.reduce_op = static_cast<ReduceOp>(reduce_op);
  d.abandoned = (flags & kFlagAbandoned) != 0;
  d.accepted = (flags & kFlagAccepted) != 0;
  d.root = root;
  d.input.dtype = static_cast<DType>(in_dtype);
  d.output.dtype = static_cast<DType>(out_dtype);
  d.input.shape.mutable_dims().clear();
  d.output.shape.mutable_dims().clear();
  for (int i = 0; i < in_rank + out_rank; ++i) {
    int64_t dim = 0;
    if (!r.Get(&dim)) return absl::DataLossError("collective descriptor: truncated dims");
    (i < in_rank ? d.input.shape : d.output.shape).AddDim(dim);
  }
  if (!r.GetBytes(name_size, &d.name)) return absl::DataLossError("collective descriptor: truncated name");
  if (bytes != nullptr) *bytes = r.pos();
  return absl::OkStatus();
}

std::string Describe(const CollectiveDescriptor& d) {
  std::string out(CollectiveKindName(d.kind));
  if (IsReduction(d.kind)) absl::StrAppend(&out, "(", ReduceOpName(d.reduce_op), ")");
  if (d.kind == CollectiveKind::kBroadcast) absl::StrAppend(&out, "(root ", d.root, ")");
  absl::StrAppend(&out, " '", d.name, "'");
  if (d.kind != CollectiveKind::kBarrier) absl::StrAppend(&out, " ", d.input.ToString());
  if (HasOutput(d.kind)) absl::StrAppend(&out, " -> ", d.output.ToString());
  return out;
}

std::string Where(const CollectiveDescriptor& d, int64_t seq) {
  return absl::StrCat(CollectiveKindName(d.kind), " '", d.name, "' (seq ", seq, ")");
}

absl::Status CheckDescriptors(int64_t seq, absl::Span<const CollectiveDescriptor> all) {
  const int world = static_cast<int>(all.size());
  const CollectiveDescriptor& first = all[0];
  for (int r = 1; r < world; ++r) {
    const CollectiveDescriptor& c = all[r];
    if (c.kind != first.kind || c.name_hash != first.name_hash || c.name != first.name ||
        (IsReduction(c.kind) && c.reduce_op != first.reduce_op) ||
        (c.kind == CollectiveKind::kBroadcast && c.root != first.root)) {
      return absl::InvalidArgumentError(absl::StrCat("collective seq ", seq, " differs across ranks: rank ", r,
                                                     " issued ", Describe(c), " but rank 0 issued ", Describe(first)));
    }
  }
  if (first.kind == CollectiveKind::kBarrier) return absl::OkStatus();
  // Formatted only for an error: every collective passes here.
  auto where = [&] { return Where(first, seq); };
  const bool gathers = first.kind == CollectiveKind::kAllGather || first.kind == CollectiveKind::kAllToAll;
  for (int r = 1; r < world; ++r) {
    const TensorType& in = all[r].input;
    const bool same_type = in.dtype == first.input.dtype &&
                           (gathers ? in.shape.rank() >= 1 && SameTrailingDims(in.shape, first.input.shape)
                                    : in.shape == first.input.shape);
    if (!same_type) {
      return absl::InvalidArgumentError(absl::StrCat(where(), ": rank ", r, " passed ", in.ToString(),
                                                     " but rank 0 passed ", first.input.ToString()));
    }
  }
  const DType dtype = first.input.dtype;
  if (IsReduction(first.kind) && !IsReducibleDType(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where(), ": dtype ", DTypeName(dtype), " cannot be reduced (f32, f64, i32 and i64 can)"));
  }
  if (first.kind == CollectiveKind::kBroadcast && (first.root < 0 || first.root >= world)) {
    return absl::InvalidArgumentError(
        absl::StrCat(where(), ": root ", first.root, " is not a rank of a world of size ", world));
  }
  if (!HasOutput(first.kind)) return absl::OkStatus();
  if (first.input.shape.rank() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(where(), ": input ", first.input.ToString(), " has no dim 0 to split or concatenate"));
  }
  int64_t gathered_rows = 0;
  for (const CollectiveDescriptor& c : all) gathered_rows += c.input.shape.dim(0);
  for (int r = 0; r < world; ++r) {
    const Shape& in = all[r].input.shape;
    int64_t rows = 0;
    switch (first.kind) {
      case CollectiveKind::kReduceScatter:
        rows = SplitRows(in.dim(0), world, r);
        break;
      case CollectiveKind::kAllGather:
        rows = gathered_rows;
        break;
      default:  // all_to_all: rank r receives part r of every rank's input
        for (const CollectiveDescriptor& c : all) rows += SplitRows(c.input.shape.dim(0), world, r);
        break;
    }
    const TensorType want(dtype, WithRows(in, rows));
    if (all[r].output != want) {
      return absl::InvalidArgumentError(absl::StrCat(where(), ": rank ", r, "'s output is ", all[r].output.ToString(),
                                                     " but ", want.ToString(), " is needed"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTransfer(int src, int dst, int64_t seq, const CollectiveDescriptor& send,
                           const CollectiveDescriptor& recv) {
  if (send.name_hash == recv.name_hash && send.name == recv.name && send.input == recv.input) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat("send/recv rank ", src, " -> rank ", dst, " (seq ", seq, "): rank ",
                                                 src, " sends '", send.name, "' ", send.input.ToString(), " but rank ",
                                                 dst, " receives '", recv.name, "' ", recv.input.ToString()));
}

absl::Status MissingRanksError(absl::string_view where, int rank, absl::Duration timeout,
                               const std::vector<int>& missing, int world_size) {
  return absl::DeadlineExceededError(absl::StrCat(where, ": rank ", rank, " waited ", absl::FormatDuration(timeout),
                                                  " but rank", missing.size() > 1 ? "s " : " ",
                                                  absl::StrJoin(missing, ", "), " of ", world_size, " did not arrive"));
}

}  // namespace tsr
