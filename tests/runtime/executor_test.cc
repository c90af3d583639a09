// Tests of Executor with a private kernel registry (small f32 kernels written here), so
// scheduling, liveness, in-place reuse and pruning are tested independently of the
// reference kernels: concurrency of independent ops, freeing, only-needed nodes,
// errors naming the node, batch binding.
#include "runtime/executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "runtime/device.h"
#include "runtime/variable_store.h"

namespace tsr {
namespace {

absl::Status Unary(KernelContext& ctx, float (*f)(float)) {
  const float* x = ctx.input(0).data<float>();
  float* y = ctx.output(0).data<float>();
  for (int64_t i = 0; i < ctx.input(0).num_elements(); ++i) y[i] = f(x[i]);
  return absl::OkStatus();
}

// Two kernels that each wait (up to 10 s) until both have started: they only finish
// quickly when the executor runs them at the same time.
std::atomic<int> rendezvous{0};
std::atomic<bool> met{false};
absl::Status Rendezvous(KernelContext& ctx) {
  rendezvous.fetch_add(1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (rendezvous.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  if (rendezvous.load() >= 2) met.store(true);
  return Unary(ctx, [](float v) { return v; });
}

std::atomic<int> kernel_calls{0};
// What the last test MaxPool kernel was told of its Indices output.
std::atomic<int> indices_needed{-1};

class ExecutorTest : public testing::Test {
 protected:
  ExecutorTest() {
    auto reg = [&](const char* op, KernelFn fn) {
      EXPECT_TRUE(registry_.Register(op, kReferenceDevice, DType::kF32, fn).ok());
    };
    reg("Identity", [](KernelContext& ctx) {
      ++kernel_calls;
      return Unary(ctx, [](float v) { return v; });
    });
    reg("Relu", [](KernelContext& ctx) {
      ++kernel_calls;
      return Unary(ctx, [](float v) { return v > 0 ? v : 0.0f; });
    });
    reg("Neg", [](KernelContext& ctx) { return ctx.Error("negation refused on purpose"); });
    reg("Exp", Rendezvous);
    reg("Log", Rendezvous);
    reg("Add", [](KernelContext& ctx) {  // same shapes only
      ++kernel_calls;
      const Tensor& a = ctx.input(0);
      const Tensor& b = ctx.input(1);
      if (a.shape() != b.shape()) return ctx.Error("test Add needs equal shapes");
      for (int64_t i = 0; i < a.num_elements(); ++i) {
        ctx.output(0).data<float>()[i] = a.data<float>()[i] + b.data<float>()[i];
      }
      return absl::OkStatus();
    });
    reg("MaxPool", [](KernelContext& ctx) {  // records whether Indices is needed; Y = X's first elements
      indices_needed = ctx.output_needed(1) ? 1 : 0;
      std::copy_n(ctx.input(0).data<float>(), ctx.output(0).num_elements(), ctx.output(0).data<float>());
      if (ctx.output_needed(1)) std::fill_n(ctx.output(1).data<int64_t>(), ctx.output(1).num_elements(), 7);
      return absl::OkStatus();
    });
    device_ = *CpuDevice::Create({.name = "reference", .num_threads = 3, .registry = &registry_});
  }

  TensorRef Add(const std::string& name, const std::string& op, std::vector<TensorRef> inputs, AttrMap attrs = {}) {
    absl::StatusOr<Node*> n = graph_.AddNodeAndInfer(name, op, std::move(inputs), std::move(attrs));
    EXPECT_TRUE(n.ok()) << n.status();
    return n.ok() ? (*n)->output(0) : TensorRef();
  }
  TensorRef Placeholder(const std::string& name, Shape shape) {
    return Add(name, "Placeholder", {},
               {{"dtype", AttrValue::Type(DType::kF32)}, {"shape", AttrValue::FromShape(std::move(shape))}});
  }

  Executor MakeExecutor(ExecutorOptions options = {}) {
    EXPECT_TRUE(graph_.Verify().ok()) << graph_.Verify();
    stores_.push_back(std::make_unique<VariableStore>(*VariableStore::Initialize(graph_, 0)));
    return Executor(graph_, *device_, *stores_.back(), options);
  }

  KernelRegistry registry_;
  std::unique_ptr<CpuDevice> device_;
  Graph graph_;
  std::vector<std::unique_ptr<VariableStore>> stores_;
};

// out = relu(x + w) + x, computed by hand; the batch is bound from the feed.
TEST_F(ExecutorTest, ComputesAHandBuiltGraph) {
  TensorRef x = Placeholder("x", Shape({kBatchDim, 2}));
  TensorRef c = Add("c", "Constant", {},
                    {{"value", AttrValue::FromTensor(Tensor::FromVector<float>(Shape({2, 2}), {1, -5, 0.5f, 2}))}});
  TensorRef s = Add("sum", "Add", {x, c});
  TensorRef r = Add("relu", "Relu", {s});
  TensorRef out = Add("out", "Add", {r, x});
  Executor exec = MakeExecutor();
  Executor::RunRequest req;
  req.feeds[x.node] = Tensor::FromVector<float>(Shape({2, 2}), {1, 2, -3, 4});
  req.fetches = {out, s};
  req.batch = 2;
  absl::StatusOr<std::vector<Tensor>> res = exec.Run(req);
  ASSERT_TRUE(res.ok()) << res.status();
  // sum = {2, -3, -2.5, 6}; relu = {2, 0, 0, 6}; out = {3, 2, -3, 10}.
  EXPECT_TRUE((*res)[0].BitwiseEquals(Tensor::FromVector<float>(Shape({2, 2}), {3, 2, -3, 10})))
      << (*res)[0].DebugString();
  EXPECT_TRUE((*res)[1].BitwiseEquals(Tensor::FromVector<float>(Shape({2, 2}), {2, -3, -2.5f, 6})));
  // A batch that does not broadcast against the [2,2] constant fails inference, by node.
  req.feeds[x.node] = Tensor::FromVector<float>(Shape({3, 2}), {1, 2, 3, 4, 5, 6});
  req.batch = 3;
  absl::StatusOr<std::vector<Tensor>> bad = exec.Run(req);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'sum'"), std::string::npos) << bad.status();
}

// An output nothing reads and nothing fetches is not needed (the kernel may skip it);
// read by a node or fetched, it is.
TEST_F(ExecutorTest, OutputsNobodyReadsAreNotNeeded) {
  TensorRef x = Placeholder("x", Shape({1, 1, 4, 4}));
  TensorRef pool =
      Add("pool", "MaxPool", {x}, {{"kernel_shape", AttrValue::Ints({2, 2})}, {"strides", AttrValue::Ints({2, 2})}});
  TensorRef relu = Add("relu", "Relu", {pool});
  Executor exec = MakeExecutor();
  Executor::RunRequest req;
  req.feeds[x.node] = Tensor::FromVector<float>(Shape({1, 1, 4, 4}), std::vector<float>(16, 1.0f));
  req.fetches = {relu};
  ASSERT_TRUE(exec.Run(req).ok());
  EXPECT_EQ(indices_needed.load(), 0);
  req.fetches = {relu, TensorRef{pool.node, 1}};
  absl::StatusOr<std::vector<Tensor>> res = exec.Run(req);
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_EQ(indices_needed.load(), 1);
  EXPECT_EQ((*res)[1].flat<int64_t>()[0], 7);
}

TEST_F(ExecutorTest, IndependentOpsRunConcurrently) {
  TensorRef x = Placeholder("x", Shape({4}));
  TensorRef a = Add("a", "Exp", {x});
  TensorRef b = Add("b", "Log", {x});
  Executor exec = MakeExecutor();
  rendezvous.store(0);
  met.store(false);
  Executor::RunRequest req;
  req.feeds[x.node] = Tensor::FromVector<float>(Shape({4}), {1, 2, 3, 4});
  req.fetches = {a, b};
  RunMetadata md;
  req.metadata = &md;
  ASSERT_TRUE(exec.Run(req).ok());
  EXPECT_TRUE(met.load()) << "Exp and Log did not run at the same time";
  ASSERT_EQ(md.timings.size(), 3u);
  std::set<int> threads;
  for (const OpTiming& t : md.timings) {
    if (t.op != "Placeholder") threads.insert(t.thread);
  }
  EXPECT_EQ(threads.size(), 2u);
}

TEST_F(ExecutorTest, OnlyNeededNodesRun) {
  TensorRef x = Placeholder("x", Shape({4}));
  TensorRef unused_input = Placeholder("unused_input", Shape({4}));
  Add("broken", "Neg", {x});
  Add("also_unneeded", "Relu", {unused_input});
  TensorRef id = Add("id", "Identity", {x});
  Executor exec = MakeExecutor();
  Executor::RunRequest req;
  req.feeds[x.node] = Tensor::FromVector<float>(Shape({4}), {1, 2, 3, 4});
  req.fetches = {id};
  kernel_calls.store(0);
  absl::StatusOr<std::vector<Tensor>> res = exec.Run(req);
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_EQ(kernel_calls.load(), 1);
  EXPECT_EQ(exec.last_run_node_count(), 2);  // x and id
  // Fetching the failing node reports it by name.
  req.fetches = {graph_.FindNode("broken")->output(0)};
  absl::StatusOr<std::vector<Tensor>> err = exec.Run(req);
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.status().message(), "node 'broken' (Neg): negation refused on purpose");
  // An unfed placeholder is an error only when needed.
  req.fetches = {graph_.FindNode("also_unneeded")->output(0)};
  EXPECT_FALSE(exec.Run(req).ok());
}

TEST_F(ExecutorTest, MissingKernelNamesTheNode) {
  TensorRef x = Placeholder("x", Shape({4}));
  TensorRef e = Add("sigmoid_node", "Sigmoid", {x});
  Executor exec = MakeExecutor();
  Executor::RunRequest req;
  req.feeds[x.node] = Tensor::FromVector<float>(Shape({4}), {1, 2, 3, 4});
  req.fetches = {e};
  absl::StatusOr<std::vector<Tensor>> res = exec.Run(req);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(res.status().message().find("node 'sigmoid_node' (Sigmoid)"), std::string::npos) << res.status();
}

// A chain id -> relu -> relu -> relu: with liveness and in-place reuse one buffer
// suffices; without in-place two are alive at once. Intermediates are freed after the run.
TEST_F(ExecutorTest, LivenessAndInPlaceBoundPeakMemory) {
  TensorRef x = Placeholder("x", Shape({1000}));
  TensorRef t = Add("id", "Identity", {x});
  for (int i = 0; i < 3; ++i) t = Add("relu" + std::to_string(i), "Relu", {t});
  std::vector<float> values(1000);
  for (int i = 0; i < 1000; ++i) values[i] = static_cast<float>(i % 7) - 3.0f;
  std::vector<float> expected(1000);
  for (int i = 0; i < 1000; ++i) expected[i] = std::max(values[i], 0.0f);
  for (bool inplace : {true, false}) {
    SCOPED_TRACE(inplace ? "in place" : "not in place");
    Executor exec = MakeExecutor({.inplace = inplace});
    Executor::RunRequest req;
    req.feeds[x.node] = Tensor::FromVector<float>(Shape({1000}), values);
    req.fetches = {t};
    RunMetadata md;
    req.metadata = &md;
    absl::StatusOr<std::vector<Tensor>> res = exec.Run(req);
    ASSERT_TRUE(res.ok()) << res.status();
    EXPECT_TRUE((*res)[0].BitwiseEquals(Tensor::FromVector<float>(Shape({1000}), expected)));
    EXPECT_EQ(md.peak_bytes, inplace ? 4000 : 8000);
    EXPECT_EQ(device_->allocator().stats().bytes_in_use, 4000) << "only the fetched tensor stays";
    EXPECT_EQ(md.timings.size(), 5u);
  }
}

// A tensor read by two consumers is not overwritten by the first.
TEST_F(ExecutorTest, NoInPlaceWhileOtherReadersRemain) {
  TensorRef x = Placeholder("x", Shape({3}));
  TensorRef id = Add("id", "Identity", {x});
  TensorRef r = Add("relu", "Relu", {id});
  TensorRef out = Add("out", "Add", {r, id});
  Executor exec = MakeExecutor();
  Executor::RunRequest req;
  req.feeds[x.node] = Tensor::FromVector<float>(Shape({3}), {-1, 2, -3});
  req.fetches = {out};
  absl::StatusOr<std::vector<Tensor>> res = exec.Run(req);
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_TRUE((*res)[0].BitwiseEquals(Tensor::FromVector<float>(Shape({3}), {-1, 4, -3})));
  // Nor is a fed tensor.
  TensorRef r2 = Add("relu_of_feed", "Relu", {x});
  Executor exec2 = MakeExecutor();
  req.fetches = {r2, x};
  res = exec2.Run(req);
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_TRUE((*res)[1].BitwiseEquals(Tensor::FromVector<float>(Shape({3}), {-1, 2, -3})));
}

TEST_F(ExecutorTest, ManyIndependentBranchesAllComputed) {
  SCOPED_TRACE("64 branches, 3 threads");
  TensorRef x = Placeholder("x", Shape({16}));
  std::vector<TensorRef> outs;
  for (int i = 0; i < 64; ++i) {
    TensorRef t = Add("id" + std::to_string(i), "Identity", {x});
    outs.push_back(Add("relu" + std::to_string(i), "Relu", {t}));
  }
  TensorRef sum = outs[0];
  for (int i = 1; i < 64; ++i) sum = Add("sum" + std::to_string(i), "Add", {sum, outs[i]});
  Executor exec = MakeExecutor();
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i) - 8.0f;
  for (int rep = 0; rep < 20; ++rep) {
    Executor::RunRequest req;
    req.feeds[x.node] = Tensor::FromVector<float>(Shape({16}), v);
    req.fetches = {sum};
    absl::StatusOr<std::vector<Tensor>> res = exec.Run(req);
    ASSERT_TRUE(res.ok()) << res.status();
    for (int i = 0; i < 16; ++i) ASSERT_EQ((*res)[0].data<float>()[i], 64.0f * std::max(v[i], 0.0f)) << i;
  }
  EXPECT_EQ(device_->allocator().stats().bytes_in_use, 0) << "every result was released";
}

}  // namespace
}  // namespace tsr
