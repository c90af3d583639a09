// Numerical gradient checking for the autodiff tests: builds `op` on the given inputs
// (the differentiated ones as f64 Placeholders, the others as Constants), takes
// loss = sum(output_k * R) for a fixed random R, asks Gradients() for d loss / d input
// and runs it on the reference device, then compares each element with a central
// difference of the same loss computed with RunOp.
#ifndef TESSERA_TESTS_GRAPH_AUTODIFF_GRADIENT_CHECK_UTIL_H_
#define TESSERA_TESTS_GRAPH_AUTODIFF_GRADIENT_CHECK_UTIL_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/autodiff/gradients.h"
#include "graph/builder/ops.h"
#include "gtest/gtest.h"
#include "kernels/run_op.h"
#include "runtime/session.h"

namespace tsr::testing {

// An f64 tensor of `shape` with elements uniform in [lo, hi), kept at least `gap`
// away from 0 (so kinks at 0 — Relu, Abs — are not straddled by the differences).
inline Tensor RandomF64(std::mt19937& rng, const Shape& shape, double lo = -1, double hi = 1, double gap = 0.05) {
  Tensor t(DType::kF64, shape);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (double& x : t.flat<double>()) {
    do {
      x = dist(rng);
    } while (std::fabs(x) < gap);
  }
  return t;
}

struct GradCheck {
  std::string op;
  std::vector<std::optional<Tensor>> inputs;  // nullopt: absent optional input
  AttrMap attrs;
  std::vector<int> wrt;  // indices of f64 inputs to differentiate
  int output = 0;        // the output the loss reads
  double tolerance = 1e-6;
};

// sum(output * weights) of one forward run.
inline double Loss(const GradCheck& c, const std::vector<std::optional<Tensor>>& inputs, const Tensor& weights) {
  absl::StatusOr<std::vector<Tensor>> out = RunOp(c.op, inputs, c.attrs);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return NAN;
  const Tensor& y = (*out)[c.output];
  double total = 0;
  for (int64_t i = 0; i < y.num_elements(); ++i) total += y.GetAsDouble(i) * weights.GetAsDouble(i);
  return total;
}

inline void ExpectGradientsMatchNumeric(const GradCheck& c, uint32_t seed) {
  SCOPED_TRACE(absl::StrCat(c.op, " seed=", seed));
  std::mt19937 rng(seed);
  // The forward output's shape, for the loss weights.
  absl::StatusOr<std::vector<Tensor>> forward = RunOp(c.op, c.inputs, c.attrs);
  ASSERT_TRUE(forward.ok()) << forward.status();
  const Tensor weights = RandomF64(rng, (*forward)[c.output].shape(), -1, 1, 0);

  GraphBuilder b;
  std::vector<Output> args, wrt;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i].has_value()) {
      args.push_back(Output());
      continue;
    }
    const bool differentiated = std::find(c.wrt.begin(), c.wrt.end(), static_cast<int>(i)) != c.wrt.end();
    if (differentiated) {
      args.push_back(b.Input(absl::StrCat("in", i), c.inputs[i]->dtype(), c.inputs[i]->shape()));
      wrt.push_back(args.back());
    } else {
      args.push_back(ops::Const(b, *c.inputs[i]));
    }
  }
  std::vector<Output> outs = b.Op(c.op, args, c.attrs);
  ASSERT_TRUE(b.ok()) << b.status();
  const Output loss =
      ops::ReduceSum(b, ops::Mul(b, outs[c.output], ops::Const(b, weights)), std::vector<int64_t>{}, false);
  std::vector<Output> grads = Gradients(b, loss, wrt);
  ASSERT_TRUE(b.ok()) << b.status();
  for (size_t j = 0; j < grads.size(); ++j) b.MarkOutput(absl::StrCat("grad", j), grads[j]);
  absl::StatusOr<Graph> graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::Create(*std::move(graph), {.num_threads = 1, .device = "reference"});
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<std::pair<std::string, Tensor>> feeds;
  std::vector<std::string> fetches;
  for (size_t j = 0; j < c.wrt.size(); ++j) {
    feeds.push_back({absl::StrCat("in", c.wrt[j]), *c.inputs[c.wrt[j]]});
    fetches.push_back(absl::StrCat("grad", j));
  }
  absl::StatusOr<std::vector<Tensor>> got = (*session)->Run(feeds, fetches);
  ASSERT_TRUE(got.ok()) << got.status();

  for (size_t j = 0; j < c.wrt.size(); ++j) {
    const int index = c.wrt[j];
    const Tensor& analytic = (*got)[j];
    ASSERT_EQ(analytic.shape(), c.inputs[index]->shape()) << "input " << index;
    for (int64_t e = 0; e < analytic.num_elements(); ++e) {
      std::vector<std::optional<Tensor>> perturbed = c.inputs;
      Tensor x = c.inputs[index]->Clone();
      perturbed[index] = x;
      const double x0 = x.flat<double>()[e];
      const double h = 1e-6 * std::max(1.0, std::fabs(x0));
      x.flat<double>()[e] = x0 + h;
      const double up = Loss(c, perturbed, weights);
      x.flat<double>()[e] = x0 - h;
      const double down = Loss(c, perturbed, weights);
      const double numeric = (up - down) / (2 * h);
      const double value = analytic.GetAsDouble(e);
      ASSERT_NEAR(value, numeric, c.tolerance * std::max(1.0, std::fabs(numeric)))
          << "d loss / d input " << index << "[" << e << "]";
    }
  }
}

}  // namespace tsr::testing

#endif  // TESSERA_TESTS_GRAPH_AUTODIFF_GRADIENT_CHECK_UTIL_H_
