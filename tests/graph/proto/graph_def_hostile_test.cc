// ParseGraph on malformed, inconsistent and hostile GraphDefs: each must give an error
// that says what is wrong and where, and nothing may crash (random and truncated
// binary inputs included).
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/proto/graph_def.pb.h"
#include "graph/proto/graph_def_io.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

// The error of parsing `text` as a text GraphDef after a "format_version: 1" line (so
// the text's first line is line 2).
absl::Status TextError(const std::string& text) {
  absl::StatusOr<Graph> g = ParseGraph(absl::StrCat("format_version: 1\n", text), GraphFormat::kText);
  return g.ok() ? absl::OkStatus() : g.status();
}

void ExpectError(const absl::Status& s, const std::string& fragment) {
  ASSERT_FALSE(s.ok()) << "expected an error containing: " << fragment;
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.message();
}

// One line: a Placeholder of f32[dims].
std::string PlaceholderText(const std::string& name, const std::string& dims = "2") {
  return absl::StrCat("node { name: '", name, "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_F32 } }",
                      " attr { key: 'shape' value { shape { dim: [", dims, "] } } } }\n");
}

// One line: a Constant whose value is the TensorProto with the given fields.
std::string ConstantText(const std::string& name, const std::string& tensor) {
  return absl::StrCat("node { name: '", name, "' op: 'Constant' attr { key: 'value' value { tensor { ", tensor,
                      " } } } }\n");
}

// One line: an Identity of `input`.
std::string IdentityText(const std::string& name, const std::string& input, const std::string& extra = "") {
  return absl::StrCat("node { name: '", name, "' op: 'Identity' input: '", input, "' ", extra, " }\n");
}

TEST(GraphDefHostileTest, BaselinesParse) {
  // The cases below are small edits of these.
  EXPECT_TRUE(TextError(PlaceholderText("x")).ok()) << TextError(PlaceholderText("x"));
  const std::string c = ConstantText("c", "dtype: DT_F32 dims: [2, 3] raw_data: '" + std::string(24, 'a') + "'");
  EXPECT_TRUE(TextError(c).ok()) << TextError(c);
  const std::string chain = PlaceholderText("x") + IdentityText("y", "x") +
                            IdentityText("z", "y", "output_type { dtype: DT_F32 shape { dim: 2 } }");
  EXPECT_TRUE(TextError(chain).ok()) << TextError(chain);
}

TEST(GraphDefHostileTest, FormatVersion) {
  ExpectError(ParseGraph("format_version: 2\nproducer: 'tessera 9'", GraphFormat::kText).status(),
              "GraphDef format_version 2 is not supported: this build of Tessera reads 1 to 1 (written by "
              "'tessera 9')");
  ExpectError(ParseGraph("format_version: -1", GraphFormat::kText).status(), "format_version -1 is not supported");
  ExpectError(ParseGraph("node { name: 'x' op: 'Identity' }", GraphFormat::kText).status(),
              "GraphDef has no format_version (expected 1)");
  // An empty binary input is an empty GraphDef: no version either.
  ExpectError(ParseGraph("", GraphFormat::kBinary).status(), "no format_version");
}

TEST(GraphDefHostileTest, VersionIsCheckedBeforeNodes) {
  // A newer file's nodes may use anything; the version error must come first, even
  // when the version field follows the nodes in the binary encoding.
  tessera::proto::GraphDef node_only;
  node_only.add_node()->set_op("OpFromTheFuture");
  tessera::proto::GraphDef version_only;
  version_only.set_format_version(7);
  const std::string bytes = node_only.SerializeAsString() + version_only.SerializeAsString();
  ExpectError(ParseGraph(bytes, GraphFormat::kBinary).status(), "format_version 7 is not supported");
}

TEST(GraphDefHostileTest, TensorValues) {
  ExpectError(TextError(ConstantText("fc1", "dtype: DT_F32 dims: [2, 3] raw_data: '" + std::string(12, 'a') + "'")),
              "line 2: node 'fc1' (Constant) attribute 'value': tensor raw_data has 12 bytes but f32[2,3] needs 24");
  ExpectError(TextError(ConstantText("c", "dtype: 42 dims: [1] raw_data: 'a'")),
              "node 'c' (Constant) attribute 'value': unknown dtype 42 (expected 1..9");
  ExpectError(TextError(ConstantText("c", "dtype: DT_INVALID")), "attribute 'value': unknown dtype 0");
  ExpectError(TextError(ConstantText("c", "dtype: DT_F32 dims: [2, -5]")),
              "attribute 'value': shape [2,-5] has a negative dimension -5");
  ExpectError(TextError(ConstantText("c", "dtype: DT_F32 dims: [-1, 2]")),
              "tensor dims [N,2] must be static (no batch dimension -1)");
  ExpectError(TextError(ConstantText("c", "dtype: DT_U8 dims: [1099511627776, 1099511627776]")),
              "has more than 2^40 elements");
  ExpectError(TextError(ConstantText("c", "dtype: DT_U8 dims: [" + absl::StrJoin(std::vector<int>(33, 1), ",") + "]")),
              "shape has rank 33, above the limit of 32");
  ExpectError(TextError(ConstantText("c", "dtype: DT_BOOL dims: [3] raw_data: '\\001\\000\\002'")),
              "tensor raw_data byte 2 is 2 but bool elements must be 0 or 1");
  // A huge shape with a few bytes must fail on the byte count, not by allocating.
  ExpectError(TextError(ConstantText("c", "dtype: DT_F64 dims: [1048576, 1048576] raw_data: 'abcdefgh'")),
              "tensor raw_data has 8 bytes but f64[1048576,1048576] needs 8796093022208");
}

TEST(GraphDefHostileTest, AttributeValues) {
  ExpectError(TextError("node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: 99 } } }"),
              "node 'x' (Placeholder) attribute 'dtype': unknown dtype 99");
  ExpectError(TextError("node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { } } }"),
              "node 'x' (Placeholder) attribute 'dtype': attribute value is empty");
  ExpectError(TextError("node { name: 'x' op: 'Placeholder' attr { key: 'shape' value { shape { dim: -7 } } } }"),
              "attribute 'shape': shape [-7] has a negative dimension -7");
  ExpectError(TextError("node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_F32 } } "
                        "attr { key: 'dtype' value { type: DT_I32 } } }"),
              "node 'x' (Placeholder) attribute 'dtype' is given twice");
  // The op's own attribute checks (through inference and Graph::Verify).
  ExpectError(TextError("node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_F32 } } }"),
              "node 'x' (Placeholder): required attribute 'shape' (shape) is missing");
  ExpectError(TextError("node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { i: 1 } } "
                        "attr { key: 'shape' value { shape { } } } }"),
              "node 'x' (Placeholder): attribute 'dtype' has type int but type is required");
  ExpectError(TextError(PlaceholderText("x") + IdentityText("y", "x", "attr { key: 'alpha' value { f: 1 } }")),
              "line 3: node 'y' (Identity): unknown attribute 'alpha' (the op takes none)");
}

TEST(GraphDefHostileTest, NodeNamesAndOps) {
  ExpectError(TextError(PlaceholderText("x") + PlaceholderText("x")),
              "line 3: node name 'x' is already used in the graph");
  ExpectError(TextError("node { op: 'Identity' }"), "line 2: node #0 ('Identity') has an empty name");
  ExpectError(TextError(PlaceholderText("x") + "node { name: 'y' op: 'Frobnicate' input: 'x' }"),
              "line 3: node 'y': unknown op 'Frobnicate'");
  ExpectError(TextError("node { name: 'y' op: 'identity' }"), "unknown op 'identity' (did you mean 'Identity'?)");
  // Unprintable, long names are escaped and cut in messages.
  absl::Status s = TextError(absl::StrCat("node { name: '\\001", std::string(100, 'n'), "' op: '' }"));
  ExpectError(s, "node '\\x01nnn");
  ExpectError(s, "nnn...': unknown op ''");
}

TEST(GraphDefHostileTest, Inputs) {
  const std::string x = PlaceholderText("x");
  ExpectError(TextError(x + IdentityText("y", "nope")), "line 3: node 'y' (Identity) input 0: no node named 'nope'");
  ExpectError(TextError(x + IdentityText("y", "x:abc")),
              "node 'y' (Identity) input 0: tensor name 'x:abc' has a malformed output index");
  ExpectError(TextError(x + IdentityText("y", "x:")), "tensor name 'x:' has a malformed output index");
  ExpectError(TextError(x + IdentityText("y", "x:-1")), "tensor name 'x:-1' has a malformed output index");
  ExpectError(TextError(x + IdentityText("y", "x:99999999999999999999")), "malformed output index");
  ExpectError(TextError(x + IdentityText("x:1", "x") + IdentityText("z", "x:01")),
              "line 4: node 'z' (Identity) input 0: tensor name 'x:01' is ambiguous: it is written 'x:1', which "
              "names another tensor");
  EXPECT_TRUE(TextError(x + IdentityText("y", "x:0")).ok()) << "'x:0' is a common spelling of 'x'";
  ExpectError(TextError(x + IdentityText("y", "x:3")),
              "line 3: node 'y' (Identity): input 0 refers to 'x:3', but 'x' has 1 inferred outputs");
  ExpectError(TextError(x + "node { name: 'y' op: 'Identity' input: 'x' input: 'x' }"),
              "line 3: node 'y' (Identity): has 2 inputs but the op takes at most 1");
  ExpectError(TextError(x + "node { name: 'y' op: 'Identity' input: '' }"),
              "node 'y' (Identity): input 0 ('input') is required but absent");
  ExpectError(TextError(x + "node { name: 'y' op: 'Identity' }"), "node 'y' (Identity): has 0 inputs but 1 expected");
}

TEST(GraphDefHostileTest, Cycles) {
  ExpectError(TextError(IdentityText("a", "b") + IdentityText("b", "a")),
              "the graph has a cycle through node 'a': b -> a -> b");
  ExpectError(TextError(IdentityText("self", "self")), "the graph has a cycle through node 'self'");
}

TEST(GraphDefHostileTest, RecordedOutputTypes) {
  const std::string x = PlaceholderText("x", "-1, 3");
  ExpectError(TextError(x + IdentityText("y", "x", "output_type { dtype: DT_F32 shape { dim: [-1, 4] } }")),
              "line 3: node 'y' (Identity): output 0 is recorded as f32[N,4] but inference gives f32[N,3]");
  ExpectError(TextError(x + IdentityText("y", "x", "output_type { dtype: DT_I64 shape { dim: [-1, 3] } }")),
              "output 0 is recorded as i64[N,3] but inference gives f32[N,3]");
  ExpectError(TextError(x + IdentityText("y", "x",
                                         "output_type { dtype: DT_F32 shape { dim: [-1, 3] } } "
                                         "output_type { dtype: DT_F32 shape { dim: [-1, 3] } }")),
              "node 'y' (Identity): the file records 2 output types but inference gives 1");
  ExpectError(TextError(x + IdentityText("y", "x", "output_type { dtype: 12 }")),
              "node 'y' (Identity) recorded output type 0: unknown dtype 12");
  ExpectError(TextError(x + IdentityText("y", "x", "output_type { dtype: DT_F32 shape { dim: -3 } }")),
              "node 'y' (Identity) recorded output type 0: shape [-3] has a negative dimension -3");
}

TEST(GraphDefHostileTest, Signature) {
  const std::string x = PlaceholderText("x") + IdentityText("y", "x");
  ExpectError(TextError("signature { inputs { name: 'in' tensor: 'nope' } }\n" + x),
              "signature input 'in': no node named 'nope'");
  ExpectError(TextError("signature { inputs { name: 'in' tensor: 'y' } }\n" + x),
              "signature input 'in' refers to node 'y' (Identity), but inputs must be Placeholders");
  ExpectError(TextError("signature { outputs { name: 'o' tensor: 'y:1' } }\n" + x),
              "signature output 'o' refers to 'y:1', which does not exist");
  ExpectError(TextError("signature { outputs { name: 'o' tensor: 'y' } outputs { name: 'o' tensor: 'x' } }\n" + x),
              "signature output 'o' is declared twice");
  ExpectError(TextError("signature { outputs { name: '' tensor: 'y' } }\n" + x), "signature output has an empty name");
}

TEST(GraphDefHostileTest, TextSyntaxErrorsHaveLineAndColumn) {
  ExpectError(TextError("node {\n  name: 'x'\n  nmae: 'y'\n}"),
              "text GraphDef does not parse: line 4 column 7: Message type \"tessera.proto.NodeDef\" has no field "
              "named \"nmae\"");
  ExpectError(TextError("node { name: 'x' "), "text GraphDef does not parse: line 2 column");
  ExpectError(TextError("format_version: 1"), "is specified multiple times");
  ExpectError(TextError("node { attr { value { i: 99999999999999999999 } } }"), "line 2 column");
  // Deep nesting stops at the first level the schema does not have.
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += "node { attr { value { tensor { ";
  ExpectError(TextError(deep),
              "line 2 column 37: Message type \"tessera.proto.TensorProto\" has no field named "
              "\"node\"");
}

// A valid binary GraphDef whose signature names its last node, so that no prefix of it
// is a valid graph.
std::string ValidBinaryGraph() {
  absl::StatusOr<Graph> g = ParseGraph(
      "format_version: 1\n"
      "signature { inputs { name: 'in' tensor: 'x' } outputs { name: 'out' tensor: 'c' } }\n" +
          PlaceholderText("x", "-1, 2") + IdentityText("y", "x") +
          ConstantText("c", "dtype: DT_I32 dims: [2] raw_data: '\\001\\000\\000\\000\\002\\000\\000\\000'"),
      GraphFormat::kText);
  EXPECT_TRUE(g.ok()) << g.status();
  absl::StatusOr<std::string> bytes = SerializeGraph(*g, GraphFormat::kBinary);
  EXPECT_TRUE(bytes.ok());
  return *bytes;
}

TEST(GraphDefHostileTest, EveryTruncationOfABinaryGraphFails) {
  const std::string bytes = ValidBinaryGraph();
  ASSERT_TRUE(ParseGraph(bytes, GraphFormat::kBinary).ok());
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(ParseGraph(absl::string_view(bytes).substr(0, n), GraphFormat::kBinary).ok()) << n;
  }
  // format_version (3 bytes) is written last: without it the file is "truncated"
  // whether or not the cut falls between fields.
  ExpectError(ParseGraph(absl::string_view(bytes).substr(0, bytes.size() - 3), GraphFormat::kBinary).status(),
              "GraphDef has no format_version (expected 1): not a Tessera graph, or an empty or truncated one");
  ExpectError(ParseGraph(absl::string_view(bytes).substr(0, bytes.size() - 4), GraphFormat::kBinary).status(),
              "binary GraphDef is truncated: node #2 at byte");
}

TEST(GraphDefHostileTest, MalformedBinary) {
  // "\xc0\x3e\x01" is format_version (field 1000) = 1.
  ExpectError(ParseGraph(std::string("\xc0\x3e\x01\x00", 4), GraphFormat::kBinary).status(),
              "binary GraphDef is malformed: invalid field tag at byte 3 of 4");
  ExpectError(ParseGraph("\xc0\x3e\x01\x1a\x02\xff\xff", GraphFormat::kBinary).status(),
              "binary GraphDef is malformed: node #0 (bytes 5 to 7) does not parse as a NodeDef");
  ExpectError(ParseGraph("\xc0\x3e\x01\x12\x01\xff", GraphFormat::kBinary).status(),
              "its format_version, producer or signature field does not parse");
  ExpectError(ParseGraph("\xc0\x3e\x01\x0f", GraphFormat::kBinary).status(), "field 1 at byte 3 of 4 does not parse");
  // Text given as binary, and binary given as text.
  EXPECT_FALSE(ParseGraph("format_version: 1", GraphFormat::kBinary).ok());
  ExpectError(ParseGraph(ValidBinaryGraph(), GraphFormat::kText).status(), "text GraphDef does not parse: line ");
}

TEST(GraphDefHostileTest, RandomMutationsNeverCrash) {
  // Byte flips, inserted and deleted bytes on a valid graph, in both formats. Asserts
  // only that parsing returns; sanitizer builds check memory safety.
  const std::string binary = ValidBinaryGraph();
  const std::string text = *SerializeGraph(*ParseGraph(binary, GraphFormat::kBinary), GraphFormat::kText);
  constexpr uint32_t kSeed = 20240611;
  std::mt19937 rng(kSeed);
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  int parsed = 0;
  for (int iteration = 0; iteration < 4000; ++iteration) {
    const bool use_text = iteration % 2 == 1;
    std::string input = use_text ? text : binary;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !input.empty(); ++e) {
      const size_t pos = rng() % input.size();
      switch (rng() % 3) {
        case 0:
          input[pos] = static_cast<char>(rng());
          break;
        case 1:
          input.insert(pos, 1, static_cast<char>(rng()));
          break;
        default:
          input.erase(pos, 1);
      }
    }
    absl::StatusOr<Graph> g = ParseGraph(input, use_text ? GraphFormat::kText : GraphFormat::kBinary);
    if (g.ok()) {
      ++parsed;
      EXPECT_TRUE(g->Verify().ok());
    } else {
      EXPECT_FALSE(g.status().message().empty());
    }
  }
  // Most edits break the graph, but not all: this guards against a reader that fails
  // on everything.
  EXPECT_GT(parsed, 0);
  EXPECT_LT(parsed, 4000);
}

TEST(GraphDefHostileTest, ManyEmptyNodesAreRejectedAtTheFirst) {
  // 1 MiB of empty NodeDefs: the binary reader stops at node #0 without parsing the
  // rest into protobuf objects (which would take ~80 MiB).
  std::string bytes = "\xc0\x3e\x01";
  for (int i = 0; i < (1 << 19); ++i) bytes += std::string("\x1a\x00", 2);
  ExpectError(ParseGraph(bytes, GraphFormat::kBinary).status(), "node #0 ('') has an empty name");
}

}  // namespace
}  // namespace tsr
