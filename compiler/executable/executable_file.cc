// SerializeExecutable / ParseExecutable: the .tsrx framing (header, sections, metadata)
// and the conversion between Executable and ExecutableProto.
#include "compiler/executable/executable_file.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/executable/executable.pb.h"
#include "graph/proto/graph_def_values.h"
#include "graph/status_macros.h"
#include "platform/crc32c.h"
#include "platform/file.h"

namespace tsr {
namespace {

namespace xp = ::tessera::executable;

// Header field offsets.
constexpr size_t kVersionAt = 4;
constexpr size_t kFlagsAt = 8;
constexpr size_t kHeaderBytesAt = 12;
constexpr size_t kFileBytesAt = 16;
constexpr size_t kMetadataOffsetAt = 24;
constexpr size_t kMetadataBytesAt = 32;
constexpr size_t kMetadataCrcAt = 40;
constexpr size_t kReservedAt = 44;
constexpr size_t kHeaderCrcAt = 60;

void PutU32(std::string& out, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void PutU64(std::string& out, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint32_t GetU32(absl::string_view in, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(in[at + i])) << (8 * i);
  return v;
}
uint64_t GetU64(absl::string_view in, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(in[at + i])) << (8 * i);
  return v;
}

void PadTo64(std::string& out) {
  out.resize((out.size() + kExecutableAlignment - 1) / kExecutableAlignment * kExecutableAlignment, '\0');
}

// Appends `bytes` as a section at the next multiple of 64.
void AddSection(std::string& out, absl::string_view bytes, xp::ExecutableProto& meta) {
  PadTo64(out);
  xp::SectionProto* s = meta.add_sections();
  s->set_offset(out.size());
  s->set_size(bytes.size());
  s->set_crc32c(crc32c::Value(bytes));
  out.append(bytes.data(), bytes.size());
}

xp::ValueProto::Location LocationToProto(ValueLocation l) { return static_cast<xp::ValueProto::Location>(l); }

absl::Status Invalid(absl::string_view source, absl::string_view part, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", part, ": ", problem));
}

// An id from the metadata as an int in [lo, n); an error naming `what` otherwise.
absl::StatusOr<int> Id(int64_t v, int64_t lo, int64_t n, absl::string_view what) {
  if (v < lo || v >= n)
    return absl::InvalidArgumentError(absl::StrCat(what, " ", v, " is outside [", lo, ", ", n, ")"));
  return static_cast<int>(v);
}

absl::StatusOr<Executable> FromProto(const xp::ExecutableProto& meta, const std::vector<absl::string_view>& sections) {
  Executable e;
  e.producer = meta.producer();
  e.target = {meta.target().triple(), meta.target().cpu(), meta.target().features()};
  const int64_t n = meta.values_size();
  for (int64_t i = 0; i < n; ++i) {
    const xp::ValueProto& vp = meta.values(static_cast<int>(i));
    ExecutableValue v;
    v.name = vp.name();
    const std::string where = absl::StrCat("value ", i, " ('", v.name, "')");
    absl::StatusOr<DType> dtype = DTypeFromProto(vp.dtype());
    if (!dtype.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", dtype.status().message()));
    v.dtype = *dtype;
    if (vp.dims_size() > kMaxRank) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": rank ", vp.dims_size(), " is above ", kMaxRank));
    }
    v.shape = Shape(std::vector<int64_t>(vp.dims().begin(), vp.dims().end()));
    if (absl::Status s = v.shape.Validate(); !s.ok() || !v.shape.is_static()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": shape ", v.shape.ToString(), " is not a valid static shape"));
    }
    if (vp.location() < 0 || vp.location() > 4) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": unknown location ", static_cast<int>(vp.location())));
    }
    v.location = static_cast<ValueLocation>(vp.location());
    if (vp.size_bytes() != v.size_bytes()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": records ", vp.size_bytes(), " bytes but ",
                                                     DTypeName(v.dtype), v.shape.ToString(), " has ", v.size_bytes()));
    }
    v.offset = vp.offset();
    TSR_ASSIGN_OR_RETURN(const int reused_plus_one,
                         Id(vp.reused_from_plus_one(), 0, n + 1, absl::StrCat(where, ": 1 + reused value")));
    v.reused_from = reused_plus_one - 1;
    e.values.push_back(std::move(v));
  }
  for (const auto* list : {&meta.inputs(), &meta.outputs()}) {
    std::vector<NamedValue>& out = list == &meta.inputs() ? e.inputs : e.outputs;
    for (const xp::SignatureEntryProto& entry : *list) {
      TSR_ASSIGN_OR_RETURN(int id,
                           Id(entry.value(), 0, n, absl::StrCat("signature entry '", entry.name(), "': value")));
      out.push_back({entry.name(), id});
    }
  }
  e.arena_bytes = meta.arena_bytes();
  e.threads = meta.threads();
  for (int s = 0; s < meta.steps_size(); ++s) {
    const xp::StepProto& sp = meta.steps(s);
    const std::string where = absl::StrCat("step ", s, " (", sp.name(), ")");
    ExecutableStep step;
    if (sp.kind() != xp::StepProto::KERNEL && sp.kind() != xp::StepProto::FUNCTION) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": unknown kind ", static_cast<int>(sp.kind())));
    }
    step.kind = sp.kind() == xp::StepProto::KERNEL ? ExecutableStep::Kind::kKernel : ExecutableStep::Kind::kFunction;
    step.name = sp.name();
    for (int64_t in : sp.inputs()) {
      TSR_ASSIGN_OR_RETURN(int id, Id(in, -1, n, absl::StrCat(where, ": input value")));
      step.inputs.push_back(id);
    }
    for (int64_t out : sp.outputs()) {
      TSR_ASSIGN_OR_RETURN(int id, Id(out, 0, n, absl::StrCat(where, ": output value")));
      step.outputs.push_back(id);
    }
    step.tiles = sp.tiles() == 0 ? 1 : sp.tiles();
    step.tile_strides.assign(sp.tile_strides().begin(), sp.tile_strides().end());
    for (const xp::StepProto::Attr& attr : sp.attrs()) {
      absl::StatusOr<AttrValue> value = AttrValueFromProto(attr.value());
      if (!value.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": attribute '", attr.key(), "': ", value.status().message()));
      }
      if (!step.attrs.emplace(attr.key(), *std::move(value)).second) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": attribute '", attr.key(), "' is given twice"));
      }
    }
    e.steps.push_back(std::move(step));
  }
  const int64_t num_sections = static_cast<int64_t>(sections.size());
  std::vector<int> section_users(sections.size(), 0);
  for (int c = 0; c < meta.constants_size(); ++c) {
    TSR_ASSIGN_OR_RETURN(int value, Id(meta.constants(c).value(), 0, n, absl::StrCat("constant ", c, ": value")));
    TSR_ASSIGN_OR_RETURN(int section,
                         Id(meta.constants(c).section(), 0, num_sections, absl::StrCat("constant ", c, ": section")));
    ++section_users[section];
    e.constants.push_back({value, std::string(sections[section])});
  }
  for (int o = 0; o < meta.object_files_size(); ++o) {
    TSR_ASSIGN_OR_RETURN(
        int section, Id(meta.object_files(o).section(), 0, num_sections, absl::StrCat("object file ", o, ": section")));
    ++section_users[section];
    e.object_files.push_back({meta.object_files(o).name(), std::string(sections[section])});
  }
  for (size_t s = 0; s < sections.size(); ++s) {
    if (section_users[s] != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("section ", s, " is used by ", section_users[s], " constants and object files; one is needed"));
    }
  }
  return e;
}

}  // namespace

absl::StatusOr<std::string> SerializeExecutable(const Executable& e) {
  TSR_RETURN_IF_ERROR(ValidateExecutable(e));
  xp::ExecutableProto meta;
  meta.set_producer(e.producer);
  meta.mutable_target()->set_triple(e.target.triple);
  meta.mutable_target()->set_cpu(e.target.cpu);
  meta.mutable_target()->set_features(e.target.features);
  for (const ExecutableValue& v : e.values) {
    xp::ValueProto* vp = meta.add_values();
    vp->set_name(v.name);
    vp->set_dtype(static_cast<tessera::proto::DataType>(v.dtype));
    for (int64_t d : v.shape.dims()) vp->add_dims(d);
    vp->set_location(LocationToProto(v.location));
    vp->set_offset(v.offset);
    vp->set_size_bytes(v.size_bytes());
    vp->set_reused_from_plus_one(v.reused_from + 1);
  }
  for (const NamedValue& in : e.inputs) {
    xp::SignatureEntryProto* p = meta.add_inputs();
    p->set_name(in.name);
    p->set_value(in.value);
  }
  for (const NamedValue& out : e.outputs) {
    xp::SignatureEntryProto* p = meta.add_outputs();
    p->set_name(out.name);
    p->set_value(out.value);
  }
  meta.set_arena_bytes(e.arena_bytes);
  meta.set_threads(e.threads);
  for (const ExecutableStep& step : e.steps) {
    xp::StepProto* sp = meta.add_steps();
    sp->set_kind(step.kind == ExecutableStep::Kind::kKernel ? xp::StepProto::KERNEL : xp::StepProto::FUNCTION);
    sp->set_name(step.name);
    for (int in : step.inputs) sp->add_inputs(in);
    for (int out : step.outputs) sp->add_outputs(out);
    if (step.tiles != 1) sp->set_tiles(step.tiles);
    for (int64_t stride : step.tile_strides) sp->add_tile_strides(stride);
    for (const auto& [key, value] : step.attrs) {
      xp::StepProto::Attr* attr = sp->add_attrs();
      attr->set_key(key);
      AttrValueToProto(value, attr->mutable_value());
    }
  }
  std::string out(kTsrxHeaderBytes, '\0');
  for (const ExecutableConstant& c : e.constants) {
    xp::ConstantProto* cp = meta.add_constants();
    cp->set_value(c.value);
    cp->set_section(meta.sections_size());
    AddSection(out, c.bytes, meta);
  }
  for (const ObjectFile& o : e.object_files) {
    xp::ObjectFileProto* op = meta.add_object_files();
    op->set_name(o.name);
    op->set_section(meta.sections_size());
    AddSection(out, o.bytes, meta);
  }
  PadTo64(out);
  std::string metadata;
  if (meta.ByteSizeLong() > static_cast<size_t>(std::numeric_limits<int32_t>::max()) ||
      !meta.SerializeToString(&metadata)) {
    return absl::ResourceExhaustedError("the executable's metadata does not fit protobuf's 2 GiB limit");
  }
  const uint64_t metadata_offset = out.size();
  out.append(metadata);
  std::memcpy(out.data(), kTsrxMagic, 4);
  PutU32(out, kVersionAt, kTsrxFormatVersion);
  PutU32(out, kFlagsAt, 0);
  PutU32(out, kHeaderBytesAt, kTsrxHeaderBytes);
  PutU64(out, kFileBytesAt, out.size());
  PutU64(out, kMetadataOffsetAt, metadata_offset);
  PutU64(out, kMetadataBytesAt, metadata.size());
  PutU32(out, kMetadataCrcAt, crc32c::Value(metadata));
  PutU32(out, kHeaderCrcAt, crc32c::Value(out.data(), kHeaderCrcAt));
  return out;
}

absl::StatusOr<Executable> ParseExecutable(absl::string_view bytes, absl::string_view source) {
  const uint64_t size = bytes.size();
  if (size >= 4 && std::memcmp(bytes.data(), kTsrxMagic, 4) != 0) {
    return Invalid(source, "header", "not a Tessera executable (the file does not start with \"TSRX\")");
  }
  if (size < static_cast<uint64_t>(kTsrxHeaderBytes)) {
    return Invalid(
        source, "header",
        absl::StrCat("truncated: the file has ", size, " bytes and the header alone needs ", kTsrxHeaderBytes));
  }
  const uint32_t version = GetU32(bytes, kVersionAt);
  if (version != kTsrxFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat(source, ": header: format version ", version,
                                                      "; this build reads version ", kTsrxFormatVersion,
                                                      " only (recompile the model)"));
  }
  if (crc32c::Value(bytes.data(), kHeaderCrcAt) != GetU32(bytes, kHeaderCrcAt)) {
    return Invalid(source, "header", "checksum mismatch (the file is corrupted)");
  }
  if (GetU32(bytes, kFlagsAt) != 0) {
    return Invalid(source, "header", absl::StrCat("unknown flags 0x", absl::Hex(GetU32(bytes, kFlagsAt))));
  }
  if (GetU32(bytes, kHeaderBytesAt) != kTsrxHeaderBytes) {
    return Invalid(source, "header", absl::StrCat("header size ", GetU32(bytes, kHeaderBytesAt), "; expected 64"));
  }
  for (size_t i = kReservedAt; i < kHeaderCrcAt; ++i) {
    if (bytes[i] != 0) return Invalid(source, "header", "reserved bytes are not zero");
  }
  const uint64_t file_bytes = GetU64(bytes, kFileBytesAt);
  if (file_bytes != size) {
    return Invalid(source, "header",
                   absl::StrCat(file_bytes > size ? "truncated: " : "trailing bytes: ", "the header says ", file_bytes,
                                " bytes and the file has ", size));
  }
  const uint64_t meta_offset = GetU64(bytes, kMetadataOffsetAt);
  const uint64_t meta_bytes = GetU64(bytes, kMetadataBytesAt);
  if (meta_offset < static_cast<uint64_t>(kTsrxHeaderBytes) || meta_offset > size || meta_bytes > size - meta_offset) {
    return Invalid(
        source, "metadata",
        absl::StrCat("bytes [", meta_offset, ", +", meta_bytes, ") lie outside the file of ", size, " bytes"));
  }
  const absl::string_view meta_view = bytes.substr(meta_offset, meta_bytes);
  if (crc32c::Value(meta_view) != GetU32(bytes, kMetadataCrcAt)) {
    return Invalid(source, "metadata", "checksum mismatch (the file is corrupted)");
  }
  xp::ExecutableProto meta;
  if (meta_bytes > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()) ||
      !meta.ParseFromArray(meta_view.data(), static_cast<int>(meta_bytes))) {
    return Invalid(source, "metadata", "not a valid ExecutableProto");
  }
  // Sections: aligned, inside the file, disjoint from the header, the metadata and each other.
  std::vector<absl::string_view> sections;
  std::vector<std::pair<uint64_t, uint64_t>> extents = {{0, kTsrxHeaderBytes}, {meta_offset, meta_offset + meta_bytes}};
  for (int s = 0; s < meta.sections_size(); ++s) {
    const xp::SectionProto& sp = meta.sections(s);
    const std::string part = absl::StrCat("section ", s);
    if (sp.offset() > size || sp.size() > size - sp.offset()) {
      return Invalid(
          source, part,
          absl::StrCat("bytes [", sp.offset(), ", +", sp.size(), ") lie outside the file of ", size, " bytes"));
    }
    if (sp.offset() % kExecutableAlignment != 0) {
      return Invalid(source, part,
                     absl::StrCat("offset ", sp.offset(), " is not a multiple of ", kExecutableAlignment));
    }
    const absl::string_view view = bytes.substr(sp.offset(), sp.size());
    if (crc32c::Value(view) != sp.crc32c()) return Invalid(source, part, "checksum mismatch (the file is corrupted)");
    sections.push_back(view);
    if (sp.size() > 0) extents.emplace_back(sp.offset(), sp.offset() + sp.size());
  }
  std::sort(extents.begin(), extents.end());
  for (size_t i = 1; i < extents.size(); ++i) {
    if (extents[i].first < extents[i - 1].second) {
      return Invalid(source, "sections",
                     absl::StrCat("bytes [", extents[i].first, ", ", extents[i].second, ") overlap bytes [",
                                  extents[i - 1].first, ", ", extents[i - 1].second, ")"));
    }
  }
  absl::StatusOr<Executable> e = FromProto(meta, sections);
  if (!e.ok()) return Invalid(source, "metadata", e.status().message());
  if (absl::Status s = ValidateExecutable(*e); !s.ok()) return Invalid(source, "metadata", s.message());
  return e;
}

absl::Status WriteExecutable(const Executable& executable, const std::string& path) {
  absl::StatusOr<std::string> bytes = SerializeExecutable(executable);
  if (!bytes.ok()) return absl::Status(bytes.status().code(), absl::StrCat(path, ": ", bytes.status().message()));
  return WriteFileAtomically(path, *bytes);
}

absl::StatusOr<Executable> ReadExecutable(const std::string& path, const ExecutableReadOptions& options) {
  TSR_ASSIGN_OR_RETURN(std::string bytes, ReadFileBounded(path, options.max_bytes, "max_bytes"));
  TSR_ASSIGN_OR_RETURN(Executable e, ParseExecutable(bytes, path));
  if (options.host != nullptr && !e.object_files.empty()) {
    if (absl::Status s = CheckTargetRuns(e.target, *options.host); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(path, ": target: ", s.message()));
    }
  }
  return e;
}

void ParseExecutableForFuzzing(const uint8_t* data, size_t size) {
  (void)ParseExecutable(absl::string_view(reinterpret_cast<const char*>(data), size), "<fuzz>");
}

}  // namespace tsr
