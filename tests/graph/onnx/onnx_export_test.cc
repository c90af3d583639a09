// Tests of the ONNX exporter (graph/onnx/onnx_exporter.h): round trips — export, ONNX
// checker and strict shape inference, import with Tessera's own importer, run both graphs
// on the same random inputs and compare — for the example models and a graph per op
// family (including the decompositions of Silu, Gelu and Rsqrt and the opset-17 forms of
// Reduce* and Split); errors that name node and op; atomic writes.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "examples/models.h"
#include "graph/builder/graph_builder.h"
#include "graph/builder/nn.h"
#include "graph/builder/ops.h"
#include "graph/onnx/onnx_export_model.h"
#include "graph/onnx/onnx_exporter.h"
#include "graph/onnx/onnx_importer.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"
#include "runtime/session.h"

namespace tsr {
namespace {

constexpr uint32_t kSeed = 20261130;

Tensor RandomTensor(const TensorType& type, int64_t batch, std::mt19937& rng, double lo = -1, double hi = 1) {
  Tensor t(type.dtype, type.shape.BindBatch(batch));
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    switch (type.dtype) {
      case DType::kF32:
        t.data<float>()[i] = static_cast<float>(dist(rng));
        break;
      case DType::kF64:
        t.data<double>()[i] = dist(rng);
        break;
      case DType::kI64:
        t.data<int64_t>()[i] = static_cast<int64_t>(std::floor(dist(rng)));
        break;
      case DType::kBool:
        t.data<bool>()[i] = dist(rng) > 0;
        break;
      default:
        ADD_FAILURE() << "no random values for " << DTypeName(type.dtype);
    }
  }
  return t;
}

// |a - b| <= 1e-5 |a| + 1e-6 elementwise (exact for integers and bools).
void ExpectClose(const Tensor& expected, const Tensor& actual, const std::string& what) {
  ASSERT_EQ(expected.type(), actual.type()) << what;
  int reported = 0;
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    const double a = expected.GetAsDouble(i), b = actual.GetAsDouble(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (std::abs(a - b) > 1e-5 * std::abs(a) + 1e-6 && reported++ < 5) {
      ADD_FAILURE() << what << " element " << i << ": Tessera " << a << " vs exported model " << b;
    }
  }
}

struct RoundTrip {
  onnx::ModelProto model;
  ImportedModel imported;
};

// Runs `graph` (variables set to random values, as if trained), exports it with those
// values, checks it, imports it and runs the import on the same inputs; every signature
// output must agree.
void ExpectRoundTrip(Graph graph, int64_t batch, OnnxExportOptions options = {}, RoundTrip* result = nullptr) {
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  std::mt19937 rng(kSeed);
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const SignatureEntry& e : graph.inputs())
    feeds.emplace_back(e.name, RandomTensor(*graph.TypeOf(e.ref), batch, rng));
  std::vector<std::string> fetches;
  for (const SignatureEntry& e : graph.outputs()) fetches.push_back(e.name);

  absl::StatusOr<std::unique_ptr<Session>> tessera = Session::Create(graph.Clone(), {.num_threads = 1, .seed = 1});
  ASSERT_TRUE(tessera.ok()) << tessera.status();
  for (const std::string& name : (*tessera)->VariableNames()) {
    absl::StatusOr<Tensor> v = (*tessera)->GetVariable(name);
    ASSERT_TRUE(v.ok()) << v.status();
    Tensor value = RandomTensor(v->type(), 1, rng, 0.1, 1.0);  // positive: valid BN variances too
    ASSERT_TRUE((*tessera)->SetVariable(name, value).ok());
    options.variable_values[name] = value;
  }
  absl::StatusOr<std::vector<Tensor>> expected = (*tessera)->Run(feeds, fetches);
  ASSERT_TRUE(expected.ok()) << expected.status();

  absl::StatusOr<onnx::ModelProto> model = ExportOnnxModel(graph, options);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(CheckOnnxModel(*model).ok()) << CheckOnnxModel(*model);
  absl::StatusOr<std::string> bytes = ExportOnnxModelToBytes(graph, options);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<ImportedModel> imported = ImportOnnxModelFromBytes(*bytes);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->output_names, fetches);

  absl::StatusOr<std::unique_ptr<Session>> onnx_session =
      Session::Create(imported->graph.Clone(), {.num_threads = 1, .seed = 2});
  ASSERT_TRUE(onnx_session.ok()) << onnx_session.status();
  absl::StatusOr<std::vector<Tensor>> actual = (*onnx_session)->Run(feeds, fetches);
  ASSERT_TRUE(actual.ok()) << actual.status();
  for (size_t i = 0; i < fetches.size(); ++i) ExpectClose((*expected)[i], (*actual)[i], fetches[i]);
  if (result != nullptr) *result = {*std::move(model), *std::move(imported)};
}

int CountOps(const onnx::ModelProto& model, const std::string& op) {
  int n = 0;
  for (const onnx::NodeProto& node : model.graph().node()) n += node.op_type() == op;
  return n;
}

Graph Build(GraphBuilder& b) {
  absl::StatusOr<Graph> g = b.Finish();
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : Graph();
}

TEST(OnnxExportTest, MlpRoundTrip) {
  absl::StatusOr<Graph> mlp = examples::BuildMlp({.input_features = 20, .hidden_units = {16, 12}, .num_classes = 5});
  ASSERT_TRUE(mlp.ok()) << mlp.status();
  RoundTrip rt;
  ExpectRoundTrip(*std::move(mlp), 3, {}, &rt);
  // Names survive: the signature and the Variables (as initializers).
  EXPECT_EQ(rt.imported.input_names, std::vector<std::string>{"image"});
  EXPECT_NE(std::find(rt.imported.initializer_names.begin(), rt.imported.initializer_names.end(), "dense/kernel"),
            rt.imported.initializer_names.end());
  const onnx::TensorShapeProto& in_shape = rt.model.graph().input(0).type().tensor_type().shape();
  ASSERT_EQ(in_shape.dim_size(), 2);
  EXPECT_EQ(in_shape.dim(0).dim_param(), "N");
  EXPECT_EQ(in_shape.dim(1).dim_value(), 20);
  EXPECT_EQ(rt.model.opset_import(0).version(), 17);
}

TEST(OnnxExportTest, LeNetRoundTripWithFixedBatch) {
  absl::StatusOr<Graph> lenet = examples::BuildLeNet();
  ASSERT_TRUE(lenet.ok()) << lenet.status();
  RoundTrip rt;
  ExpectRoundTrip(*std::move(lenet), 2, {.batch_size = 2}, &rt);
  EXPECT_EQ(rt.model.graph().input(0).type().tensor_type().shape().dim(0).dim_value(), 2);
  EXPECT_EQ(CountOps(rt.model, "Conv"), 2);
  EXPECT_EQ(CountOps(rt.model, "MaxPool"), 2);
}

TEST(OnnxExportTest, ActivationsAndDecompositions) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, Shape({kBatchDim, 7}));
  Output y = b.Input("y", DType::kF32, Shape({7}));
  b.MarkOutput("silu", ops::Silu(b, x));
  b.MarkOutput("gelu", ops::Gelu(b, x));
  b.MarkOutput("gelu_tanh", ops::Gelu(b, x, "tanh"));
  b.MarkOutput("rsqrt", ops::Rsqrt(b, ops::Add(b, ops::Abs(b, x), ops::Scalar(b, 1.0, DType::kF32))));
  b.MarkOutput("relu", ops::Relu(b, x));
  b.MarkOutput("leaky", ops::LeakyRelu(b, x, 0.2));
  b.MarkOutput("sigmoid", ops::Sigmoid(b, x));
  b.MarkOutput("tanh", ops::Tanh(b, x));
  b.MarkOutput("softplus", ops::Softplus(b, x));
  b.MarkOutput("erf", ops::Erf(b, x));
  // Broadcasting binary ops and unary math.
  Output pos = ops::Add(b, ops::Abs(b, x), ops::Scalar(b, 0.5, DType::kF32));
  b.MarkOutput("arith", ops::Div(b, ops::Sub(b, ops::Mul(b, x, y), y), pos));
  b.MarkOutput("pow", ops::Pow(b, pos, y));
  b.MarkOutput("explog", ops::Add(b, ops::Exp(b, x), ops::Log(b, pos)));
  b.MarkOutput("sqrt_recip", ops::Reciprocal(b, ops::Sqrt(b, pos)));
  b.MarkOutput("neg", ops::Neg(b, x));
  b.MarkOutput("maxmin", ops::Sub(b, ops::Max(b, x, y), ops::Min(b, x, y)));
  b.MarkOutput("where", ops::Where(b, ops::Greater(b, x, y), x, ops::Clip(b, y, -0.25, 0.25)));
  b.MarkOutput("less", ops::Less(b, x, y));
  b.MarkOutput("cast", ops::Cast(b, ops::Greater(b, x, y), DType::kF32));
  b.MarkOutput("identity", ops::Identity(b, x));
  RoundTrip rt;
  ExpectRoundTrip(Build(b), 4, {}, &rt);
  // Opset 17 has no Silu, Gelu or Rsqrt: they are decomposed.
  EXPECT_EQ(CountOps(rt.model, "Erf"), 2);      // Gelu and the Erf output
  EXPECT_GE(CountOps(rt.model, "Sigmoid"), 3);  // Silu, Gelu tanh, the output
  EXPECT_EQ(CountOps(rt.model, "Gelu") + CountOps(rt.model, "Silu") + CountOps(rt.model, "Rsqrt"), 0);
}

TEST(OnnxExportTest, ReductionsAtOpsets13And17) {
  for (int64_t opset : {13, 17}) {
    SCOPED_TRACE(absl::StrCat("opset ", opset));
    GraphBuilder b;
    Output x = b.Input("x", DType::kF32, Shape({kBatchDim, 3, 4}));
    Output pos = ops::Add(b, ops::Abs(b, x), ops::Scalar(b, 0.5, DType::kF32));
    b.MarkOutput("sum", ops::ReduceSum(b, x, {1}, true));
    b.MarkOutput("sum_all", ops::ReduceSum(b, x, std::vector<int64_t>{}, false));
    b.MarkOutput("mean", ops::ReduceMean(b, x, {-1}, false));
    b.MarkOutput("max", ops::ReduceMax(b, x, {1, 2}, true));
    b.MarkOutput("min", ops::ReduceMin(b, x, {2}, false));
    b.MarkOutput("prod", ops::ReduceProd(b, pos, {2}, true));
    b.MarkOutput("l2", ops::ReduceL2(b, x, {1}, false));
    b.MarkOutput("argmax", ops::ArgMax(b, x, {.axis = 2}));
    RoundTrip rt;
    ExpectRoundTrip(Build(b), 3, {.opset = opset}, &rt);
    // Before opset 18 ReduceMean's axes are an attribute; ReduceSum's an input from 13.
    for (const onnx::NodeProto& node : rt.model.graph().node()) {
      if (node.op_type() == "ReduceMean") {
        EXPECT_EQ(node.input_size(), 1);
        ASSERT_EQ(node.attribute_size(), 2);  // axes, keepdims=0
      }
      if (node.op_type() == "ReduceSum" && node.output(0) == "sum") {
        EXPECT_EQ(node.input_size(), 2);
      }
    }
  }
}

TEST(OnnxExportTest, ConvPoolNormalization) {
  GraphBuilder b;
  std::mt19937 rng(kSeed);
  auto weight = [&](Shape shape, double lo, double hi) {
    return ops::Const(b, RandomTensor(TensorType(DType::kF32, std::move(shape)), 1, rng, lo, hi));
  };
  Output x = b.Input("x", DType::kF32, Shape({kBatchDim, 3, 8, 8}));
  Output conv =
      ops::Conv(b, x, weight({4, 3, 3, 3}, -1, 1), weight({4}, -1, 1), {.strides = {1, 1}, .pads = {1, 1, 1, 1}});
  Output bn = ops::BatchNormalization(b, conv, weight({4}, 0.5, 1.5), weight({4}, -1, 1), weight({4}, -1, 1),
                                      weight({4}, 0.5, 2), {.epsilon = 1e-3});
  Output pooled = ops::MaxPool(b, ops::Relu(b, bn), {.kernel_shape = {2, 2}, .strides = {2, 2}});
  b.MarkOutput("avg", ops::AveragePool(b, bn, {.kernel_shape = {3, 3}, .pads = {1, 1, 1, 1}}));
  b.MarkOutput("gap", ops::GlobalAveragePool(b, pooled));
  Output flat = ops::Flatten(b, pooled);  // [N, 64]
  Output dense = ops::Add(b, ops::MatMul(b, flat, weight({64, 10}, -0.2, 0.2)), weight({10}, -1, 1));
  Output gemm = ops::Gemm(b, dense, weight({6, 10}, -1, 1), weight({6}, -1, 1), {.alpha = 0.5, .trans_b = true});
  b.MarkOutput("layer_norm", ops::LayerNormalization(b, gemm, weight({6}, 0.5, 1.5), weight({6}, -1, 1)));
  b.MarkOutput("softmax", ops::Softmax(b, gemm));
  b.MarkOutput("log_softmax", ops::LogSoftmax(b, dense, 1));
  RoundTrip rt;
  ExpectRoundTrip(Build(b), 2, {}, &rt);
  EXPECT_EQ(CountOps(rt.model, "BatchNormalization"), 1);
  EXPECT_EQ(CountOps(rt.model, "LayerNormalization"), 1);
}

TEST(OnnxExportTest, ShapesAndLayout) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, Shape({kBatchDim, 4, 6}));
  b.MarkOutput("reshape", ops::Reshape(b, x, {0, 6, 4}));
  b.MarkOutput("transpose", ops::Transpose(b, x, {0, 2, 1}));
  b.MarkOutput("concat", ops::Concat(b, {x, ops::Neg(b, x)}, 2));
  b.MarkOutput("slice", ops::Slice(b, x, {1, 0}, {3, 6}, {1, 2}, {1, 2}));
  b.MarkOutput("gather", ops::Gather(b, x, ops::Const(b, std::vector<int64_t>{5, 0, 2}), 2));
  b.MarkOutput("pad", ops::Pad(b, x, {0, 1, 2, 0, 0, 1}, {.constant_value = 0.5}));
  b.MarkOutput("pad_reflect", ops::Pad(b, x, {0, 1, 1, 0, 1, 1}, {.mode = "reflect"}));
  std::vector<Output> halves = ops::Split(b, x, 2, 2);  // num_outputs: opset 18 only, sizes at 17
  b.MarkOutput("split0", halves[0]);
  b.MarkOutput("split1", halves[1]);
  // 5 into 2: pieces of 3 and 2.
  std::vector<Output> uneven = ops::Split(b, ops::Slice(b, x, {0}, {5}, {2}), 2, 2);
  b.MarkOutput("uneven_last", uneven.back());
  std::vector<Output> sized = ops::Split(b, x, std::vector<int64_t>{1, 3}, 1);
  b.MarkOutput("sized1", sized[1]);
  b.MarkOutput("unsqueeze", ops::Unsqueeze(b, x, std::vector<int64_t>{1}));
  b.MarkOutput("squeeze", ops::Squeeze(b, ops::Slice(b, x, {0}, {1}, {1}), std::vector<int64_t>{1}));
  b.MarkOutput("tile", ops::Tile(b, x, std::vector<int64_t>{1, 2, 1}));
  b.MarkOutput("expand", ops::Expand(b, ops::Slice(b, x, {0}, {1}, {1}), std::vector<int64_t>{1, 3, 6}));
  // An output that is directly a graph input goes through an Identity.
  b.MarkOutput("x_again", x);
  RoundTrip rt;
  ExpectRoundTrip(Build(b), 3, {}, &rt);
  EXPECT_EQ(CountOps(rt.model, "Split"), 3);
}

TEST(OnnxExportTest, FrozenVariablesAndSinksWithoutSignature) {
  // No signature outputs: the sinks are exported. The Variable holds its value.
  Graph g;
  AttrMap pattrs;
  pattrs["dtype"] = AttrValue::Type(DType::kF32);
  pattrs["shape"] = AttrValue::FromShape(Shape({kBatchDim, 3}));
  absl::StatusOr<Node*> x = g.AddNodeAndInfer("x", "Placeholder", {}, pattrs);
  ASSERT_TRUE(x.ok());
  AttrMap vattrs;
  vattrs["dtype"] = AttrValue::Type(DType::kF32);
  vattrs["shape"] = AttrValue::FromShape(Shape({3}));
  vattrs["value"] = AttrValue::FromTensor(Tensor::FromVector<float>(Shape({3}), {1.f, 2.f, 3.f}));
  absl::StatusOr<Node*> v = g.AddNodeAndInfer("w", "Variable", {}, vattrs);
  ASSERT_TRUE(v.ok());
  ASSERT_TRUE(g.AddNodeAndInfer("y", "Mul", {(*x)->output(), (*v)->output()}).ok());
  absl::StatusOr<onnx::ModelProto> model = ExportOnnxModel(g);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(CheckOnnxModel(*model).ok());
  ASSERT_EQ(model->graph().output_size(), 1);
  EXPECT_EQ(model->graph().output(0).name(), "y");
  ASSERT_EQ(model->graph().input_size(), 1);
  EXPECT_EQ(model->graph().input(0).name(), "x");
  ASSERT_EQ(model->graph().initializer_size(), 1);
  EXPECT_EQ(model->graph().initializer(0).name(), "w");

  // A Variable with neither a value nor one in the options is an error naming it.
  Graph g2;
  vattrs.erase("value");
  ASSERT_TRUE(g2.AddNodeAndInfer("w2", "Variable", {}, vattrs).ok());
  ASSERT_TRUE(g2.AddNodeAndInfer("n", "Neg", {TensorRef{0, 0}}).ok());
  absl::StatusOr<onnx::ModelProto> missing = ExportOnnxModel(g2);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("variable 'w2' has no value"), std::string::npos) << missing.status();
}

Graph TrainingGraph() {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, Shape({kBatchDim, 3}));
  Output p = ops::Variable(b, "p", DType::kF32, Shape({3}));
  Output y = ops::Mul(b, x, p);
  b.MarkOutput("y", y);
  b.Op1("SGDUpdate", {p, ops::ReduceSum(b, y, {0}, false), ops::Scalar(b, 0.1, DType::kF32)}, {}, "sgd");
  return Build(b);
}

TEST(OnnxExportTest, TrainingOpsAreRefused) {
  absl::StatusOr<onnx::ModelProto> model = ExportOnnxModel(TrainingGraph(), {.variable_values = {}});
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(model.status().message().find("node 'sgd' (SGDUpdate): training ops cannot be exported to ONNX; export "
                                          "the inference graph"),
            std::string::npos)
      << model.status();

  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, Shape({kBatchDim, 2, 3}));
  Output c = ops::Const(b, Tensor::FromVector<float>(Shape({2}), {1.f, 1.f}));
  b.MarkOutput("y", ops::BatchNormalizationTraining(b, x, c, c, c, c, {}, "bn_train")[0]);
  absl::StatusOr<onnx::ModelProto> bn = ExportOnnxModel(Build(b));
  ASSERT_FALSE(bn.ok());
  EXPECT_NE(bn.status().message().find("node 'bn_train' (BatchNormalization): training_mode=1"), std::string::npos)
      << bn.status();
}

TEST(OnnxExportTest, OpsetLimitsAreErrors) {
  GraphBuilder b;
  Output x = b.Input("x", DType::kF32, Shape({kBatchDim, 4}));
  Output s = ops::Const(b, Tensor::FromVector<float>(Shape({4}), {1.f, 1.f, 1.f, 1.f}));
  b.MarkOutput("ln", ops::LayerNormalization(b, x, s, Output(), {}, "ln"));
  Graph g = Build(b);
  absl::StatusOr<onnx::ModelProto> old = ExportOnnxModel(g, {.opset = 16});
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.status().message().find("node 'ln' (LayerNormalization): ONNX opset 16 has no op 'LayerNormalization'"),
            std::string::npos)
      << old.status();
  EXPECT_FALSE(ExportOnnxModel(g, {.opset = 12}).ok());
  EXPECT_FALSE(ExportOnnxModel(g, {.opset = 18}).ok());
  EXPECT_TRUE(ExportOnnxModel(g, {.opset = 17}).ok());
}

// Every registered op either exports or says why not; the lists are printed.
TEST(OnnxExportTest, SupportOfEveryRegisteredOp) {
  std::vector<std::string> exported, refused;
  for (const std::string& op : OpRegistry::Global().OpNames()) {
    absl::Status s = OnnxExportSupport(*OpRegistry::Global().Find(op));
    if (s.ok()) {
      exported.push_back(op);
    } else {
      EXPECT_FALSE(s.message().empty()) << op;
      refused.push_back(absl::StrCat(op, " (", s.message(), ")"));
    }
  }
  std::cout << "exported at opset 17 (" << exported.size() << "): " << absl::StrJoin(exported, ", ") << "\n"
            << "refused (" << refused.size() << "):\n  " << absl::StrJoin(refused, "\n  ") << "\n";
  for (const char* op : {"Silu", "Gelu", "Rsqrt", "Conv", "ReduceMean", "Split", "Variable"}) {
    EXPECT_TRUE(OnnxExportSupport(*OpRegistry::Global().Find(op)).ok()) << op;
  }
  for (const char* op : {"SGDUpdate", "AdamUpdate", "Assign", "ConvGradFilter"}) {
    absl::Status s = OnnxExportSupport(*OpRegistry::Global().Find(op));
    EXPECT_NE(s.message().find("training ops cannot be exported to ONNX"), std::string::npos) << op << ": " << s;
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(OnnxExportTest, SaveIsAtomic) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / absl::StrCat("onnx_export_test_", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "model.onnx").string();
  absl::StatusOr<Graph> mlp = examples::BuildMlp({.input_features = 4, .hidden_units = {3}, .num_classes = 2});
  ASSERT_TRUE(mlp.ok());

  // Unwritable: an error naming the path, and no file.
  const std::string missing = (dir / "no" / "such" / "model.onnx").string();
  OnnxExportOptions frozen;
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Create(mlp->Clone(), {.num_threads = 1});
  ASSERT_TRUE(session.ok());
  for (const std::string& name : (*session)->VariableNames())
    frozen.variable_values[name] = *(*session)->GetVariable(name);
  absl::Status s = SaveOnnxModel(*mlp, missing, frozen);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(missing), std::string::npos) << s;
  EXPECT_FALSE(std::filesystem::exists(missing));

  // A failed export leaves an existing file untouched, and no temporary file behind.
  { std::ofstream(path) << "old contents"; }
  ASSERT_FALSE(SaveOnnxModel(TrainingGraph(), path).ok());
  ASSERT_FALSE(SaveOnnxModel(*mlp, path).ok());  // Variables without values
  EXPECT_EQ(ReadFile(path), "old contents");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1);

  // A successful one replaces it with a model that imports.
  ASSERT_TRUE(SaveOnnxModel(*mlp, path, frozen).ok());
  absl::StatusOr<ImportedModel> imported = ImportOnnxModel(path);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->output_names, std::vector<std::string>{"logits"});
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tsr
