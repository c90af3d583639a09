// GraphDef round trips (binary and text), format detection, and SaveGraph/LoadGraph
// file handling. Hostile inputs are in graph_def_hostile_test.cc.
#include "graph/proto/graph_def_io.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "tests/graph/graph_test_util.h"

namespace tsr {
namespace {

void ExpectError(const absl::Status& s, const std::string& fragment) {
  ASSERT_FALSE(s.ok()) << "expected an error containing: " << fragment;
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.message();
}

Node* Add(Graph& g, std::string name, std::string op, std::vector<TensorRef> inputs, AttrMap attrs = {}) {
  absl::StatusOr<Node*> n = g.AddNodeAndInfer(name, std::move(op), std::move(inputs), std::move(attrs));
  EXPECT_TRUE(n.ok()) << n.status();
  return n.ok() ? *n : nullptr;
}

Node* Constant(Graph& g, std::string name, Tensor value) {
  return Add(g, std::move(name), "Constant", {}, {{"value", AttrValue::FromTensor(std::move(value))}});
}

// An op holding one attribute of every kind, registered once into the global registry
// (the one ParseGraph uses): no built-in op has ints, floats and strings attributes at
// once, and the round trip must cover all ten kinds.
void RegisterAllAttrsOp() {
  static const bool registered = [] {
    absl::Status s = OpRegistry::Global().Register(
        OpDefBuilder("GraphDefTestAllAttrs")
            .Summary("Test op: returns its input; has one optional attribute of each kind.")
            .Input("x", "T")
            .OptionalInput("y", "T")
            .Output("out", "T")
            .OptionalAttr("i", AttrType::kInt)
            .OptionalAttr("f", AttrType::kFloat)
            .OptionalAttr("s", AttrType::kString)
            .OptionalAttr("b", AttrType::kBool)
            .OptionalAttr("ints", AttrType::kInts)
            .OptionalAttr("floats", AttrType::kFloats)
            .OptionalAttr("strings", AttrType::kStrings)
            .OptionalAttr("tensor", AttrType::kTensor)
            .OptionalAttr("type", AttrType::kType)
            .OptionalAttr("shape", AttrType::kShape)
            .Infer([](InferenceContext& ctx) {
              ctx.set_output(0, ctx.input(0));
              return absl::OkStatus();
            })
            .Build());
    EXPECT_TRUE(s.ok()) << s;
    return true;
  }();
  (void)registered;
}

// Placeholder, Variables (initializer and explicit value), Constants of every dtype,
// Identity, forward order of signature entries, and a node with every attribute kind.
Graph MakeSourceGraph() {
  RegisterAllAttrsOp();
  Graph g;
  Node* x = Add(g, "x", "Placeholder", {},
                {{"dtype", AttrValue::Type(DType::kF32)}, {"shape", AttrValue::FromShape(Shape{kBatchDim, 4})}});
  Add(g, "w", "Variable", {},
      {{"dtype", AttrValue::Type(DType::kF32)},
       {"shape", AttrValue::FromShape(Shape{4, 3})},
       {"initializer", AttrValue::String("glorot_uniform")},
       {"seed", AttrValue::Int(7)},
       {"trainable", AttrValue::Bool(false)}});
  Add(g, "b", "Variable", {},
      {{"dtype", AttrValue::Type(DType::kF32)},
       {"shape", AttrValue::FromShape(Shape{3})},
       {"value", AttrValue::FromTensor(Tensor::FromVector<float>(Shape{3}, {0.5f, -1.25f, 3e-8f}))}});
  Constant(g, "c_f64", Tensor::FromVector<double>(Shape{2}, {1.0 / 3.0, -0.0}));
  Constant(g, "c_f16",
           Tensor::FromVector<Float16>(Shape{2, 2}, {Float16::FromFloat(1.5f), Float16::FromBits(0x7c00),
                                                     Float16::FromBits(0x0001), Float16::FromFloat(-2)}));
  Constant(g, "c_bf16",
           Tensor::FromVector<BFloat16>(
               Shape{3}, {BFloat16::FromFloat(3.14159f), BFloat16::FromBits(0xff80), BFloat16::FromFloat(0)}));
  Constant(g, "c_bool", Tensor::FromVector<bool>(Shape{4}, {true, false, false, true}));
  Constant(g, "c_i8", Tensor::FromVector<int8_t>(Shape{2}, {-128, 127}));
  Constant(g, "c_u8", Tensor::FromVector<uint8_t>(Shape{2}, {0, 255}));
  Constant(g, "c_i32", Tensor::FromVector<int32_t>(Shape{1, 2}, {std::numeric_limits<int32_t>::min(), 42}));
  Constant(g, "c_i64", Tensor::Scalar<int64_t>(std::numeric_limits<int64_t>::max()));
  Constant(g, "c_empty", Tensor::FromVector<float>(Shape{0, 5}, {}));
  Node* id = Add(g, "id", "Identity", {x->output()});
  Node* all = Add(g, "all_attrs", "GraphDefTestAllAttrs", {id->output(), TensorRef::None()},
                  {{"i", AttrValue::Int(-9'000'000'000)},
                   {"f", AttrValue::Float(0.1)},
                   {"s", AttrValue::String(std::string("bytes\0\xff\n\"'", 10))},
                   {"b", AttrValue::Bool(true)},
                   {"ints", AttrValue::Ints({1, -2, std::numeric_limits<int64_t>::min()})},
                   {"floats", AttrValue::Floats({1e300, -2.5, std::numeric_limits<double>::infinity(), 5e-324})},
                   {"strings", AttrValue::Strings({"", "a", "line\nbreak"})},
                   {"tensor", AttrValue::FromTensor(Tensor::FromVector<int32_t>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}))},
                   {"type", AttrValue::Type(DType::kBF16)},
                   {"shape", AttrValue::FromShape(Shape{kBatchDim, 0, 7})}});
  EXPECT_TRUE(g.AddInput("features", x->output()).ok());
  EXPECT_TRUE(g.AddOutput("result", all->output()).ok());
  EXPECT_TRUE(g.AddOutput("same_again", id->output()).ok());
  EXPECT_TRUE(g.Verify().ok()) << g.Verify();
  return g;
}

bool Registered(std::initializer_list<absl::string_view> ops) {
  for (absl::string_view op : ops) {
    if (OpRegistry::Global().Find(op) == nullptr) return false;
  }
  return true;
}

// x -> MatMul(w1) + b1 -> Relu -> MatMul(w2) -> Add(b2), with an output index and a
// node defined before one of its producers when the ops exist.
Graph MakeMlpGraph() {
  Graph g;
  auto var = [&](std::string name, Shape shape) {
    return Add(g, std::move(name), "Variable", {},
               {{"dtype", AttrValue::Type(DType::kF32)},
                {"shape", AttrValue::FromShape(std::move(shape))},
                {"initializer", AttrValue::String("he_normal")}});
  };
  Node* x = Add(g, "x", "Placeholder", {},
                {{"dtype", AttrValue::Type(DType::kF32)}, {"shape", AttrValue::FromShape(Shape{kBatchDim, 784})}});
  Node* w1 = var("fc1/w", Shape{784, 256});
  Node* b1 = var("fc1/b", Shape{256});
  Node* mm1 = Add(g, "fc1/matmul", "MatMul", {x->output(), w1->output()});
  Node* add1 = Add(g, "fc1/add", "Add", {mm1->output(), b1->output()});
  Node* relu = Add(g, "fc1/relu", "Relu", {add1->output()});
  Node* w2 = var("fc2/w", Shape{256, 10});
  Node* mm2 = Add(g, "fc2/matmul", "MatMul", {relu->output(), w2->output()});
  EXPECT_TRUE(g.AddInput("x", x->output()).ok());
  EXPECT_TRUE(g.AddOutput("logits", mm2->output()).ok());
  EXPECT_TRUE(g.Verify().ok()) << g.Verify();
  return g;
}

using ::tsr::testing::ExpectRoundTrip;
using ::tsr::testing::ExpectSameGraph;

TEST(GraphDefIoTest, SourceGraphRoundTripsInBinary) { ExpectRoundTrip(MakeSourceGraph(), GraphFormat::kBinary); }

TEST(GraphDefIoTest, SourceGraphRoundTripsInText) { ExpectRoundTrip(MakeSourceGraph(), GraphFormat::kText); }

TEST(GraphDefIoTest, MlpRoundTrips) {
  if (!Registered({"MatMul", "Add", "Relu"})) GTEST_SKIP() << "MatMul, Add or Relu is not registered yet";
  Graph g = MakeMlpGraph();
  ExpectRoundTrip(g, GraphFormat::kBinary);
  ExpectRoundTrip(g, GraphFormat::kText);
}

TEST(GraphDefIoTest, ConvAndMultiOutputRoundTrip) {
  if (!Registered({"Conv", "MaxPool", "Split", "Concat"})) GTEST_SKIP() << "Conv, MaxPool, Split or Concat missing";
  Graph g;
  Node* x = Add(g, "image", "Placeholder", {},
                {{"dtype", AttrValue::Type(DType::kF32)}, {"shape", AttrValue::FromShape(Shape{kBatchDim, 3, 8, 8})}});
  Node* w = Add(g, "conv/w", "Variable", {},
                {{"dtype", AttrValue::Type(DType::kF32)},
                 {"shape", AttrValue::FromShape(Shape{4, 3, 3, 3})},
                 {"initializer", AttrValue::String("he_uniform")}});
  Node* conv = Add(g, "conv", "Conv", {x->output(), w->output()},
                   {{"pads", AttrValue::Ints({1, 1, 1, 1})}, {"strides", AttrValue::Ints({1, 1})}});
  Node* pool = Add(g, "pool", "MaxPool", {conv->output()},
                   {{"kernel_shape", AttrValue::Ints({2, 2})}, {"strides", AttrValue::Ints({2, 2})}});
  Node* split =
      Add(g, "split", "Split", {pool->output()}, {{"axis", AttrValue::Int(1)}, {"num_outputs", AttrValue::Int(2)}});
  // Outputs used out of order, so that "split:1" and "split" must both survive.
  Node* concat = Add(g, "concat", "Concat", {split->output(1), split->output(0)}, {{"axis", AttrValue::Int(1)}});
  ASSERT_NE(concat, nullptr);
  EXPECT_EQ(concat->output_type(0).ToString(), "f32[N,4,4,4]");
  ASSERT_TRUE(g.AddInput("image", x->output()).ok());
  ASSERT_TRUE(g.AddOutput("second_half", split->output(1)).ok());
  ASSERT_TRUE(g.AddOutput("swapped", concat->output()).ok());
  ExpectRoundTrip(g, GraphFormat::kBinary);
  ExpectRoundTrip(g, GraphFormat::kText);
  absl::StatusOr<std::string> text = SerializeGraph(g, GraphFormat::kText);
  EXPECT_NE(text->find("input: \"split:1\""), std::string::npos) << *text;
  EXPECT_NE(text->find("tensor: \"split:1\""), std::string::npos) << *text;
}

TEST(GraphDefIoTest, EmptyGraphRoundTrips) {
  Graph g;
  ExpectRoundTrip(g, GraphFormat::kBinary);
  ExpectRoundTrip(g, GraphFormat::kText);
}

TEST(GraphDefIoTest, TextFormatIsReadable) {
  absl::StatusOr<std::string> text = SerializeGraph(MakeSourceGraph(), GraphFormat::kText);
  ASSERT_TRUE(text.ok()) << text.status();
  for (const char* expected :
       {"format_version: 1", "producer: \"tessera\"", "name: \"features\"", "tensor: \"x\"", "op: \"Placeholder\"",
        "type: DT_F32", "dim: [-1, 4]", "input: \"id\"", "input: \"\"", "dtype: DT_BF16"}) {
    EXPECT_NE(text->find(expected), std::string::npos) << expected << " not in:\n" << *text;
  }
}

TEST(GraphDefIoTest, OutputIndexAndAliasedNamesRoundTrip) {
  // A node whose name looks like a tensor name ("a:1") must still be found as itself.
  Graph g;
  Node* a = Add(g, "a", "Placeholder", {},
                {{"dtype", AttrValue::Type(DType::kI64)}, {"shape", AttrValue::FromShape(Shape{2})}});
  Node* odd = Add(g, "odd:name", "Identity", {a->output()});
  Add(g, "consumer", "Identity", {odd->output()});
  ASSERT_TRUE(g.AddOutput("out", odd->output()).ok());
  ExpectRoundTrip(g, GraphFormat::kBinary);
  ExpectRoundTrip(g, GraphFormat::kText);
}

TEST(GraphDefIoTest, TensorsWithoutAFaithfulNameAreNotWritten) {
  // Output 1 of "a" is spelled "a:1", which is the name of another node: writing it
  // would give a file that reads back as a different graph.
  Graph g;
  ASSERT_TRUE(g.AddNode("a", "Identity", {}).ok());
  ASSERT_TRUE(g.AddNode("a:1", "Identity", {}).ok());
  ASSERT_TRUE(g.AddNode("c", "Identity", {TensorRef{0, 1}}).ok());
  for (GraphFormat format : {GraphFormat::kBinary, GraphFormat::kText}) {
    ExpectError(SerializeGraph(g, format).status(),
                "cannot write the graph: node 'c' input 0: output 1 of node 'a' would be written 'a:1', which names "
                "another tensor; rename one of the nodes");
  }
  Graph dangling;
  ASSERT_TRUE(dangling.AddNode("c", "Identity", {TensorRef{7, 0}}).ok());
  ExpectError(SerializeGraph(dangling, GraphFormat::kText).status(), "node 'c' input 0: no node named '<node 7>'");
}

TEST(GraphDefIoTest, HandWrittenTextWithForwardReferencesLoads) {
  // Consumers may come before their producers; output types may be left out.
  constexpr char kText[] = R"pb(
    format_version: 1
    # A comment, as text files are edited by hand.
    signature {
      inputs { name: "in" tensor: "x" }
      outputs { name: "out" tensor: "y" }
    }
    node { name: "y" op: "Identity" input: "x" }
    node {
      name: "x"
      op: "Placeholder"
      attr {
        key: "dtype"
        value { type: DT_I32 }
      }
      attr {
        key: "shape"
        value { shape { dim: [ -1, 3 ] } }
      }
    }
  )pb";
  absl::StatusOr<Graph> g = ParseGraph(kText, GraphFormat::kText);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(g->num_nodes(), 2);
  EXPECT_EQ(g->node(0)->name(), "y");
  EXPECT_EQ(g->node(0)->input(0), (TensorRef{1, 0}));
  EXPECT_EQ(g->node(0)->output_type(0).ToString(), "i32[N,3]");
  EXPECT_EQ(g->inputs()[0].ref, (TensorRef{1, 0}));
  EXPECT_EQ(g->outputs()[0].ref, (TensorRef{0, 0}));
}

TEST(GraphDefIoTest, UninferredNodesAreWrittenWithoutTypesAndInferredOnLoad) {
  Graph g;
  absl::StatusOr<Node*> x = g.AddNode(
      "x", "Placeholder", {}, {{"dtype", AttrValue::Type(DType::kF64)}, {"shape", AttrValue::FromShape(Shape{5})}});
  ASSERT_TRUE(x.ok());
  absl::StatusOr<std::string> text = SerializeGraph(g, GraphFormat::kText);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->find("output_type"), std::string::npos) << *text;
  absl::StatusOr<Graph> back = ParseGraph(*text, GraphFormat::kText);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->node(0)->output_type(0).ToString(), "f64[5]");
}

TEST(GraphDefIoTest, FormatFromPath) {
  EXPECT_EQ(*GraphFormatFromPath("model.pb"), GraphFormat::kBinary);
  EXPECT_EQ(*GraphFormatFromPath("/a/b/model.TSRG"), GraphFormat::kBinary);
  EXPECT_EQ(*GraphFormatFromPath("model.pbtxt"), GraphFormat::kText);
  EXPECT_EQ(*GraphFormatFromPath("dir.pb/model.txt"), GraphFormat::kText);
  ExpectError(GraphFormatFromPath("model.onnx").status(), "cannot tell the graph format of 'model.onnx'");
  ExpectError(GraphFormatFromPath("pb").status(), "expected a .pb or .tsrg");
}

// A fresh, empty folder under the test's temporary directory.
class GraphDefFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = std::filesystem::path(tmp != nullptr ? tmp : ::testing::TempDir()) /
           absl::StrCat("graph_def_file_test_", ::getpid(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::vector<std::string> Listing(const std::filesystem::path& folder) const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  static std::string ReadAll(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::filesystem::path dir_;
};

TEST_F(GraphDefFileTest, SaveAndLoadBothFormats) {
  Graph g = MakeSourceGraph();
  for (const char* name : {"g.pb", "g.tsrg", "g.pbtxt", "g.txt"}) {
    const std::string path = (dir_ / name).string();
    ASSERT_TRUE(SaveGraph(g, path).ok()) << SaveGraph(g, path);
    absl::StatusOr<Graph> back = LoadGraph(path);
    ASSERT_TRUE(back.ok()) << back.status();
    ExpectSameGraph(g, *back);
  }
  EXPECT_EQ(Listing(dir_), (std::vector<std::string>{"g.pb", "g.pbtxt", "g.tsrg", "g.txt"}));
  EXPECT_EQ(ReadAll(dir_ / "g.pb"), *SerializeGraph(g, GraphFormat::kBinary));
}

TEST_F(GraphDefFileTest, SaveIntoMissingFolderLeavesNothing) {
  const std::filesystem::path path = dir_ / "missing" / "g.pb";
  absl::Status s = SaveGraph(MakeSourceGraph(), path.string());
  ExpectError(s, "saving graph '");
  ExpectError(s, "No such file or directory");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "missing"));
  EXPECT_TRUE(Listing(dir_).empty());
}

TEST_F(GraphDefFileTest, SaveReplacesExistingFileWholeAndKeepsItsMode) {
  const std::filesystem::path path = dir_ / "g.pb";
  // Longer than the graph: a non-atomic overwrite without truncation would leave a tail.
  std::ofstream(path, std::ios::binary) << std::string(1 << 20, 'z');
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  Graph g = MakeSourceGraph();
  ASSERT_TRUE(SaveGraph(g, path.string()).ok());
  EXPECT_EQ(ReadAll(path), *SerializeGraph(g, GraphFormat::kBinary));
  struct stat info;
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0640u);
  EXPECT_EQ(Listing(dir_), (std::vector<std::string>{"g.pb"}));
}

TEST_F(GraphDefFileTest, FailedWriteLeavesExistingFileIntact) {
  // RLIMIT_FSIZE makes write() fail with EFBIG part-way, even when running as root.
  const std::filesystem::path path = dir_ / "g.pbtxt";
  const std::string old_contents = "format_version: 1\n";
  std::ofstream(path, std::ios::binary) << old_contents;
  Graph g = MakeSourceGraph();
  ASSERT_GT(SerializeGraph(g, GraphFormat::kText)->size(), 256u);

  struct rlimit old_limit;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit small = old_limit;
  small.rlim_cur = 256;
  sighandler_t old_handler = ::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  absl::Status s = SaveGraph(g, path.string());
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  ::signal(SIGXFSZ, old_handler);

  ExpectError(s, "cannot write");
  EXPECT_EQ(ReadAll(path), old_contents);
  EXPECT_EQ(Listing(dir_), (std::vector<std::string>{"g.pbtxt"}));
}

TEST_F(GraphDefFileTest, FailedRenameRemovesTheTemporaryFile) {
  // Renaming a file over a non-empty folder fails after the data was written.
  const std::filesystem::path path = dir_ / "g.pb";
  std::filesystem::create_directories(path / "inside");
  ExpectError(SaveGraph(MakeSourceGraph(), path.string()), "cannot rename");
  EXPECT_EQ(Listing(dir_), (std::vector<std::string>{"g.pb"}));
  EXPECT_TRUE(std::filesystem::is_directory(path / "inside"));
}

TEST_F(GraphDefFileTest, LoadErrorsNameThePath) {
  const std::string missing = (dir_ / "nope.pb").string();
  absl::StatusOr<Graph> g = LoadGraph(missing);
  EXPECT_EQ(g.status().code(), absl::StatusCode::kNotFound);
  ExpectError(g.status(), absl::StrCat("loading graph '", missing, "': cannot open"));

  ExpectError(LoadGraph((dir_ / "model.onnx").string()).status(), "cannot tell the graph format");

  std::filesystem::create_directories(dir_ / "folder.pb");
  ExpectError(LoadGraph((dir_ / "folder.pb").string()).status(), "is a directory");

  const std::string garbage = (dir_ / "garbage.pbtxt").string();
  std::ofstream(garbage) << "format_version: 1\nnode { name: \"a\" op: \"Nope\" }\n";
  ExpectError(LoadGraph(garbage).status(),
              absl::StrCat("loading graph '", garbage, "': line 2: node 'a': unknown op 'Nope'"));
}

TEST_F(GraphDefFileTest, LoadRejectsFilesAboveMaxBytesBeforeReading) {
  const std::filesystem::path path = dir_ / "big.pb";
  Graph g = MakeSourceGraph();
  ASSERT_TRUE(SaveGraph(g, path.string()).ok());
  const int64_t size = static_cast<int64_t>(std::filesystem::file_size(path));
  GraphLoadOptions options;
  options.max_bytes = size - 1;
  absl::StatusOr<Graph> small = LoadGraph(path.string(), options);
  EXPECT_EQ(small.status().code(), absl::StatusCode::kResourceExhausted);
  ExpectError(small.status(), absl::StrCat("the file has ", size, " bytes, above the limit of ", size - 1));
  options.max_bytes = size;
  EXPECT_TRUE(LoadGraph(path.string(), options).ok());
  // ParseGraph applies the same limit to bytes in memory.
  options.max_bytes = 10;
  ExpectError(ParseGraph(*SerializeGraph(g, GraphFormat::kBinary), GraphFormat::kBinary, options).status(),
              "above the limit of 10 (GraphLoadOptions::max_bytes)");
}

}  // namespace
}  // namespace tsr
