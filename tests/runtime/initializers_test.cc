// Tests of the Variable initializers: fans, distributions' statistics on large
// tensors, determinism and independence from creation order.
#include "runtime/initializers.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "runtime/variable_store.h"

namespace tsr {
namespace {

struct Moments {
  double mean = 0, stddev = 0, min = 1e300, max = -1e300;
};

Moments ComputeMoments(const Tensor& t) {
  Moments m;
  const int64_t n = t.num_elements();
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = t.GetAsDouble(i);
    sum += v;
    sq += v * v;
    m.min = std::min(m.min, v);
    m.max = std::max(m.max, v);
  }
  m.mean = sum / n;
  m.stddev = std::sqrt(std::max(0.0, sq / n - m.mean * m.mean));
  return m;
}

// A graph with one Variable `name` of `shape` and the given initializer attributes.
Graph VariableGraph(const std::string& name, Shape shape, AttrMap attrs, DType dtype = DType::kF32) {
  Graph g;
  attrs["dtype"] = AttrValue::Type(dtype);
  attrs["shape"] = AttrValue::FromShape(std::move(shape));
  absl::StatusOr<Node*> n = g.AddNodeAndInfer(name, "Variable", {}, std::move(attrs));
  EXPECT_TRUE(n.ok()) << n.status();
  return g;
}

Tensor Init(const std::string& initializer, Shape shape, AttrMap attrs = {}, uint64_t seed = 7,
            DType dtype = DType::kF32) {
  attrs["initializer"] = AttrValue::String(initializer);
  Graph g = VariableGraph("w", std::move(shape), std::move(attrs), dtype);
  absl::StatusOr<Tensor> t = InitializeVariable(*g.FindNode("w"), seed);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

TEST(InitializersTest, FansAsKerasComputesThem) {
  EXPECT_EQ(ComputeFans(Shape()), std::make_pair(int64_t{1}, int64_t{1}));
  EXPECT_EQ(ComputeFans(Shape({7})), std::make_pair(int64_t{7}, int64_t{7}));
  EXPECT_EQ(ComputeFans(Shape({784, 256})), std::make_pair(int64_t{784}, int64_t{256}));
  // Conv kernel [out, in, kh, kw]: receptive field 5*5.
  EXPECT_EQ(ComputeFans(Shape({16, 6, 5, 5})), std::make_pair(int64_t{150}, int64_t{400}));
}

TEST(InitializersTest, StableHashIsFnv1a) {
  EXPECT_EQ(StableHash64(""), 0xCBF29CE484222325ull);
  EXPECT_EQ(StableHash64("a"), 0xAF63DC4C8601EC8Cull);
}

TEST(InitializersTest, ConstantInitializers) {
  Tensor z = Init("zeros", Shape({3, 4}));
  Tensor o = Init("ones", Shape({3, 4}));
  Tensor c = Init("constant", Shape({5}), {{"init_value", AttrValue::Float(2.5)}});
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(z.GetAsDouble(i), 0.0);
    EXPECT_EQ(o.GetAsDouble(i), 1.0);
  }
  for (int i = 0; i < 5; ++i) EXPECT_EQ(c.GetAsDouble(i), 2.5);
  Tensor oi = Init("ones", Shape({2}), {}, 7, DType::kI64);
  EXPECT_EQ(oi.GetAsInt64(1), 1);
}

TEST(InitializersTest, UniformStatistics) {
  SCOPED_TRACE("seed 7");
  Tensor t =
      Init("uniform", Shape({500, 400}), {{"init_min", AttrValue::Float(-1.0)}, {"init_max", AttrValue::Float(3.0)}});
  Moments m = ComputeMoments(t);
  EXPECT_NEAR(m.mean, 1.0, 0.01);
  EXPECT_NEAR(m.stddev, 4.0 / std::sqrt(12.0), 0.01);
  EXPECT_GE(m.min, -1.0);
  EXPECT_LT(m.max, 3.0);
  EXPECT_LT(m.min, -0.99);
  EXPECT_GT(m.max, 2.99);
}

TEST(InitializersTest, NormalStatistics) {
  SCOPED_TRACE("seed 7");
  Tensor t =
      Init("normal", Shape({200000}), {{"init_mean", AttrValue::Float(0.5)}, {"init_stddev", AttrValue::Float(2.0)}});
  Moments m = ComputeMoments(t);
  EXPECT_NEAR(m.mean, 0.5, 0.02);
  EXPECT_NEAR(m.stddev, 2.0, 0.02);
  EXPECT_GT(m.max - 0.5, 3.5 * 2.0) << "an untruncated normal reaches beyond 3.5 sigma at this size";
}

TEST(InitializersTest, TruncatedNormalStaysWithinTwoStddev) {
  SCOPED_TRACE("seed 7");
  Tensor t = Init("truncated_normal", Shape({200000}),
                  {{"init_mean", AttrValue::Float(1.0)}, {"init_stddev", AttrValue::Float(0.5)}});
  Moments m = ComputeMoments(t);
  EXPECT_GE(m.min, 1.0 - 1.0 - 1e-6);
  EXPECT_LE(m.max, 1.0 + 1.0 + 1e-6);
  EXPECT_NEAR(m.mean, 1.0, 0.01);
  EXPECT_NEAR(m.stddev, 0.5 * 0.87962566103423978, 0.01);
  EXPECT_GT(m.max, 1.99);  // the tails are populated up to the cut
}

TEST(InitializersTest, GlorotAndHeStatistics) {
  SCOPED_TRACE("seed 7");
  const Shape dense({784, 256});
  const double fan_avg = (784 + 256) / 2.0;
  {
    Moments m = ComputeMoments(Init("glorot_uniform", dense));
    const double limit = std::sqrt(6.0 / (784 + 256));
    EXPECT_NEAR(m.mean, 0.0, 0.002);
    EXPECT_NEAR(m.stddev, limit / std::sqrt(3.0), 0.002);
    EXPECT_GE(m.min, -limit);
    EXPECT_LE(m.max, limit);
  }
  {
    Moments m = ComputeMoments(Init("glorot_normal", dense));
    EXPECT_NEAR(m.mean, 0.0, 0.002);
    EXPECT_NEAR(m.stddev, std::sqrt(1.0 / fan_avg), 0.002);
    EXPECT_LE(m.max, 2 * std::sqrt(1.0 / fan_avg) / 0.87962566103423978 + 1e-6);
  }
  const Shape conv({64, 32, 3, 3});  // fan_in 288
  {
    Moments m = ComputeMoments(Init("he_uniform", conv));
    EXPECT_NEAR(m.stddev, std::sqrt(6.0 / 288) / std::sqrt(3.0), 0.002);
    EXPECT_LE(m.max, std::sqrt(6.0 / 288));
  }
  {
    Moments m = ComputeMoments(Init("he_normal", conv));
    EXPECT_NEAR(m.mean, 0.0, 0.003);
    EXPECT_NEAR(m.stddev, std::sqrt(2.0 / 288), 0.003);
  }
}

TEST(InitializersTest, ExplicitValueWins) {
  Tensor value = Tensor::FromVector<float>(Shape({2}), {4.0f, -1.0f});
  Tensor t = Init("ones", Shape({2}), {{"value", AttrValue::FromTensor(value)}});
  EXPECT_TRUE(t.BitwiseEquals(value));
}

TEST(InitializersTest, LowPrecisionDTypes) {
  Tensor t = Init("uniform", Shape({1000}), {}, 7, DType::kBF16);
  Moments m = ComputeMoments(t);
  // Rounding to bf16 (8 bits of mantissa) may reach one ulp past the limits.
  EXPECT_GE(m.min, -0.05 * (1 + 1.0 / 128));
  EXPECT_LE(m.max, 0.05 * (1 + 1.0 / 128));
  EXPECT_GT(m.stddev, 0.02);
}

TEST(InitializersTest, DeterministicAndKeyedBySeedsAndName) {
  const AttrMap attrs = {{"initializer", AttrValue::String("normal")}};
  auto init = [&](const std::string& name, uint64_t session_seed, int64_t var_seed) {
    AttrMap a = attrs;
    a["seed"] = AttrValue::Int(var_seed);
    Graph g = VariableGraph(name, Shape({64}), a);
    return *InitializeVariable(*g.FindNode(name), session_seed);
  };
  const Tensor base = init("dense/kernel", 1, 0);
  EXPECT_TRUE(base.BitwiseEquals(init("dense/kernel", 1, 0)));
  EXPECT_FALSE(base.BitwiseEquals(init("dense/kernel", 2, 0)));
  EXPECT_FALSE(base.BitwiseEquals(init("dense/kernel", 1, 5)));
  EXPECT_FALSE(base.BitwiseEquals(init("dense_1/kernel", 1, 0)));
}

// The same variables created in opposite orders get the same values.
TEST(InitializersTest, IndependentOfCreationOrder) {
  auto build = [](bool reversed) {
    Graph g;
    std::vector<std::string> names = {"a", "b", "c"};
    if (reversed) std::reverse(names.begin(), names.end());
    for (const std::string& name : names) {
      EXPECT_TRUE(g.AddNodeAndInfer(name, "Variable", {},
                                    {{"dtype", AttrValue::Type(DType::kF32)},
                                     {"shape", AttrValue::FromShape(Shape({8, 8}))},
                                     {"initializer", AttrValue::String("glorot_uniform")}})
                      .ok());
    }
    return VariableStore::Initialize(g, 42);
  };
  absl::StatusOr<VariableStore> forward = build(false);
  absl::StatusOr<VariableStore> backward = build(true);
  ASSERT_TRUE(forward.ok() && backward.ok());
  EXPECT_EQ(forward->Names(), (std::vector<std::string>{"a", "b", "c"}));
  for (const std::string& name : forward->Names()) {
    EXPECT_TRUE(forward->Get(name)->BitwiseEquals(*backward->Get(name))) << name;
  }
  EXPECT_FALSE(forward->Get("a")->BitwiseEquals(*forward->Get("b")));
}

TEST(VariableStoreTest, SetChecksTypeAndCopies) {
  Graph g = VariableGraph("v", Shape({2}), {});
  absl::StatusOr<VariableStore> store = VariableStore::Initialize(g, 0);
  ASSERT_TRUE(store.ok());
  Tensor value = Tensor::FromVector<float>(Shape({2}), {1.0f, 2.0f});
  ASSERT_TRUE(store->Set("v", value).ok());
  value.data<float>()[0] = 9.0f;  // the store holds a copy
  EXPECT_EQ(store->Get("v")->GetAsDouble(0), 1.0);
  EXPECT_FALSE(store->Set("v", Tensor::FromVector<float>(Shape({3}), {1, 2, 3})).ok());
  EXPECT_FALSE(store->Set("v", Tensor::FromVector<double>(Shape({2}), {1, 2})).ok());
  EXPECT_EQ(store->Set("nope", value).code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tsr
