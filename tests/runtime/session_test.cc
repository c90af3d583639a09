// Tests of Session: a hand-built graph computed by hand (MatMul and Identity from the
// reference kernels), feed checking, fetch resolution, variables, profiling.
#include "runtime/session.h"

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/run_op.h"

namespace tsr {
namespace {

using testing::HasSubstr;

// image f32 [N,3], labels i64 [N]; w = [[1,2],[3,4],[5,6]] (a Variable with a value);
// logits = image @ w; labels_out = Identity(labels); v = an uninitialized-value
// Variable (ones) that nothing reads.
Graph BuildGraph() {
  Graph g;
  auto add = [&](const std::string& name, const std::string& op, std::vector<TensorRef> in, AttrMap attrs) {
    absl::StatusOr<Node*> n = g.AddNodeAndInfer(name, op, std::move(in), std::move(attrs));
    EXPECT_TRUE(n.ok()) << n.status();
    return (*n)->output(0);
  };
  TensorRef image =
      add("image", "Placeholder", {},
          {{"dtype", AttrValue::Type(DType::kF32)}, {"shape", AttrValue::FromShape(Shape({kBatchDim, 3}))}});
  TensorRef labels =
      add("labels_in", "Placeholder", {},
          {{"dtype", AttrValue::Type(DType::kI64)}, {"shape", AttrValue::FromShape(Shape({kBatchDim}))}});
  TensorRef w = add("w", "Variable", {},
                    {{"dtype", AttrValue::Type(DType::kF32)},
                     {"shape", AttrValue::FromShape(Shape({3, 2}))},
                     {"value", AttrValue::FromTensor(Tensor::FromVector<float>(Shape({3, 2}), {1, 2, 3, 4, 5, 6}))}});
  add("v", "Variable", {},
      {{"dtype", AttrValue::Type(DType::kF32)},
       {"shape", AttrValue::FromShape(Shape({2}))},
       {"initializer", AttrValue::String("ones")}});
  TensorRef mm = add("matmul", "MatMul", {image, w}, {});
  TensorRef logits = add("logits_id", "Identity", {mm}, {});
  TensorRef lab = add("labels_id", "Identity", {labels}, {});
  EXPECT_TRUE(g.AddInput("image", image).ok());
  EXPECT_TRUE(g.AddInput("labels", labels).ok());
  EXPECT_TRUE(g.AddOutput("logits", logits).ok());
  EXPECT_TRUE(g.AddOutput("labels_out", lab).ok());
  return g;
}

std::unique_ptr<Session> MakeSession(SessionOptions options = {}) {
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Create(BuildGraph(), options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

Tensor Image(int64_t batch) {
  std::vector<float> v(batch * 3);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return Tensor::FromVector<float>(Shape({batch, 3}), v);
}

TEST(SessionTest, ComputesByHand) {
  for (const char* device : {"cpu", "reference"}) {
    SCOPED_TRACE(device);
    std::unique_ptr<Session> s = MakeSession({.num_threads = 2, .device = device});
    // [[0,1,2],[3,4,5]] @ [[1,2],[3,4],[5,6]] = [[13,16],[40,52]]
    absl::StatusOr<std::vector<Tensor>> out = s->Run({{"image", Image(2)}}, {"logits"});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 1u);
    EXPECT_TRUE((*out)[0].BitwiseEquals(Tensor::FromVector<float>(Shape({2, 2}), {13, 16, 40, 52})))
        << (*out)[0].DebugString();
  }
}

TEST(SessionTest, FetchesByTensorNameAndPlaceholderFeedName) {
  std::unique_ptr<Session> s = MakeSession();
  absl::StatusOr<std::vector<Tensor>> out =
      s->Run({{"image", Image(1)}, {"labels_in", Tensor::FromVector<int64_t>(Shape({1}), {7})}},
             {"matmul", "labels_out", "w", "image", "matmul:0"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].BitwiseEquals(Tensor::FromVector<float>(Shape({1, 2}), {13, 16})));
  EXPECT_EQ((*out)[1].GetAsInt64(0), 7);
  EXPECT_EQ((*out)[2].shape(), Shape({3, 2}));
  EXPECT_EQ((*out)[3].GetAsDouble(2), 2.0);
  EXPECT_TRUE((*out)[4].BitwiseEquals((*out)[0]));
}

TEST(SessionTest, OnlyNeededNodesRunAndOnlyTheirFeedsAreRequired) {
  std::unique_ptr<Session> s = MakeSession();
  // labels is not fed: logits does not need it.
  ASSERT_TRUE(s->Run({{"image", Image(4)}}, {"logits"}).ok());
  EXPECT_EQ(s->last_run_node_count(), 4);  // image, w, matmul, logits_id
  ASSERT_TRUE(s->Run({}, {"w"}).ok());
  EXPECT_EQ(s->last_run_node_count(), 1);
}

TEST(SessionTest, FeedErrors) {
  std::unique_ptr<Session> s = MakeSession();
  auto error = [&](const std::vector<std::pair<std::string, Tensor>>& feeds, const std::vector<std::string>& fetches) {
    absl::StatusOr<std::vector<Tensor>> out = s->Run(feeds, fetches);
    EXPECT_FALSE(out.ok());
    return out.ok() ? std::string() : std::string(out.status().message());
  };
  EXPECT_EQ(error({{"image", Tensor(DType::kF32, Shape({32, 4}))}}, {"logits"}),
            "feed 'image' has shape [32,4] but the graph expects [N,3]");
  EXPECT_EQ(error({{"image", Tensor(DType::kF32, Shape({3}))}}, {"logits"}),
            "feed 'image' has shape [3] but the graph expects [N,3]");
  EXPECT_THAT(error({{"image", Tensor(DType::kF64, Shape({2, 3}))}}, {"logits"}),
              HasSubstr("feed 'image' has dtype f64 but the graph expects f32"));
  EXPECT_THAT(error({{"imag", Image(2)}}, {"logits"}),
              HasSubstr("unknown feed 'imag': the graph's inputs are image, labels"));
  EXPECT_THAT(error({{"matmul", Image(2)}}, {"logits"}), HasSubstr("not a Placeholder"));
  EXPECT_THAT(error({}, {"logits"}), HasSubstr("missing feed 'image' (f32[N,3])"));
  EXPECT_THAT(error({{"image", Image(2)}, {"labels", Tensor(DType::kI64, Shape({3}))}}, {"logits"}),
              HasSubstr("inconsistent batch sizes: feed 'labels' has shape [3] (batch 3) but feed 'image' gave batch "
                        "size 2"));
  EXPECT_THAT(error({{"image", Image(2)}, {"image", Image(2)}}, {"logits"}), HasSubstr("already feeds"));
  EXPECT_THAT(error({{"image", Image(2)}}, {"nothing"}), HasSubstr("unknown fetch 'nothing'"));
  EXPECT_THAT(error({{"image", Image(2)}}, {"matmul:3"}), HasSubstr("unknown fetch 'matmul:3'"));
}

TEST(SessionTest, VariablesGetSetAndNames) {
  std::unique_ptr<Session> s = MakeSession();
  EXPECT_EQ(s->VariableNames(), (std::vector<std::string>{"v", "w"}));
  absl::StatusOr<Tensor> v = s->GetVariable("v");
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->BitwiseEquals(Tensor::FromVector<float>(Shape({2}), {1, 1})));
  EXPECT_FALSE(s->GetVariable("nope").ok());
  EXPECT_FALSE(s->SetVariable("w", Tensor(DType::kF32, Shape({2, 3}))).ok());
  EXPECT_FALSE(s->SetVariable("w", Tensor(DType::kF64, Shape({3, 2}))).ok());
  ASSERT_TRUE(s->SetVariable("w", Tensor::FromVector<float>(Shape({3, 2}), {1, 0, 0, 1, 0, 0})).ok());
  absl::StatusOr<std::vector<Tensor>> out = s->Run({{"image", Image(1)}}, {"logits"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].BitwiseEquals(Tensor::FromVector<float>(Shape({1, 2}), {0, 1})));
  // Tensors from GetVariable and from fetching a Variable are copies: writing them
  // changes nothing.
  absl::StatusOr<std::vector<Tensor>> fetched = s->Run({}, {"w"});
  ASSERT_TRUE(fetched.ok()) << fetched.status();
  (*fetched)[0].data<float>()[1] = 100;
  EXPECT_EQ(s->GetVariable("w")->GetAsDouble(1), 0.0);
  Tensor w = *s->GetVariable("w");
  w.data<float>()[0] = 100;
  EXPECT_EQ(s->GetVariable("w")->GetAsDouble(0), 1.0);
}

TEST(SessionTest, MetadataHasTimingsAndPeak) {
  std::unique_ptr<Session> s = MakeSession({.profile = true});
  RunMetadata md;
  ASSERT_TRUE(s->Run({{"image", Image(8)}}, {"logits"}, &md).ok());
  ASSERT_EQ(md.timings.size(), 4u);
  std::set<std::string> nodes;
  for (const OpTiming& t : md.timings) {
    nodes.insert(t.node);
    EXPECT_GE(t.start_ns, 0);
    EXPECT_GE(t.duration_ns, 0);
    if (t.node == "matmul") {
      EXPECT_EQ(t.op, "MatMul");
    }
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"image", "w", "matmul", "logits_id"}));
  EXPECT_EQ(md.peak_bytes, 2 * 8 * 2 * 4);  // matmul's output and its identity copy
  ASSERT_TRUE(s->Run({{"image", Image(8)}}, {"logits"}).ok());
  EXPECT_EQ(s->last_run_metadata().timings.size(), 4u);
}

TEST(SessionTest, CreateRejectsBadGraphsAndDevices) {
  EXPECT_FALSE(Session::Create(BuildGraph(), {.device = "tpu"}).ok());
  Graph g;
  ASSERT_TRUE(g.AddNode("x", "NoSuchOp", {}).ok());
  EXPECT_FALSE(Session::Create(std::move(g)).ok());
}

TEST(SessionTest, ConcurrentRuns) {
  std::unique_ptr<Session> s = MakeSession({.num_threads = 2});
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        absl::StatusOr<std::vector<Tensor>> out = s->Run({{"image", Image(1 + t)}}, {"logits"});
        if (out.ok() && (*out)[0].shape() == Shape({1 + t, 2}) && (*out)[0].GetAsDouble(0) == 13.0) ++ok;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(ok.load(), 80);
}

// The executor lets these ops overwrite their dying input (x -> Identity -> op): each
// kernel that exists must give what it gives on separate buffers.
TEST(SessionTest, InPlaceUnaryOpsMatchRunOp) {
  int checked = 0;
  for (const char* op : {"Neg", "Abs", "Exp", "Log", "Sqrt", "Rsqrt", "Reciprocal", "Relu", "LeakyRelu", "Gelu",
                         "Sigmoid", "Tanh", "Erf", "Softplus", "Silu"}) {
    if (KernelRegistry::Global().Find(op, kReferenceDevice, DType::kF32) == nullptr) continue;
    SCOPED_TRACE(op);
    Graph g;
    Node* x =
        *g.AddNodeAndInfer("x", "Placeholder", {},
                           {{"dtype", AttrValue::Type(DType::kF32)}, {"shape", AttrValue::FromShape(Shape({64}))}});
    Node* id = *g.AddNodeAndInfer("id", "Identity", {x->output(0)});
    Node* y = *g.AddNodeAndInfer("y", op, {id->output(0)});
    (void)y;
    std::vector<float> values(64);
    for (int i = 0; i < 64; ++i) values[i] = 0.1f + 0.05f * static_cast<float>(i);  // in every op's domain
    const Tensor input = Tensor::FromVector<float>(Shape({64}), values);
    absl::StatusOr<std::unique_ptr<Session>> s =
        Session::Create(std::move(g), {.num_threads = 1, .device = "reference"});
    ASSERT_TRUE(s.ok()) << s.status();
    absl::StatusOr<std::vector<Tensor>> out = (*s)->Run({{"x", input}}, {"y"});
    ASSERT_TRUE(out.ok()) << out.status();
    absl::StatusOr<std::vector<Tensor>> expected = RunOp(op, {input});
    ASSERT_TRUE(expected.ok()) << expected.status();
    EXPECT_TRUE((*out)[0].BitwiseEquals((*expected)[0]))
        << (*out)[0].DebugString() << " vs " << (*expected)[0].DebugString();
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no unary reference kernel yet";
}

}  // namespace
}  // namespace tsr
