// Writes the seed corpus of graph_def_fuzzer: a few small valid graphs, each in both
// formats, as "<folder>/<graph>.<format>" files whose first byte selects the format as
// the fuzzer expects (0: binary, 1: text).
//
//   graph_def_fuzz_seeds <folder>
//
// The graphs are built with the Graph API so that the seeds follow the format and the
// op set as they change. A node whose op is missing or rejects its inputs (the op set
// grows while this is written) is skipped with a note on stderr; the rest of its graph
// is still written.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/graph.h"
#include "graph/proto/graph_def_io.h"

namespace tsr {
namespace {

// Adds nodes with inference, skipping those that fail.
class SeedGraph {
 public:
  std::optional<TensorRef> Add(std::string name, std::string op, std::vector<std::optional<TensorRef>> inputs,
                               AttrMap attrs = {}) {
    std::vector<TensorRef> refs;
    for (const std::optional<TensorRef>& in : inputs) {
      if (!in.has_value()) {
        std::fprintf(stderr, "graph_def_fuzz_seeds: skipping '%s': an input was skipped\n", name.c_str());
        return std::nullopt;
      }
      refs.push_back(*in);
    }
    absl::StatusOr<Node*> node = graph.AddNodeAndInfer(name, std::move(op), std::move(refs), std::move(attrs));
    if (!node.ok()) {
      std::fprintf(stderr, "graph_def_fuzz_seeds: skipping '%s': %s\n", name.c_str(),
                   std::string(node.status().message()).c_str());
      return std::nullopt;
    }
    return (*node)->output();
  }

  std::optional<TensorRef> Placeholder(std::string name, DType dtype, Shape shape) {
    std::optional<TensorRef> ref = Add(std::move(name), "Placeholder", {},
                                       {{"dtype", AttrValue::Type(dtype)}, {"shape", AttrValue::FromShape(shape)}});
    if (ref.has_value()) (void)graph.AddInput(graph.node(ref->node)->name(), *ref);
    return ref;
  }

  std::optional<TensorRef> Weight(std::string name, Shape shape, std::string initializer = "glorot_uniform") {
    return Add(std::move(name), "Variable", {},
               {{"dtype", AttrValue::Type(DType::kF32)},
                {"shape", AttrValue::FromShape(std::move(shape))},
                {"initializer", AttrValue::String(std::move(initializer))}});
  }

  std::optional<TensorRef> Int64s(std::string name, std::vector<int64_t> values) {
    const int64_t n = static_cast<int64_t>(values.size());
    return Add(std::move(name), "Constant", {},
               {{"value", AttrValue::FromTensor(Tensor::FromVector<int64_t>(Shape{n}, values))}});
  }

  void Output(const std::string& name, std::optional<TensorRef> ref) {
    if (ref.has_value()) (void)graph.AddOutput(name, *ref);
  }

  Graph graph;
};

// Every source op and a constant of every dtype.
Graph SourceGraph() {
  SeedGraph s;
  std::optional<TensorRef> x = s.Placeholder("x", DType::kF32, Shape{kBatchDim, 3});
  s.Add("w", "Variable", {},
        {{"dtype", AttrValue::Type(DType::kF32)},
         {"shape", AttrValue::FromShape(Shape{3})},
         {"value", AttrValue::FromTensor(Tensor::FromVector<float>(Shape{3}, {1, -2, 0.5f}))}});
  s.Add("c_f16", "Constant", {},
        {{"value", AttrValue::FromTensor(Tensor::FromVector<Float16>(Shape{1}, {Float16::FromFloat(1)}))}});
  s.Add("c_bf16", "Constant", {},
        {{"value", AttrValue::FromTensor(Tensor::FromVector<BFloat16>(Shape{1}, {BFloat16::FromFloat(2)}))}});
  s.Add("c_bool", "Constant", {},
        {{"value", AttrValue::FromTensor(Tensor::FromVector<bool>(Shape{2}, {true, false}))}});
  s.Add("c_i8", "Constant", {}, {{"value", AttrValue::FromTensor(Tensor::Scalar<int8_t>(-3))}});
  s.Add("c_u8", "Constant", {}, {{"value", AttrValue::FromTensor(Tensor::Scalar<uint8_t>(200))}});
  s.Add("c_i32", "Constant", {}, {{"value", AttrValue::FromTensor(Tensor::Scalar<int32_t>(7))}});
  s.Add("c_f64", "Constant", {}, {{"value", AttrValue::FromTensor(Tensor::Scalar<double>(0.25))}});
  s.Int64s("c_i64", {4, 5});
  s.Output("y", s.Add("y", "Identity", {x}));
  return std::move(s.graph);
}

// A two-layer perceptron with a loss.
Graph MlpGraph() {
  SeedGraph s;
  std::optional<TensorRef> x = s.Placeholder("x", DType::kF32, Shape{kBatchDim, 8});
  std::optional<TensorRef> labels = s.Placeholder("labels", DType::kI64, Shape{kBatchDim});
  std::optional<TensorRef> h = s.Add("fc1", "MatMul", {x, s.Weight("fc1/w", Shape{8, 4})});
  h = s.Add("fc1/bias", "Add", {h, s.Weight("fc1/b", Shape{4}, "zeros")});
  h = s.Add("fc1/relu", "Relu", {h});
  h = s.Add("fc2", "Gemm", {h, s.Weight("fc2/w", Shape{4, 3}), s.Weight("fc2/b", Shape{3}, "zeros")},
            {{"alpha", AttrValue::Float(1.0)}});
  s.Output("probs", s.Add("probs", "Softmax", {h}, {{"axis", AttrValue::Int(-1)}}));
  s.Output("loss", s.Add("loss", "SoftmaxCrossEntropyLoss", {h, labels}, {{"reduction", AttrValue::String("mean")}}));
  return std::move(s.graph);
}

// Convolution, pooling and normalization on NCHW images.
Graph CnnGraph() {
  SeedGraph s;
  std::optional<TensorRef> x = s.Placeholder("image", DType::kF32, Shape{kBatchDim, 1, 8, 8});
  std::optional<TensorRef> h = s.Add("conv", "Conv", {x, s.Weight("conv/w", Shape{2, 1, 3, 3}, "he_normal")},
                                     {{"pads", AttrValue::Ints({1, 1, 1, 1})}, {"strides", AttrValue::Ints({1, 1})}});
  h = s.Add("bn", "BatchNormalization",
            {h, s.Weight("bn/scale", Shape{2}, "ones"), s.Weight("bn/bias", Shape{2}), s.Weight("bn/mean", Shape{2}),
             s.Weight("bn/var", Shape{2}, "ones")},
            {{"epsilon", AttrValue::Float(1e-5)}});
  h = s.Add("pool", "MaxPool", {h}, {{"kernel_shape", AttrValue::Ints({2, 2})}, {"strides", AttrValue::Ints({2, 2})}});
  std::optional<TensorRef> gap = s.Add("gap", "GlobalAveragePool", {h});
  s.Output("features", s.Add("flat", "Flatten", {gap}, {{"axis", AttrValue::Int(1)}}));
  return std::move(s.graph);
}

// Shape and indexing ops, with their constant operands.
Graph ShapeGraph() {
  SeedGraph s;
  std::optional<TensorRef> x = s.Placeholder("x", DType::kF32, Shape{kBatchDim, 4, 6});
  std::optional<TensorRef> t = s.Add("t", "Transpose", {x}, {{"perm", AttrValue::Ints({0, 2, 1})}});
  std::optional<TensorRef> r = s.Add("r", "Reshape", {t, s.Int64s("r/shape", {0, 24})});
  std::optional<TensorRef> parts =
      s.Add("split", "Split", {r}, {{"axis", AttrValue::Int(1)}, {"num_outputs", AttrValue::Int(2)}});
  std::optional<TensorRef> second;
  if (parts.has_value()) second = TensorRef{parts->node, 1};
  std::optional<TensorRef> c = s.Add("concat", "Concat", {second, parts}, {{"axis", AttrValue::Int(1)}});
  std::optional<TensorRef> sl =
      s.Add("slice", "Slice", {c, s.Int64s("starts", {2}), s.Int64s("ends", {10}), s.Int64s("axes", {1})});
  std::optional<TensorRef> sum =
      s.Add("sum", "ReduceSum", {sl, s.Int64s("sum/axes", {1})}, {{"keepdims", AttrValue::Int(0)}});
  s.Output("sum", sum);
  s.Output("cast", s.Add("cast", "Cast", {c}, {{"to", AttrValue::Type(DType::kF16)}}));
  s.Output("unsqueezed", s.Add("unsqueeze", "Unsqueeze", {sl, s.Int64s("unsqueeze/axes", {0})}));
  return std::move(s.graph);
}

bool WriteSeed(const std::string& path, char format_byte, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.put(format_byte);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus folder>\n", argv[0]);
    return 2;
  }
  const std::string folder = argv[1];
  const std::pair<const char*, std::function<Graph()>> graphs[] = {
      {"source", SourceGraph}, {"mlp", MlpGraph}, {"cnn", CnnGraph}, {"shape", ShapeGraph}};
  for (const auto& [name, make] : graphs) {
    Graph g = make();
    if (absl::Status s = g.Verify(); !s.ok()) {
      std::fprintf(stderr, "graph_def_fuzz_seeds: graph '%s' does not verify: %s\n", name,
                   std::string(s.message()).c_str());
      return 1;
    }
    for (const auto& [format, suffix, byte] :
         {std::tuple{GraphFormat::kBinary, "pb", '\0'}, std::tuple{GraphFormat::kText, "pbtxt", '\1'}}) {
      absl::StatusOr<std::string> bytes = SerializeGraph(g, format);
      const std::string path = absl::StrCat(folder, "/", name, ".", suffix);
      if (!bytes.ok() || !WriteSeed(path, byte, *bytes)) {
        std::fprintf(stderr, "graph_def_fuzz_seeds: cannot write %s\n", path.c_str());
        return 1;
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace tsr

int main(int argc, char** argv) { return tsr::Main(argc, argv); }
