// Training graphs end to end on the runtime: optimizer updates replace Variables
// after the step (readers in the same run see the old values), every optimizer
// matches a double-precision reimplementation of its rule over several steps,
// clipping by global norm, the step counter, and convergence on a small problem.
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "graph/builder/ops.h"
#include "graph/builder/optimizers.h"
#include "gtest/gtest.h"
#include "runtime/session.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

// loss = 0.5 * sum((x @ w + b - y)^2) / N in f64, w [3, 2], b [2]; data [N, 3] -> [N, 2].
struct Problem {
  Graph graph;
  TrainingOps train;
};

Problem BuildRegression(const OptimizerOptions& options) {
  GraphBuilder b;
  const Output x = b.Input("x", DType::kF64, Shape({kBatchDim, 3}));
  const Output y = b.Input("y", DType::kF64, Shape({kBatchDim, 2}));
  const Output w =
      ops::Variable(b, "w", DType::kF64, Shape({3, 2}),
                    {.value = Tensor::FromVector<double>(Shape({3, 2}), {0.1, -0.2, 0.3, 0.0, -0.1, 0.2})});
  const Output bias = ops::Variable(b, "b", DType::kF64, Shape({2}));
  const Output err = ops::Sub(b, ops::Add(b, ops::MatMul(b, x, w), bias), y);
  const Output loss =
      ops::Mul(b, ops::ReduceMean(b, ops::Mul(b, err, err), std::vector<int64_t>{0}, false), ops::Scalar(b, 0.5));
  const Output total = ops::ReduceSum(b, loss, std::vector<int64_t>{}, false, "loss");
  b.MarkOutput("loss", total);
  Problem p;
  p.train = Minimize(b, total, TrainableVariables(b), options);
  b.MarkOutput("global_norm", p.train.global_norm);
  absl::StatusOr<Graph> g = b.Finish();
  EXPECT_TRUE(g.ok()) << g.status();
  if (g.ok()) p.graph = *std::move(g);
  return p;
}

struct Data {
  Tensor x, y;
};

Data MakeData(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> dist;
  Data d{Tensor(DType::kF64, Shape({n, 3})), Tensor(DType::kF64, Shape({n, 2}))};
  const double true_w[3][2] = {{1.0, -2.0}, {0.5, 0.25}, {-1.5, 1.0}};
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) d.x.flat<double>()[i * 3 + k] = dist(rng);
    for (int j = 0; j < 2; ++j) {
      double v = (j == 0 ? 0.3 : -0.7);
      for (int k = 0; k < 3; ++k) v += d.x.flat<double>()[i * 3 + k] * true_w[k][j];
      d.y.flat<double>()[i * 2 + j] = v;
    }
  }
  return d;
}

// The same model and rules in plain C++: parameters are w (6) then b (2), flat.
struct Oracle {
  OptimizerOptions o;
  std::vector<double> p, s1, s2;
  int64_t step = 0;

  Oracle(const OptimizerOptions& options) : o(options) {
    p = {0.1, -0.2, 0.3, 0.0, -0.1, 0.2, 0, 0};
    s1.assign(8, 0);
    s2.assign(8, 0);
  }

  std::vector<double> Gradient(const Data& d) const {
    const int64_t n = d.x.shape().dim(0);
    std::vector<double> g(8, 0);
    for (int64_t i = 0; i < n; ++i) {
      for (int j = 0; j < 2; ++j) {
        double pred = p[6 + j];
        for (int k = 0; k < 3; ++k) pred += d.x.flat<double>()[i * 3 + k] * p[k * 2 + j];
        const double e = (pred - d.y.flat<double>()[i * 2 + j]) / static_cast<double>(n);
        for (int k = 0; k < 3; ++k) g[k * 2 + j] += e * d.x.flat<double>()[i * 3 + k];
        g[6 + j] += e;
      }
    }
    return g;
  }

  void Step(const Data& d, double lr) {
    std::vector<double> g = Gradient(d);
    double norm = 0;
    for (double v : g) norm += v * v;
    norm = std::sqrt(norm);
    if (o.clip_global_norm && norm > *o.clip_global_norm) {
      for (double& v : g) v *= *o.clip_global_norm / norm;
    }
    const double t = static_cast<double>(step + 1);
    for (int i = 0; i < 8; ++i) {
      double gi = g[i];
      switch (o.kind) {
        case OptimizerKind::kSgd:
          p[i] -= lr * (gi + o.weight_decay * p[i]);
          break;
        case OptimizerKind::kMomentum:
        case OptimizerKind::kNesterov: {
          gi += o.weight_decay * p[i];
          s1[i] = o.momentum * s1[i] + gi;
          p[i] -= lr * (o.kind == OptimizerKind::kNesterov ? gi + o.momentum * s1[i] : s1[i]);
          break;
        }
        case OptimizerKind::kAdam:
        case OptimizerKind::kAdamW: {
          if (o.kind == OptimizerKind::kAdamW) {
            p[i] -= lr * o.weight_decay * p[i];
          } else {
            gi += o.weight_decay * p[i];
          }
          s1[i] = o.beta1 * s1[i] + (1 - o.beta1) * gi;
          s2[i] = o.beta2 * s2[i] + (1 - o.beta2) * gi * gi;
          const double mhat = s1[i] / (1 - std::pow(o.beta1, t)), vhat = s2[i] / (1 - std::pow(o.beta2, t));
          p[i] -= lr * mhat / (std::sqrt(vhat) + o.epsilon);
          break;
        }
        case OptimizerKind::kRmsProp: {
          gi += o.weight_decay * p[i];
          s1[i] = o.rho * s1[i] + (1 - o.rho) * gi * gi;
          p[i] -= lr * gi / (std::sqrt(s1[i]) + o.epsilon);
          break;
        }
      }
    }
    ++step;
  }
};

std::unique_ptr<Session> Open(Graph graph, int threads = 1) {
  absl::StatusOr<std::unique_ptr<Session>> s = Session::Create(std::move(graph), {.num_threads = threads});
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

TEST(TrainingTest, EveryOptimizerMatchesItsRuleOverSeveralSteps) {
  std::vector<OptimizerOptions> configs;
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kMomentum, OptimizerKind::kNesterov,
                             OptimizerKind::kAdam, OptimizerKind::kAdamW, OptimizerKind::kRmsProp}) {
    configs.push_back({.kind = kind});
    configs.push_back({.kind = kind, .weight_decay = 0.01, .clip_global_norm = 0.5});
  }
  const Data data = MakeData(16, 3);
  for (const OptimizerOptions& options : configs) {
    SCOPED_TRACE(absl::StrCat(OptimizerName(options.kind), " wd=", options.weight_decay,
                              " clip=", options.clip_global_norm.value_or(0)));
    Problem problem = BuildRegression(options);
    std::unique_ptr<Session> s = Open(std::move(problem.graph));
    ASSERT_NE(s, nullptr);
    Oracle oracle(options);
    for (int step = 0; step < 4; ++step) {
      const double lr = 0.05 * (step + 1);  // a schedule: fed per step
      absl::StatusOr<std::vector<Tensor>> out =
          s->Run({{"x", data.x}, {"y", data.y}, {"learning_rate", Tensor::Scalar<double>(lr)}}, {"loss"},
                 problem.train.update_nodes);
      ASSERT_TRUE(out.ok()) << out.status();
      oracle.Step(data, lr);
    }
    const Tensor w = *s->GetVariable("w");
    const Tensor b = *s->GetVariable("b");
    for (int i = 0; i < 6; ++i) EXPECT_NEAR(w.GetAsDouble(i), oracle.p[i], 1e-12) << "w[" << i << "]";
    for (int i = 0; i < 2; ++i) EXPECT_NEAR(b.GetAsDouble(i), oracle.p[6 + i], 1e-12) << "b[" << i << "]";
    EXPECT_EQ(s->GetVariable("global_step")->GetAsInt64(0), 4);
  }
}

TEST(TrainingTest, ReadersInTheStepSeeTheOldValuesAndFetchesAreCopies) {
  Problem problem = BuildRegression({.kind = OptimizerKind::kSgd});
  std::unique_ptr<Session> s = Open(std::move(problem.graph), 2);
  const Data data = MakeData(8, 4);
  const Tensor before = *s->GetVariable("w");
  // Fetch w and the update's output in the same run that updates w.
  absl::StatusOr<std::vector<Tensor>> out =
      s->Run({{"x", data.x}, {"y", data.y}, {"learning_rate", Tensor::Scalar<double>(0.1)}},
             {"w", problem.train.update_nodes[0]}, problem.train.update_nodes);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE((*out)[0].BitwiseEquals(before)) << "a read in the updating run sees the value from before";
  const Tensor after = *s->GetVariable("w");
  EXPECT_TRUE((*out)[1].BitwiseEquals(after));
  EXPECT_FALSE(after.BitwiseEquals(before));
  (*out)[1].flat<double>()[0] = 1e9;  // the fetched tensor is the caller's own copy
  EXPECT_TRUE(s->GetVariable("w")->BitwiseEquals(after));
  // Without the targets nothing changes.
  ASSERT_TRUE(s->Run({{"x", data.x}, {"y", data.y}}, {"loss"}).ok());
  EXPECT_TRUE(s->GetVariable("w")->BitwiseEquals(after));
  EXPECT_THAT(s->Run({}, {}, {"no_such_node"}).status().message(), HasSubstr("unknown target node 'no_such_node'"));
  EXPECT_THAT(s->Run({{"x", data.x}}, {"loss"}, problem.train.update_nodes).status().message(),
              HasSubstr("missing feed"));
}

TEST(TrainingTest, AdamConvergesAndClippingBoundsTheStep) {
  Problem problem = BuildRegression({.kind = OptimizerKind::kAdam, .clip_global_norm = 1.0});
  std::unique_ptr<Session> s = Open(std::move(problem.graph), 2);
  const Data data = MakeData(64, 5);
  double first = 0, last = 0;
  for (int step = 0; step < 400; ++step) {
    absl::StatusOr<std::vector<Tensor>> out =
        s->Run({{"x", data.x}, {"y", data.y}, {"learning_rate", Tensor::Scalar<double>(0.05)}}, {"loss", "global_norm"},
               problem.train.update_nodes);
    ASSERT_TRUE(out.ok()) << out.status();
    if (step == 0) first = (*out)[0].GetAsDouble(0);
    last = (*out)[0].GetAsDouble(0);
  }
  EXPECT_GT(first, 1.0);
  EXPECT_LT(last, 1e-4) << "from " << first;
  const Tensor w = *s->GetVariable("w");
  EXPECT_NEAR(w.GetAsDouble(0), 1.0, 1e-2);
  EXPECT_NEAR(w.GetAsDouble(1), -2.0, 1e-2);
}

TEST(TrainingTest, MinimizeErrors) {
  {
    GraphBuilder b;
    const Output x = b.Input("x", DType::kF32, Shape({3}));
    Minimize(b, ops::ReduceSum(b, x, std::vector<int64_t>{}, false), {x});
    EXPECT_THAT(b.status().message(), HasSubstr("is not a Variable"));
  }
  {
    GraphBuilder b;
    const Output w = ops::Variable(b, "w", DType::kF32, Shape({3}));
    Minimize(b, ops::ReduceSum(b, w, std::vector<int64_t>{}, false), {w}, {.clip_global_norm = 0.0});
    EXPECT_THAT(b.status().message(), HasSubstr("clip_global_norm is 0"));
  }
  EXPECT_THAT(ParseOptimizerKind("lion").status().message(), HasSubstr("unknown optimizer 'lion'"));
  EXPECT_EQ(*ParseOptimizerKind("AdamW"), OptimizerKind::kAdamW);
}

}  // namespace
}  // namespace tsr
