// Encoding and verified decoding of checkpoint files (layout in checkpoint_file.h).
#include "runtime/checkpoint/checkpoint_file.h"

#include <bit>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"
#include "platform/file.h"
#include "platform/crc32c.h"
#include "runtime/proto/checkpoint.pb.h"

namespace tsr {
namespace {

// Tensor bytes are stored as they lie in memory; the format is little-endian.
static_assert(std::endian::native == std::endian::little, "checkpoint I/O assumes a little-endian host");

constexpr size_t kHeaderCrcOffset = 28;

void PutLE32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}
void PutLE64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}
uint32_t GetLE32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return v;
}
uint64_t GetLE64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return v;
}

absl::Status Corrupt(absl::string_view source, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("checkpoint '", source, "': ", what));
}

}  // namespace

const Tensor* Checkpoint::Find(absl::string_view name) const {
  for (const auto& [n, t] : tensors) {
    if (n == name) return &t;
  }
  return nullptr;
}

absl::StatusOr<std::string> EncodeCheckpoint(const Checkpoint& checkpoint) {
  tessera::ckpt::CheckpointManifest manifest;
  manifest.set_step(checkpoint.step);
  for (const auto& [key, value] : checkpoint.metadata) (*manifest.mutable_metadata())[key] = value;
  absl::flat_hash_set<absl::string_view> names;
  uint64_t offset = 0;
  for (const auto& [name, tensor] : checkpoint.tensors) {
    if (name.empty()) return absl::InvalidArgumentError("checkpoint: a tensor has an empty name");
    if (!names.insert(name).second) {
      return absl::InvalidArgumentError(absl::StrCat("checkpoint: tensor '", name, "' appears twice"));
    }
    if (!tensor.valid()) {
      return absl::InvalidArgumentError(absl::StrCat("checkpoint: tensor '", name, "' is not a valid tensor"));
    }
    tessera::ckpt::TensorEntry* entry = manifest.add_tensors();
    entry->set_name(name);
    entry->set_dtype(static_cast<uint32_t>(tensor.dtype()));
    for (int64_t d : tensor.shape().dims()) entry->add_shape(d);
    entry->set_offset(offset);
    entry->set_length(tensor.num_bytes());
    entry->set_crc32c(crc32c::Value(tensor.raw_data(), tensor.num_bytes()));
    offset += tensor.num_bytes();
  }
  manifest.set_data_length(offset);
  std::string manifest_bytes;
  if (!manifest.SerializeToString(&manifest_bytes)) return absl::InternalError("checkpoint: cannot serialize manifest");
  if (manifest_bytes.size() > UINT32_MAX) return absl::InvalidArgumentError("checkpoint: manifest above 4 GiB");

  std::string out(kCheckpointHeaderBytes, '\0');
  out.reserve(kCheckpointHeaderBytes + manifest_bytes.size() + offset);
  std::memcpy(out.data(), kCheckpointMagic, sizeof(kCheckpointMagic));
  PutLE32(out.data() + 8, kCheckpointVersion);
  PutLE32(out.data() + 12, static_cast<uint32_t>(manifest_bytes.size()));
  PutLE64(out.data() + 16, offset);
  PutLE32(out.data() + 24, crc32c::Value(manifest_bytes));
  PutLE32(out.data() + kHeaderCrcOffset, crc32c::Value(out.data(), kHeaderCrcOffset));
  out += manifest_bytes;
  for (const auto& [name, tensor] : checkpoint.tensors) {
    out.append(static_cast<const char*>(tensor.raw_data()), tensor.num_bytes());
  }
  return out;
}

absl::StatusOr<Checkpoint> DecodeCheckpoint(absl::string_view bytes, absl::string_view source) {
  if (bytes.size() < kCheckpointHeaderBytes) {
    return Corrupt(source, absl::StrCat("truncated: ", bytes.size(), " bytes, shorter than the ",
                                        kCheckpointHeaderBytes, "-byte header"));
  }
  const char* h = bytes.data();
  if (std::memcmp(h, kCheckpointMagic, sizeof(kCheckpointMagic)) != 0) {
    return Corrupt(source, "not a Tessera checkpoint (bad magic)");
  }
  if (GetLE32(h + kHeaderCrcOffset) != crc32c::Value(h, kHeaderCrcOffset)) {
    return Corrupt(source, "header checksum mismatch");
  }
  const uint32_t version = GetLE32(h + 8);
  if (version != kCheckpointVersion) {
    return absl::UnimplementedError(absl::StrCat("checkpoint '", source, "': format version ", version,
                                                 ", this build reads version ", kCheckpointVersion));
  }
  const uint64_t manifest_length = GetLE32(h + 12);
  const uint64_t data_length = GetLE64(h + 16);
  const uint64_t available = bytes.size() - kCheckpointHeaderBytes;
  if (manifest_length > available || data_length != available - manifest_length) {
    return Corrupt(source,
                   absl::StrCat("size mismatch: header says ", kCheckpointHeaderBytes, " + ", manifest_length, " + ",
                                data_length, " bytes, the file has ", bytes.size(), " (truncated or padded)"));
  }
  const absl::string_view manifest_bytes = bytes.substr(kCheckpointHeaderBytes, manifest_length);
  if (GetLE32(h + 24) != crc32c::Value(manifest_bytes)) return Corrupt(source, "manifest checksum mismatch");
  tessera::ckpt::CheckpointManifest manifest;
  if (!manifest.ParseFromArray(manifest_bytes.data(), static_cast<int>(manifest_bytes.size()))) {
    return Corrupt(source, "manifest does not parse");
  }
  if (manifest.data_length() != data_length) {
    return Corrupt(source,
                   absl::StrCat("manifest data length ", manifest.data_length(), " but header says ", data_length));
  }
  const absl::string_view data = bytes.substr(kCheckpointHeaderBytes + manifest_length);

  // Check every entry before allocating any tensor.
  absl::flat_hash_set<absl::string_view> names;
  uint64_t expected_offset = 0;
  for (const tessera::ckpt::TensorEntry& e : manifest.tensors()) {
    const std::string where = absl::StrCat("tensor '", e.name(), "'");
    if (e.name().empty()) return Corrupt(source, "a tensor has an empty name");
    if (!names.insert(e.name()).second) return Corrupt(source, absl::StrCat(where, " appears twice"));
    const DType dtype = static_cast<DType>(e.dtype());
    if (e.dtype() > 255 || !IsValidDType(dtype)) {
      return Corrupt(source, absl::StrCat(where, ": unknown dtype ", e.dtype()));
    }
    if (e.shape_size() > kMaxRank) return Corrupt(source, absl::StrCat(where, ": rank ", e.shape_size()));
    const Shape shape(std::vector<int64_t>(e.shape().begin(), e.shape().end()));
    absl::StatusOr<int64_t> elements = shape.NumElements();
    if (!elements.ok()) return Corrupt(source, absl::StrCat(where, ": bad shape: ", elements.status().message()));
    const uint64_t length = static_cast<uint64_t>(*elements) * DTypeSize(dtype);
    if (e.length() != length) {
      return Corrupt(source, absl::StrCat(where, " (", DTypeName(dtype), shape.ToString(), ") has length ", e.length(),
                                          ", expected ", length));
    }
    if (e.offset() != expected_offset || length > data_length - expected_offset) {
      return Corrupt(
          source, absl::StrCat(where, ": byte range [", e.offset(), ", +", length,
                               ") does not follow the previous tensor inside the ", data_length, "-byte data section"));
    }
    if (crc32c::Value(data.data() + e.offset(), length) != e.crc32c()) {
      return Corrupt(source, absl::StrCat(where, ": data checksum mismatch"));
    }
    expected_offset += length;
  }
  if (expected_offset != data_length) {
    return Corrupt(source, absl::StrCat("tensors cover ", expected_offset, " of the ", data_length, " data bytes"));
  }

  Checkpoint checkpoint;
  checkpoint.step = manifest.step();
  for (const auto& [key, value] : manifest.metadata()) checkpoint.metadata[key] = value;
  checkpoint.tensors.reserve(manifest.tensors_size());
  for (const tessera::ckpt::TensorEntry& e : manifest.tensors()) {
    TSR_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(static_cast<DType>(e.dtype()),
                                                  Shape(std::vector<int64_t>(e.shape().begin(), e.shape().end()))));
    if (e.length() > 0) std::memcpy(t.raw_data(), data.data() + e.offset(), e.length());
    checkpoint.tensors.emplace_back(e.name(), std::move(t));
  }
  return checkpoint;
}

absl::Status WriteCheckpointFile(const std::string& path, const Checkpoint& checkpoint) {
  absl::StatusOr<std::string> bytes = EncodeCheckpoint(checkpoint);
  if (!bytes.ok()) return absl::Status(bytes.status().code(), absl::StrCat(path, ": ", bytes.status().message()));
  return WriteFileAtomically(path, *bytes);
}

absl::StatusOr<Checkpoint> ReadCheckpointFile(const std::string& path, int64_t max_bytes) {
  TSR_ASSIGN_OR_RETURN(std::string bytes, ReadFileBounded(path, max_bytes, "max_checkpoint_bytes"));
  return DecodeCheckpoint(bytes, path);
}

}  // namespace tsr
