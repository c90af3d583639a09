// GraphDef reading and writing: Graph <-> GraphDef conversion and the binary and text
// encodings. File handling (atomic save, bounded load) lives in graph_def_file.cc.
//
// Reading is built for hostile input:
//  - the binary reader splits the GraphDef's top-level fields itself and parses one
//    NodeDef at a time, so protobuf never holds more than one node's objects (a file of
//    empty NodeDefs would otherwise cost ~80 bytes of memory per byte of input);
//  - every value is checked before anything is allocated from it (graph_def_values.cc);
//  - ops are looked up and names resolved with messages naming the node, the
//    attribute or input slot and, in text files, the line;
//  - types are re-inferred in topological order (which reports cycles) and compared
//    with the recorded ones; then Graph::Verify() runs.
#include "graph/proto/graph_def_io.h"

#include <climits>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/wire_format_lite.h"
#include "graph/op_registry.h"
#include "graph/proto/graph_def.pb.h"
#include "graph/proto/graph_def_values.h"
#include "graph/status_macros.h"

namespace tsr {

namespace {

using google::protobuf::internal::WireFormatLite;

// The format version this build writes and the newest it reads.
constexpr int64_t kFormatVersion = 1;
// GraphDef nests five messages deep (GraphDef > NodeDef > AttrEntry > AttrValue >
// TensorProto); the limit leaves room without letting text input recurse deeply.
constexpr int kTextRecursionLimit = 16;
// Protobuf parses at most INT_MAX bytes in one piece.
constexpr int64_t kProtobufMaxBytes = INT_MAX;

// A name for messages: quoted, escaped when unprintable and cut when long, since it
// comes from an untrusted file.
std::string Quote(absl::string_view name) {
  constexpr size_t kMaxShown = 64;
  return absl::StrCat("'", absl::CHexEscape(name.substr(0, kMaxShown)), name.size() > kMaxShown ? "...'" : "'");
}

absl::Status Prefixed(absl::string_view prefix, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

// ---------------------------------------------------------------------------------
// Writing.

// The name the writer gives `ref` ("node" or "node:1"), checked to read back as `ref`:
// with a node named "a:1", output 1 of node "a" has no name that does.
absl::StatusOr<std::string> WrittenTensorName(const Graph& graph, TensorRef ref) {
  std::string name = graph.TensorName(ref);
  absl::StatusOr<TensorRef> back = graph.ParseTensorName(name);
  if (!back.ok()) return back.status();
  if (*back != ref) {
    return absl::InvalidArgumentError(
        absl::StrCat("output ", ref.index, " of node ", Quote(graph.node(ref.node)->name()), " would be written ",
                     Quote(name), ", which names another tensor; rename one of the nodes"));
  }
  return name;
}

absl::Status NodeToProto(const Graph& graph, const Node& node, proto::NodeDef* out) {
  out->set_name(node.name());
  out->set_op(node.op());
  for (int i = 0; i < node.num_inputs(); ++i) {
    const TensorRef ref = node.input(i);
    if (!ref.valid()) {
      out->add_input();
      continue;
    }
    absl::StatusOr<std::string> name = WrittenTensorName(graph, ref);
    if (!name.ok()) return Prefixed(absl::StrCat("node ", Quote(node.name()), " input ", i, ": "), name.status());
    out->add_input(*std::move(name));
  }
  for (const auto& [name, value] : node.attrs()) {
    proto::NodeDef::AttrEntry* entry = out->add_attr();
    entry->set_key(name);
    AttrValueToProto(value, entry->mutable_value());
  }
  for (const TensorType& type : node.output_types()) TensorTypeToProto(type, out->add_output_type());
  return absl::OkStatus();
}

absl::Status SignatureToProto(const Graph& graph, const std::vector<SignatureEntry>& entries, absl::string_view kind,
                              google::protobuf::RepeatedPtrField<proto::SignatureEntry>* out) {
  for (const SignatureEntry& e : entries) {
    absl::StatusOr<std::string> tensor = WrittenTensorName(graph, e.ref);
    if (!tensor.ok()) return Prefixed(absl::StrCat("signature ", kind, " ", Quote(e.name), ": "), tensor.status());
    proto::SignatureEntry* entry = out->Add();
    entry->set_name(e.name);
    entry->set_tensor(*std::move(tensor));
  }
  return absl::OkStatus();
}

absl::Status GraphToProto(const Graph& graph, proto::GraphDef* out) {
  out->set_format_version(kFormatVersion);
  out->set_producer("tessera");
  TSR_RETURN_IF_ERROR(SignatureToProto(graph, graph.inputs(), "input", out->mutable_signature()->mutable_inputs()));
  TSR_RETURN_IF_ERROR(SignatureToProto(graph, graph.outputs(), "output", out->mutable_signature()->mutable_outputs()));
  for (const Node* node : graph.nodes()) TSR_RETURN_IF_ERROR(NodeToProto(graph, *node, out->add_node()));
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------
// Reading: header and NodeDefs -> Graph.

// Builds a Graph from the header (version, signature) and the NodeDefs, given one at a
// time in file order. Inputs are kept as names until every node exists, since a node
// may name a node that comes later in the file.
class GraphDefReader {
 public:
  // `line_of(i)` is the 1-based line where NodeDef i starts, 0 when unknown; it is only
  // called on error paths.
  explicit GraphDefReader(std::function<int(int)> line_of) : line_of_(std::move(line_of)) {}

  absl::Status CheckHeader(const proto::GraphDef& header) const;
  absl::Status AddNode(const proto::NodeDef& def);
  // Resolves inputs and the signature, infers and checks types, verifies.
  absl::StatusOr<Graph> Finish(const proto::Signature& signature) &&;

 private:
  // "line 12: " for node `id` of a text file, "" otherwise.
  std::string LinePrefix(int id) const;
  // "line 12: node 'fc1' (MatMul)".
  std::string Where(int id) const;
  // AddNode without the line prefix.
  absl::Status ConvertNode(const proto::NodeDef& def);
  // Graph::ParseTensorName, rejecting names that the writer would spell differently
  // in a way that names another tensor.
  absl::StatusOr<TensorRef> ResolveTensorName(absl::string_view name) const;
  absl::Status ResolveInputs();
  absl::Status InferAndCheckTypes();
  absl::Status AddSignature(const proto::Signature& signature);

  std::function<int(int)> line_of_;
  Graph graph_;
  // A node's input names as written, packed: name i is chars[ends[i-1], ends[i]).
  // (A vector of strings would cost 32 bytes per name, 16 times the 2 bytes an empty
  // name takes in a binary file.)
  struct InputNames {
    std::string chars;
    std::vector<uint32_t> ends;
  };
  // Per node id.
  std::vector<InputNames> input_names_;
};

std::string GraphDefReader::LinePrefix(int id) const {
  const int line = line_of_(id);
  return line > 0 ? absl::StrCat("line ", line, ": ") : std::string();
}

std::string GraphDefReader::Where(int id) const {
  const Node* node = graph_.node(id);
  return absl::StrCat(LinePrefix(id), "node ", Quote(node->name()), " (", node->op(), ")");
}

absl::Status GraphDefReader::CheckHeader(const proto::GraphDef& header) const {
  const int64_t version = header.format_version();
  if (version == 0) {
    return absl::InvalidArgumentError(absl::StrCat("GraphDef has no format_version (expected ", kFormatVersion,
                                                   "): not a Tessera graph, or an empty or truncated one"));
  }
  if (version < 0 || version > kFormatVersion) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GraphDef format_version ", version, " is not supported: this build of Tessera reads 1 to ", kFormatVersion,
        header.producer().empty() ? "" : absl::StrCat(" (written by ", Quote(header.producer()), ")")));
  }
  return absl::OkStatus();
}

absl::Status GraphDefReader::AddNode(const proto::NodeDef& def) {
  const int id = graph_.num_nodes();
  if (absl::Status s = ConvertNode(def); !s.ok()) return Prefixed(LinePrefix(id), s);
  return absl::OkStatus();
}

absl::Status GraphDefReader::ConvertNode(const proto::NodeDef& def) {
  if (def.name().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("node #", graph_.num_nodes(), " (", Quote(def.op()), ") has an empty name"));
  }
  auto where = [&] { return absl::StrCat("node ", Quote(def.name())); };
  // Unknown ops are caught here rather than by Verify() so that the message names the
  // node (and the line).
  absl::StatusOr<const OpDef*> op = graph_.registry().Lookup(def.op());
  if (!op.ok()) return Prefixed(absl::StrCat(where(), ": "), op.status());
  // Checked again by inference; checked here before a hostile input list is copied.
  const int max_inputs = (*op)->max_inputs();
  if (max_inputs >= 0 && def.input_size() > max_inputs) {
    return absl::InvalidArgumentError(absl::StrCat(where(), " (", def.op(), "): has ", def.input_size(),
                                                   " inputs but the op takes at most ", max_inputs));
  }
  AttrMap attrs;
  for (const proto::NodeDef::AttrEntry& entry : def.attr()) {
    auto attr_where = [&] { return absl::StrCat(where(), " (", def.op(), ") attribute ", Quote(entry.key())); };
    absl::StatusOr<AttrValue> value = AttrValueFromProto(entry.value());
    if (!value.ok()) return Prefixed(absl::StrCat(attr_where(), ": "), value.status());
    if (!attrs.try_emplace(entry.key(), *std::move(value)).second) {
      return absl::InvalidArgumentError(absl::StrCat(attr_where(), " is given twice"));
    }
  }
  std::vector<TensorType> recorded;
  recorded.reserve(def.output_type_size());
  for (int i = 0; i < def.output_type_size(); ++i) {
    absl::StatusOr<TensorType> type = TensorTypeFromProto(def.output_type(i));
    if (!type.ok()) {
      return Prefixed(absl::StrCat(where(), " (", def.op(), ") recorded output type ", i, ": "), type.status());
    }
    recorded.push_back(*std::move(type));
  }
  TSR_ASSIGN_OR_RETURN(Node * node, graph_.AddNode(def.name(), def.op(), {}, std::move(attrs)));
  // Stored as the node's types until InferAndCheckTypes() compares and replaces them.
  node->set_output_types(std::move(recorded));
  InputNames& names = input_names_.emplace_back();
  names.ends.reserve(def.input_size());
  for (const std::string& input : def.input()) {
    names.chars += input;
    names.ends.push_back(static_cast<uint32_t>(names.chars.size()));
  }
  return absl::OkStatus();
}

absl::StatusOr<TensorRef> GraphDefReader::ResolveTensorName(absl::string_view name) const {
  TSR_ASSIGN_OR_RETURN(TensorRef ref, graph_.ParseTensorName(name));
  // "a:01" or "a:+1" name output 1 of a, but the writer would spell it "a:1", which is
  // another tensor when a node is named "a:1": the graph would not survive a round trip.
  const std::string canonical = graph_.TensorName(ref);
  if (canonical != name) {
    absl::StatusOr<TensorRef> reread = graph_.ParseTensorName(canonical);
    if (!reread.ok() || *reread != ref) {
      return absl::InvalidArgumentError(absl::StrCat("tensor name ", Quote(name), " is ambiguous: it is written ",
                                                     Quote(canonical), ", which names another tensor"));
    }
  }
  return ref;
}

absl::Status GraphDefReader::ResolveInputs() {
  for (int id = 0; id < graph_.num_nodes(); ++id) {
    Node* node = graph_.node(id);
    const InputNames& names = input_names_[id];
    uint32_t begin = 0;
    for (size_t i = 0; i < names.ends.size(); ++i) {
      const absl::string_view name = absl::string_view(names.chars).substr(begin, names.ends[i] - begin);
      begin = names.ends[i];
      if (name.empty()) {
        node->add_input(TensorRef::None());
        continue;
      }
      absl::StatusOr<TensorRef> ref = ResolveTensorName(name);
      if (!ref.ok()) return Prefixed(absl::StrCat(Where(id), " input ", i, ": "), ref.status());
      node->add_input(*ref);
    }
    input_names_[id] = {};
  }
  return absl::OkStatus();
}

absl::Status GraphDefReader::InferAndCheckTypes() {
  TSR_ASSIGN_OR_RETURN(std::vector<const Node*> order, graph_.TopologicalOrder());
  // Producers come first, so every node's inputs already hold inferred (not merely
  // recorded) types when it is inferred.
  for (const Node* n : order) {
    Node* node = graph_.node(n->id());
    absl::StatusOr<std::vector<TensorType>> inferred = graph_.InferredTypes(*node);
    if (!inferred.ok()) return Prefixed(LinePrefix(node->id()), inferred.status());
    const std::vector<TensorType>& recorded = node->output_types();
    if (!recorded.empty()) {
      if (recorded.size() != inferred->size()) {
        return absl::InvalidArgumentError(absl::StrCat(Where(node->id()), ": the file records ", recorded.size(),
                                                       " output types but inference gives ", inferred->size()));
      }
      for (size_t i = 0; i < recorded.size(); ++i) {
        if (recorded[i] != (*inferred)[i]) {
          return absl::InvalidArgumentError(absl::StrCat(Where(node->id()), ": output ", i, " is recorded as ",
                                                         recorded[i].ToString(), " but inference gives ",
                                                         (*inferred)[i].ToString()));
        }
      }
    }
    node->set_output_types(*std::move(inferred));
  }
  return absl::OkStatus();
}

absl::Status GraphDefReader::AddSignature(const proto::Signature& signature) {
  auto add = [&](const google::protobuf::RepeatedPtrField<proto::SignatureEntry>& entries, absl::string_view kind,
                 bool is_input) -> absl::Status {
    // Graph::AddInput/AddOutput also reject duplicates, but by a linear scan per entry;
    // checking here first keeps a hostile file from making that the first error found.
    absl::flat_hash_set<absl::string_view> seen;
    for (const proto::SignatureEntry& e : entries) {
      const std::string where = absl::StrCat("signature ", kind, " ", Quote(e.name()));
      if (!seen.insert(e.name()).second) return absl::InvalidArgumentError(absl::StrCat(where, " is declared twice"));
      absl::StatusOr<TensorRef> ref = ResolveTensorName(e.tensor());
      if (!ref.ok()) return Prefixed(absl::StrCat(where, ": "), ref.status());
      absl::Status added = is_input ? graph_.AddInput(e.name(), *ref) : graph_.AddOutput(e.name(), *ref);
      if (!added.ok()) return added;
    }
    return absl::OkStatus();
  };
  TSR_RETURN_IF_ERROR(add(signature.inputs(), "input", /*is_input=*/true));
  return add(signature.outputs(), "output", /*is_input=*/false);
}

absl::StatusOr<Graph> GraphDefReader::Finish(const proto::Signature& signature) && {
  TSR_RETURN_IF_ERROR(ResolveInputs());
  TSR_RETURN_IF_ERROR(InferAndCheckTypes());
  TSR_RETURN_IF_ERROR(AddSignature(signature));
  TSR_RETURN_IF_ERROR(graph_.Verify());
  return std::move(graph_);
}

// ---------------------------------------------------------------------------------
// Binary encoding.

// The GraphDef's top-level fields, split: the nodes' encodings (as offsets into the
// input) and everything else re-encoded as a GraphDef without nodes.
struct BinaryParts {
  std::string header;
  std::vector<std::pair<int, int>> nodes;  // (offset, size) of each NodeDef's bytes
};

absl::StatusOr<BinaryParts> SplitBinaryGraphDef(absl::string_view bytes) {
  const int size = static_cast<int>(bytes.size());
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), size);
  BinaryParts parts;
  while (true) {
    const int start = in.CurrentPosition();
    const uint32_t tag = in.ReadTag();
    if (tag == 0) {
      if (start == size) break;
      return absl::InvalidArgumentError(
          absl::StrCat("binary GraphDef is malformed: invalid field tag at byte ", start, " of ", size));
    }
    if (WireFormatLite::GetTagFieldNumber(tag) == proto::GraphDef::kNodeFieldNumber &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t length = 0;
      if (!in.ReadVarint32(&length) || length > static_cast<uint32_t>(size - in.CurrentPosition())) {
        return absl::InvalidArgumentError(absl::StrCat("binary GraphDef is truncated: node #", parts.nodes.size(),
                                                       " at byte ", start, " runs past the end of the ", size,
                                                       "-byte input"));
      }
      parts.nodes.emplace_back(in.CurrentPosition(), static_cast<int>(length));
      in.Skip(static_cast<int>(length));
      continue;
    }
    if (!WireFormatLite::SkipField(&in, tag)) {
      return absl::InvalidArgumentError(absl::StrCat("binary GraphDef is malformed or truncated: field ",
                                                     WireFormatLite::GetTagFieldNumber(tag), " at byte ", start, " of ",
                                                     size, " does not parse"));
    }
    parts.header.append(bytes.data() + start, static_cast<size_t>(in.CurrentPosition() - start));
  }
  return parts;
}

absl::StatusOr<Graph> ParseBinaryGraph(absl::string_view bytes) {
  TSR_ASSIGN_OR_RETURN(BinaryParts parts, SplitBinaryGraphDef(bytes));
  proto::GraphDef header;
  if (!header.ParseFromString(parts.header)) {
    return absl::InvalidArgumentError(
        "binary GraphDef is malformed: its format_version, producer or signature field does not parse");
  }
  GraphDefReader reader([](int) { return 0; });
  TSR_RETURN_IF_ERROR(reader.CheckHeader(header));
  proto::NodeDef def;  // reused: Clear() keeps its storage for the next node
  for (size_t i = 0; i < parts.nodes.size(); ++i) {
    const auto [offset, length] = parts.nodes[i];
    if (!def.ParseFromArray(bytes.data() + offset, length)) {
      return absl::InvalidArgumentError(absl::StrCat("binary GraphDef is malformed: node #", i, " (bytes ", offset,
                                                     " to ", offset + length, ") does not parse as a NodeDef"));
    }
    TSR_RETURN_IF_ERROR(reader.AddNode(def));
  }
  return std::move(reader).Finish(header.signature());
}

// ---------------------------------------------------------------------------------
// Text encoding.

// Keeps the first error with its position; protobuf would otherwise log to stderr.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (error_.empty()) error_ = absl::StrCat("line ", line + 1, " column ", column + 1, ": ", message);
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  const std::string& error() const { return error_; }

 private:
  std::string error_;
};

// The 1-based line of the `index`-th top-level "node" field of a text GraphDef that
// parsed, 0 if not found. A token scan keeps error paths cheap: protobuf's ParseInfoTree
// would record every field of every message on every load.
int TextNodeLine(absl::string_view text, int index) {
  google::protobuf::io::ArrayInputStream stream(text.data(), static_cast<int>(text.size()));
  FirstErrorCollector errors;
  google::protobuf::io::Tokenizer tokenizer(&stream, &errors);
  // The settings TextFormat's own parser uses.
  tokenizer.set_allow_f_after_float(true);
  tokenizer.set_comment_style(google::protobuf::io::Tokenizer::SH_COMMENT_STYLE);
  tokenizer.set_require_space_after_number(false);
  tokenizer.set_allow_multiline_strings(true);
  int depth = 0;
  int seen = 0;
  while (tokenizer.Next()) {
    const google::protobuf::io::Tokenizer::Token& token = tokenizer.current();
    if (token.type == google::protobuf::io::Tokenizer::TYPE_SYMBOL) {
      if (token.text == "{" || token.text == "<") ++depth;
      if (token.text == "}" || token.text == ">") --depth;
    } else if (depth == 0 && token.type == google::protobuf::io::Tokenizer::TYPE_IDENTIFIER && token.text == "node") {
      if (seen++ == index) return token.line + 1;
    }
  }
  return 0;
}

absl::StatusOr<Graph> ParseTextGraph(absl::string_view text) {
  proto::GraphDef graph_def;
  {
    google::protobuf::io::ArrayInputStream stream(text.data(), static_cast<int>(text.size()));
    FirstErrorCollector errors;
    google::protobuf::TextFormat::Parser parser;
    parser.RecordErrorsTo(&errors);
    parser.SetRecursionLimit(kTextRecursionLimit);
    if (!parser.Parse(&stream, &graph_def)) {
      return absl::InvalidArgumentError(
          absl::StrCat("text GraphDef does not parse: ", errors.error().empty() ? "unknown error" : errors.error()));
    }
  }
  GraphDefReader reader([text](int index) { return TextNodeLine(text, index); });
  TSR_RETURN_IF_ERROR(reader.CheckHeader(graph_def));
  for (const proto::NodeDef& def : graph_def.node()) TSR_RETURN_IF_ERROR(reader.AddNode(def));
  return std::move(reader).Finish(graph_def.signature());
}

}  // namespace

absl::StatusOr<std::string> SerializeGraph(const Graph& graph, GraphFormat format) {
  proto::GraphDef graph_def;
  if (absl::Status s = GraphToProto(graph, &graph_def); !s.ok()) {
    return Prefixed("cannot write the graph: ", s);
  }
  std::string out;
  if (format == GraphFormat::kText) {
    google::protobuf::TextFormat::Printer printer;
    printer.SetUseShortRepeatedPrimitives(true);
    if (!printer.PrintToString(graph_def, &out)) return absl::InternalError("printing the text GraphDef failed");
    return out;
  }
  const size_t size = graph_def.ByteSizeLong();
  if (size > static_cast<size_t>(kProtobufMaxBytes)) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the graph encodes to ", size, " bytes, above protobuf's limit of 2 GiB - 1 per message"));
  }
  if (!graph_def.SerializeToString(&out)) return absl::InternalError("serializing the binary GraphDef failed");
  return out;
}

absl::StatusOr<Graph> ParseGraph(absl::string_view bytes, GraphFormat format, const GraphLoadOptions& options) {
  const int64_t size = static_cast<int64_t>(bytes.size());
  if (size > options.max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("the GraphDef has ", size, " bytes, above the limit of ",
                                                     options.max_bytes, " (GraphLoadOptions::max_bytes)"));
  }
  if (size > kProtobufMaxBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the GraphDef has ", size, " bytes, above protobuf's limit of 2 GiB - 1"));
  }
  return format == GraphFormat::kText ? ParseTextGraph(bytes) : ParseBinaryGraph(bytes);
}

}  // namespace tsr
