// Hostile and malformed models: each must give a clear error (naming what is wrong and
// where), never a crash, a huge allocation or a read outside the model's folder.
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/graph/onnx/onnx_test_util.h"

namespace tsr::onnx_test {
namespace {

using ::testing::HasSubstr;

// y = x + w with w an initializer the tests corrupt.
onnx::ModelProto AddModel(const TensorProto& w) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {2});
  AddInitializer(m, w);
  AddNode(m, "Add", {"x", w.name()}, {"y"}, "add");
  AddOutput(m, "y");
  return m;
}

void ExpectError(const absl::StatusOr<ImportedModel>& r, const std::string& substring) {
  ASSERT_FALSE(r.ok()) << "expected an error containing: " << substring;
  EXPECT_THAT(r.status().message(), HasSubstr(substring));
}

TEST(OnnxHostileTest, TruncatedAndGarbageBytes) {
  const std::string bytes = Serialize(AddModel(FloatTensor("w", {2}, {1, 2})));
  ASSERT_TRUE(ImportOnnxModelFromBytes(bytes).ok());
  // Every truncation either fails to parse or is rejected later; none crashes.
  int parse_errors = 0;
  for (size_t n = 0; n < bytes.size(); ++n) {
    absl::StatusOr<ImportedModel> r = ImportOnnxModelFromBytes(absl::string_view(bytes).substr(0, n));
    ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes";
    EXPECT_FALSE(r.status().message().empty());
    if (absl::StrContains(r.status().message(), "do not parse")) ++parse_errors;
  }
  EXPECT_GT(parse_errors, 0);
  ExpectError(ImportOnnxModelFromBytes("\xff\xff\xff\xff garbage"), "not a valid ONNX model");
  OnnxImportOptions small;
  small.max_model_bytes = 10;
  absl::StatusOr<ImportedModel> r = ImportOnnxModelFromBytes(bytes, small);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
}

// A small deterministic fuzz run in the test suite (the libFuzzer target in tests/fuzz
// goes further): random byte flips, insertions and truncations of a valid model with
// several op families each import or fail with a message, and what imports verifies.
TEST(OnnxHostileTest, RandomMutationsNeverCrash) {
  onnx::ModelProto m = MakeModel(11);
  AddInput(m, "x", TensorProto::FLOAT, {"batch", 1, 4, 4});
  AddInitializer(m, FloatTensor("w", {2, 1, 3, 3}, std::vector<float>(18, 0.5f), /*raw=*/true));
  AddInitializer(m, Int64Tensor("shape", {2}, {0, -1}));
  SetInts(AddNode(m, "Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  SetInts(AddNode(m, "MaxPool", {"c"}, {"p"}), "kernel_shape", {2, 2});
  AddNode(m, "Reshape", {"p", "shape"}, {"r"});
  SetInts(AddNode(m, "ReduceMean", {"r"}, {"mean"}), "axes", {1});
  SetInts(AddNode(m, "Split", {"r"}, {"s0", "s1"}), "split", {8, 10});
  SetInt(m.mutable_graph()->mutable_node(4), "axis", 1);
  AddNode(m, "Softmax", {"s1"}, {"y"});
  for (const char* o : {"mean", "s0", "y"}) AddOutput(m, o);
  const std::string seed_bytes = Serialize(m);
  ASSERT_TRUE(ImportOnnxModelFromBytes(seed_bytes).ok()) << ImportOnnxModelFromBytes(seed_bytes).status();
  const uint32_t seed = 20261130;
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937 rng(seed);
  int accepted = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string bytes = seed_bytes;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !bytes.empty(); ++e) {
      const size_t at = rng() % bytes.size();
      switch (rng() % 3) {
        case 0:
          bytes[at] = static_cast<char>(rng());
          break;
        case 1:
          bytes.insert(at, 1, static_cast<char>(rng()));
          break;
        default:
          bytes.resize(at);
          break;
      }
    }
    absl::StatusOr<ImportedModel> r = ImportOnnxModelFromBytes(bytes);
    if (!r.ok()) {
      ASSERT_FALSE(r.status().message().empty()) << "iteration " << iter;
      continue;
    }
    ++accepted;
    ASSERT_TRUE(r->graph.Verify().ok()) << "iteration " << iter;
  }
  // Some mutations (inside float data, names) keep the model valid.
  EXPECT_GT(accepted, 0);
}

TEST(OnnxHostileTest, WrongTensorSizes) {
  TensorProto raw = FloatTensor("w", {2}, {1, 2}, /*raw=*/true);
  raw.mutable_raw_data()->resize(7);
  ExpectError(Import(AddModel(raw)), "tensor 'w': f32[2] needs 8 bytes but raw_data holds 7");
  ExpectError(Import(AddModel(FloatTensor("w", {2}, {1, 2, 3}))), "needs 2 values but the tensor holds 3");
  ExpectError(Import(AddModel(FloatTensor("w", {2, 2}, {}))), "needs 4 values but the tensor holds 0");
  TensorProto u8;
  u8.set_name("w");
  u8.set_data_type(TensorProto::UINT8);
  u8.add_dims(1);
  u8.add_int32_data(300);
  ExpectError(Import(AddModel(u8)), "value 300 at index 0 does not fit type UINT8");
  TensorProto neg = FloatTensor("w", {2}, {1, 2});
  neg.set_dims(0, -2);
  ExpectError(Import(AddModel(neg)), "negative size -2");
  TensorProto str;
  str.set_name("w");
  str.set_data_type(TensorProto::STRING);
  str.add_string_data("hi");
  absl::StatusOr<ImportedModel> r = Import(AddModel(str));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(r.status().message(), HasSubstr("STRING"));
}

TEST(OnnxHostileTest, AbsurdDimsFailWithoutAllocating) {
  // [2^40, 2^40] floats would be 2^82 bytes; the dims are rejected before any buffer exists.
  ExpectError(Import(AddModel(FloatTensor("w", {int64_t{1} << 40, int64_t{1} << 40}, {}))), "more than 2^40 elements");
  // 2^38 floats (1 TiB) pass the element limit but not the byte limit, again before allocating.
  absl::StatusOr<ImportedModel> r = Import(AddModel(FloatTensor("w", {int64_t{1} << 38}, {})));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  // Within the limits, but the data is missing: compared before allocating too.
  ExpectError(Import(AddModel(FloatTensor("w", {int64_t{1} << 28}, {}))), "needs 268435456 values");
  // A graph input of absurd size.
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {int64_t{1} << 40, int64_t{1} << 40});
  AddNode(m, "Relu", {"x"}, {"y"});
  AddOutput(m, "y");
  ExpectError(Import(m), "graph input 'x'");
  std::vector<Dim> many(40, Dim(1));
  onnx::ModelProto deep = MakeModel(13);
  AddInput(deep, "x", TensorProto::FLOAT, many);
  AddNode(deep, "Relu", {"x"}, {"y"});
  AddOutput(deep, "y");
  ExpectError(Import(deep), "rank 40");
}

// External data: the model's folder holds "weights.bin" (8 bytes: two floats) and a
// symlink pointing outside; a file outside holds a float too.
class OnnxExternalDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTempDir("external");
    dir_ = root_ + "/model";
    std::filesystem::create_directories(dir_ + "/sub");
    const float w[2] = {10, 20};
    Write(dir_ + "/weights.bin", std::string(reinterpret_cast<const char*>(w), sizeof(w)));
    Write(dir_ + "/sub/w.bin", std::string(4, '\0') + std::string(reinterpret_cast<const char*>(w), sizeof(w)));
    Write(root_ + "/outside.bin", std::string(reinterpret_cast<const char*>(w), sizeof(w)));
    std::filesystem::create_symlink(root_ + "/outside.bin", dir_ + "/link.bin");
    std::filesystem::create_symlink(dir_ + "/weights.bin", dir_ + "/inner_link.bin");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  static void Write(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
  }

  static TensorProto External(const std::string& location, const std::string& offset = "",
                              const std::string& length = "") {
    TensorProto t;
    t.set_name("w");
    t.set_data_type(TensorProto::FLOAT);
    t.add_dims(2);
    t.set_data_location(TensorProto::EXTERNAL);
    auto add = [&](const std::string& k, const std::string& v) {
      onnx::StringStringEntryProto* e = t.add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", location);
    if (!offset.empty()) add("offset", offset);
    if (!length.empty()) add("length", length);
    return t;
  }

  absl::StatusOr<ImportedModel> ImportFrom(const TensorProto& w) { return Import(AddModel(w), {}, dir_); }

  std::string root_, dir_;
};

TEST_F(OnnxExternalDataTest, InsideTheFolderLoads) {
  for (const TensorProto& w : {External("weights.bin"), External("sub/w.bin", "4", "8"), External("inner_link.bin")}) {
    absl::StatusOr<ImportedModel> model = ImportFrom(w);
    ASSERT_TRUE(model.ok()) << model.status();
    const Tensor* value = model->graph.ConstantValue(model->graph.FindNode("w")->output(0));
    ASSERT_NE(value, nullptr);
    ExpectTensorNear(*value, {2}, {10, 20});
  }
  // Through a file on disk: the folder is the file's.
  const std::string path = dir_ + "/model.onnx";
  Write(path, Serialize(AddModel(External("weights.bin"))));
  absl::StatusOr<ImportedModel> model = ImportOnnxModel(path);
  ASSERT_TRUE(model.ok()) << model.status();
}

TEST_F(OnnxExternalDataTest, EscapesAreRejected) {
  ExpectError(ImportFrom(External("../outside.bin")), "'..' segment");
  ExpectError(ImportFrom(External("sub/../../outside.bin")), "'..' segment");
  ExpectError(ImportFrom(External("/etc/passwd")), "absolute path");
  ExpectError(ImportFrom(External(root_ + "/outside.bin")), "absolute path");
  ExpectError(ImportFrom(External("link.bin")), "outside the model's folder");
  ExpectError(ImportFrom(External("..\\outside.bin")), "backslash");
  ExpectError(ImportFrom(External("")), "location is empty");
  ExpectError(ImportFrom(External("missing.bin")), "cannot resolve");
  ExpectError(ImportFrom(External("sub")), "not a regular file");
  // Without a folder (bytes from memory), external data is refused.
  ExpectError(Import(AddModel(External("weights.bin"))), "not loaded from a file");
}

TEST_F(OnnxExternalDataTest, OffsetsAndLengthsAreChecked) {
  ExpectError(ImportFrom(External("weights.bin", "100")), "offset 100 is past the end of the file (8 bytes)");
  ExpectError(ImportFrom(External("weights.bin", "4", "8")), "past the end of the file");
  ExpectError(ImportFrom(External("weights.bin", "0", "4")), "length 4 but the tensor's type and dims need 8");
  ExpectError(ImportFrom(External("weights.bin", "-1")), "offset -1 is negative");
  ExpectError(ImportFrom(External("weights.bin", "x")), "is not an integer");
  ExpectError(ImportFrom(External("sub/w.bin")), "holds 12 bytes from offset 0");
}

TEST(OnnxHostileTest, CyclesAndOrder) {
  // a = Relu(b), b = Relu(a): a cycle.
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {2});
  AddNode(m, "Add", {"x", "b"}, {"a"}, "first");
  AddNode(m, "Relu", {"a"}, {"b"}, "second");
  AddOutput(m, "b");
  ExpectError(Import(m), "the graph has a cycle (a <- b <- a)");
  // A node reading its own output.
  onnx::ModelProto self = MakeModel(13);
  AddInput(self, "x", TensorProto::FLOAT, {2});
  AddNode(self, "Add", {"x", "y"}, {"y"}, "loop");
  AddOutput(self, "y");
  ExpectError(Import(self), "'loop' (Add, opset 13): input 1 'y' depends on the node's own output");
  // Out of order (no cycle).
  onnx::ModelProto order = MakeModel(13);
  AddInput(order, "x", TensorProto::FLOAT, {2});
  AddNode(order, "Relu", {"a"}, {"y"}, "late");
  AddNode(order, "Relu", {"x"}, {"a"}, "early");
  AddOutput(order, "y");
  ExpectError(Import(order), "input 0 'a' is used before ONNX node 'early' (Relu, opset 13) defines it");
  // Undefined.
  onnx::ModelProto undefined = MakeModel(13);
  AddInput(undefined, "x", TensorProto::FLOAT, {2});
  AddNode(undefined, "Add", {"x", "nowhere"}, {"y"});
  AddOutput(undefined, "y");
  ExpectError(Import(undefined), "input 1 'nowhere' is not a graph input, an initializer or the output of any node");
  onnx::ModelProto no_output = MakeModel(13);
  AddInput(no_output, "x", TensorProto::FLOAT, {2});
  AddOutput(no_output, "ghost");
  ExpectError(Import(no_output), "graph output 'ghost'");
}

TEST(OnnxHostileTest, DuplicateNames) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {2});
  AddNode(m, "Relu", {"x"}, {"y"}, "r1");
  AddNode(m, "Neg", {"x"}, {"y"}, "r2");
  AddOutput(m, "y");
  ExpectError(Import(m), "output 'y' is already produced by ONNX node 'r1'");
  onnx::ModelProto names = MakeModel(13);
  AddInput(names, "x", TensorProto::FLOAT, {2});
  AddNode(names, "Relu", {"x"}, {"a"}, "same");
  AddNode(names, "Neg", {"a"}, {"b"}, "same");
  AddOutput(names, "b");
  ExpectError(Import(names), "node name 'same' is used by two nodes");
  onnx::ModelProto inits = AddModel(FloatTensor("w", {2}, {1, 2}));
  AddInitializer(inits, FloatTensor("w", {2}, {1, 2}));
  ExpectError(Import(inits), "initializer 'w' is defined twice");
  onnx::ModelProto shadow = MakeModel(13);
  AddInput(shadow, "x", TensorProto::FLOAT, {2});
  AddNode(shadow, "Relu", {"x"}, {"x"});
  AddOutput(shadow, "x");
  ExpectError(Import(shadow), "output 'x' is also a graph input or initializer");
  onnx::ModelProto inputs = MakeModel(13);
  AddInput(inputs, "x", TensorProto::FLOAT, {2});
  AddInput(inputs, "x", TensorProto::FLOAT, {2});
  ExpectError(Import(inputs), "graph input 'x' is listed twice");
}

TEST(OnnxHostileTest, UnsupportedOpsAndAttributes) {
  onnx::ModelProto m = MakeModel(13);
  AddInput(m, "x", TensorProto::FLOAT, {1, 1, 2, 2});
  AddNode(m, "GridSample", {"x", "x"}, {"y"}, "up");
  AddOutput(m, "y");
  absl::StatusOr<ImportedModel> r = Import(m);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(r.status().message(),
              HasSubstr("ONNX node 'up' (GridSample, opset 13): op type 'GridSample' is not supported"));

  onnx::ModelProto domain = MakeModel(13);
  AddInput(domain, "x", TensorProto::FLOAT, {2});
  AddNode(domain, "FusedGemm", {"x"}, {"y"}, "ms")->set_domain("com.microsoft");
  AddOutput(domain, "y");
  ExpectError(Import(domain), "op 'FusedGemm' of domain 'com.microsoft' is not supported");

  // An attribute the importer does not know is an error, not ignored.
  onnx::ModelProto attr = MakeModel(13);
  AddInput(attr, "x", TensorProto::FLOAT, {2});
  SetFloat(AddNode(attr, "Relu", {"x"}, {"y"}, "relu"), "slope", 0.5f);
  AddOutput(attr, "y");
  r = Import(attr);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(r.status().message(), HasSubstr("'relu' (Relu, opset 13): attribute 'slope' is not supported"));

  // An attribute of the wrong type.
  onnx::ModelProto typed = MakeModel(13);
  AddInput(typed, "x", TensorProto::FLOAT, {2});
  SetString(AddNode(typed, "LeakyRelu", {"x"}, {"y"}, "lr"), "alpha", "big");
  AddOutput(typed, "y");
  ExpectError(Import(typed), "attribute 'alpha' has type STRING but FLOAT is required");

  // Missing required attributes.
  onnx::ModelProto concat = MakeModel(13);
  AddInput(concat, "x", TensorProto::FLOAT, {2});
  AddNode(concat, "Concat", {"x", "x"}, {"y"}, "cat");
  AddOutput(concat, "y");
  ExpectError(Import(concat), "required attribute 'axis'");
  onnx::ModelProto cast = MakeModel(13);
  AddInput(cast, "x", TensorProto::FLOAT, {2});
  AddNode(cast, "Cast", {"x"}, {"y"}, "cast");
  AddOutput(cast, "y");
  ExpectError(Import(cast), "'cast' (Cast, opset 13): required attribute 'to' is missing");

  // An element type Tessera lacks.
  onnx::ModelProto i16 = MakeModel(13);
  AddInput(i16, "x", TensorProto::INT16, {2});
  AddNode(i16, "Relu", {"x"}, {"y"});
  AddOutput(i16, "y");
  ExpectError(Import(i16), "INT16 is not supported");

  // An output the Tessera op does not have.
  onnx::ModelProto outs = MakeModel(13);
  AddInput(outs, "x", TensorProto::FLOAT, {2});
  AddNode(outs, "Relu", {"x"}, {"y", "extra"}, "two");
  AddOutput(outs, "y");
  ExpectError(Import(outs), "output 1 ('extra') is not supported");
}

TEST(OnnxHostileTest, ModelLevelChecks) {
  onnx::ModelProto m = AddModel(FloatTensor("w", {2}, {1, 2}));
  m.clear_opset_import();
  ExpectError(Import(m), "does not import the default ONNX domain");
  m = AddModel(FloatTensor("w", {2}, {1, 2}));
  m.clear_graph();
  ExpectError(Import(m), "has no graph");
  // A declared output type that disagrees with what the graph computes.
  m = AddModel(FloatTensor("w", {2}, {1, 2}));
  SetType(m.mutable_graph()->mutable_output(0), TensorProto::INT64, {2});
  ExpectError(Import(m), "graph output 'y' is declared as INT64 but computes f32[2]");
  // An op's own checks still run (shape mismatch in Add), naming the ONNX node.
  m = AddModel(FloatTensor("w", {3}, {1, 2, 3}));
  ExpectError(Import(m), "ONNX node 'add' (Add, opset 13)");
  // Missing input shape.
  onnx::ModelProto shapeless = MakeModel(13);
  onnx::ValueInfoProto* v = shapeless.mutable_graph()->add_input();
  v->set_name("x");
  v->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
  ExpectError(Import(shapeless), "graph input 'x' has no shape");
  // A path that does not exist.
  absl::StatusOr<ImportedModel> r = ImportOnnxModel("/nonexistent/model.onnx");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("/nonexistent/model.onnx"));
}

}  // namespace
}  // namespace tsr::onnx_test
