// The example models (examples/models.h) run end to end through Session and match
// an oracle that runs each node with RunOp on the reference device. Skipped while a
// reference kernel the model needs has not landed (the test names it).
#include "examples/models.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "graph/status_macros.h"
#include "gtest/gtest.h"
#include "kernels/kernel.h"
#include "kernels/run_op.h"
#include "runtime/session.h"

namespace tsr {
namespace {

// The first op of `graph` without a reference f32 kernel, or "".
std::string MissingKernel(const Graph& graph) {
  for (const Node* n : graph.nodes()) {
    if (n->op() == "Placeholder" || n->op() == "Variable") continue;
    if (KernelRegistry::Global().Find(n->op(), kReferenceDevice, DType::kF32) == nullptr) return n->op();
  }
  return "";
}

// Every node's outputs, computed one node at a time with RunOp on the reference device.
absl::StatusOr<absl::flat_hash_map<std::string, Tensor>> Oracle(
    const Session& session, const std::vector<std::pair<std::string, Tensor>>& feeds) {
  const Graph& g = session.graph();
  absl::flat_hash_map<int, std::vector<Tensor>> values;
  for (const auto& [name, value] : feeds) values[g.FindNode(name)->id()] = {value};
  TSR_ASSIGN_OR_RETURN(std::vector<const Node*> order, g.TopologicalOrder());
  absl::flat_hash_map<std::string, Tensor> by_name;
  for (const Node* n : order) {
    if (n->op() == "Placeholder") {
      if (!values.contains(n->id())) continue;
    } else if (n->op() == "Variable") {
      TSR_ASSIGN_OR_RETURN(Tensor v, session.GetVariable(n->name()));
      values[n->id()] = {v};
    } else {
      std::vector<std::optional<Tensor>> inputs;
      bool available = true;
      for (const TensorRef& ref : n->inputs()) {
        if (!ref.valid()) {
          inputs.push_back(std::nullopt);
        } else if (!values.contains(ref.node)) {
          available = false;
        } else {
          inputs.push_back(values[ref.node][ref.index]);
        }
      }
      if (!available) continue;
      TSR_ASSIGN_OR_RETURN(values[n->id()], RunOp(n->op(), inputs, n->attrs(), {.device = kReferenceDevice}));
    }
    for (int i = 0; i < static_cast<int>(values[n->id()].size()); ++i) {
      by_name[g.TensorName(n->output(i))] = values[n->id()][i];
    }
  }
  return by_name;
}

// Within 1e-5 relative. `per_element`: of each element (the reference device, which
// runs the oracle's kernels); otherwise of the tensor's largest magnitude (the cpu
// device, whose f32-accumulating MatMul differs from the double-accumulating oracle
// by rounding that cancellation magnifies on small elements).
void ExpectClose(const Tensor& actual, const Tensor& expected, const std::string& what, bool per_element) {
  ASSERT_EQ(actual.type(), expected.type()) << what;
  double max_abs = 0;
  for (int64_t i = 0; i < expected.num_elements(); ++i) max_abs = std::max(max_abs, std::abs(expected.GetAsDouble(i)));
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    const double a = actual.GetAsDouble(i);
    const double e = expected.GetAsDouble(i);
    const double bound = 1e-5 * (per_element ? std::abs(e) : max_abs) + 1e-30;
    ASSERT_LE(std::abs(a - e), bound) << what << " element " << i << ": " << a << " vs " << e;
  }
}

// Inputs uniform in [0, 1) from a fixed linear congruential sequence.
Tensor Images(Shape shape, uint64_t seed) {
  Tensor t(DType::kF32, shape);
  uint64_t state = seed;
  for (float& v : t.flat<float>()) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<float>((state >> 40) * 0x1.0p-24);
  }
  return t;
}

void CheckModel(absl::StatusOr<Graph> graph, Shape image_shape, const std::vector<std::string>& intermediates) {
  ASSERT_TRUE(graph.ok()) << graph.status();
  const std::string missing = MissingKernel(*graph);
  if (!missing.empty()) GTEST_SKIP() << "no reference kernel for " << missing << " yet";
  for (const char* device : {"cpu", "reference"}) {
    SCOPED_TRACE(testing::Message() << "device " << device << ", session seed 3, image seed 11");
    const bool per_element = std::string(device) == "reference";
    absl::StatusOr<std::unique_ptr<Session>> session =
        Session::Create(graph->Clone(), {.num_threads = 3, .device = device, .seed = 3});
    ASSERT_TRUE(session.ok()) << session.status();
    const std::vector<std::pair<std::string, Tensor>> feeds = {{"image", Images(image_shape, 11)}};
    std::vector<std::string> fetches = {"logits"};
    fetches.insert(fetches.end(), intermediates.begin(), intermediates.end());
    RunMetadata md;
    absl::StatusOr<std::vector<Tensor>> out = (*session)->Run(feeds, fetches, &md);
    ASSERT_TRUE(out.ok()) << out.status();
    absl::StatusOr<absl::flat_hash_map<std::string, Tensor>> oracle = Oracle(**session, feeds);
    ASSERT_TRUE(oracle.ok()) << oracle.status();
    const std::string logits_name = graph->TensorName(graph->outputs()[0].ref);
    ExpectClose((*out)[0], oracle->at(logits_name), "logits", per_element);
    EXPECT_EQ((*out)[0].shape(), Shape({image_shape.dim(0), 10}));
    for (size_t i = 0; i < intermediates.size(); ++i) {
      ASSERT_TRUE(oracle->contains(intermediates[i])) << intermediates[i];
      ExpectClose((*out)[i + 1], oracle->at(intermediates[i]), intermediates[i], per_element);
    }
    EXPECT_GT(md.peak_bytes, 0);
    // A different batch size re-binds the types.
    Shape one_shape = image_shape;
    one_shape.set_dim(0, 1);
    absl::StatusOr<std::vector<Tensor>> one = (*session)->Run({{"image", Images(one_shape, 11)}}, {"logits"});
    ASSERT_TRUE(one.ok()) << one.status();
    EXPECT_EQ((*one)[0].shape(), Shape({1, 10}));
    // The first example of the batch gives the same logits alone.
    for (int c = 0; c < 10; ++c) {
      EXPECT_NEAR((*one)[0].GetAsDouble(c), (*out)[0].GetAsDouble(c), 1e-4 * (1 + std::abs((*out)[0].GetAsDouble(c))));
    }
  }
}

TEST(ModelsTest, MlpMatchesTheOracle) {
  Graph probe = *examples::BuildMlp();
  // The first hidden layer's activation, by tensor name.
  std::string hidden;
  for (const Node* n : probe.nodes()) {
    if (n->op() == "Relu" && hidden.empty()) hidden = n->name();
  }
  CheckModel(examples::BuildMlp(), Shape({5, 784}),
             hidden.empty() ? std::vector<std::string>{} : std::vector<std::string>{hidden});
}

TEST(ModelsTest, LeNetMatchesTheOracle) {
  Graph probe = *examples::BuildLeNet();
  std::vector<std::string> intermediates;
  for (const Node* n : probe.nodes()) {
    if ((n->op() == "MaxPool" || n->op() == "Flatten")) intermediates.push_back(n->name());
  }
  CheckModel(examples::BuildLeNet(), Shape({3, 1, 28, 28}), intermediates);
}

}  // namespace
}  // namespace tsr
