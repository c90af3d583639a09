// End-to-end tests of compiler/codegen: MLIR text in linalg/tensor/arith/math compiled to
// an object file, loaded by runtime/native in this process and called through the
// bare-pointer convention of codegen.h; results checked against the reference kernels.
#include "compiler/codegen/codegen.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "graph/attribute.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/run_op.h"
#include "runtime/native/object_loader.h"

namespace tsr {
namespace {

Tensor Random(Shape shape, uint32_t seed) {
  Tensor t(DType::kF32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : t.flat<float>()) v = dist(rng);
  return t;
}

Tensor Ref(const std::string& op, const std::vector<std::optional<Tensor>>& inputs, const AttrMap& attrs = {}) {
  auto outputs = RunOp(op, inputs, attrs);
  EXPECT_TRUE(outputs.ok()) << op << ": " << outputs.status();
  return (*outputs)[0];
}

void ExpectNear(const Tensor& expected, const float* actual, double tolerance) {
  const auto want = expected.flat<float>();
  int reported = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::abs(want[i] - actual[i]) > tolerance * (1.0 + std::abs(want[i]))) {
      ADD_FAILURE() << "element " << i << ": expected " << want[i] << ", got " << actual[i];
      if (++reported == 5) return;
    }
  }
}

// Compiles `text`, calls its function `name` as y = f(x) (one input, one output of x's
// size) and returns y.
std::vector<float> CompileAndRunUnary(const std::string& text, const std::string& name, const Tensor& x) {
  std::vector<float> y(x.num_elements(), std::nanf(""));
  auto module = CompileAndLoad(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return y;
  auto entry = (*module)->Lookup(name);
  EXPECT_TRUE(entry.ok()) << entry.status();
  if (!entry.ok()) return y;
  reinterpret_cast<void (*)(const float*, float*)> (*entry)(x.data<float>(), y.data());
  return y;
}

std::string TensorType(std::initializer_list<int64_t> dims) {
  std::string type = "tensor<";
  for (int64_t d : dims) absl::StrAppend(&type, d, "x");
  return absl::StrCat(type, "f32>");
}

// relu(x @ w + bias), x [m,k], w [k,n], bias [n]: matmul with a fused epilogue.
std::string MatmulBiasRelu(int64_t m, int64_t k, int64_t n) {
  const std::string x = TensorType({m, k}), w = TensorType({k, n}), b = TensorType({n}), y = TensorType({m, n});
  return absl::StrCat(R"(
func.func @matmul_bias_relu(%x: )",
                      x, ", %w: ", w, ", %b: ", b, ") -> ", y, R"( {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : )",
                      y, R"(
  %acc = linalg.fill ins(%zero : f32) outs(%e : )",
                      y, ") -> ", y, R"(
  %mm = linalg.matmul ins(%x, %w : )",
                      x, ", ", w, ") outs(%acc : ", y, ") -> ", y, R"(
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                                        affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : )",
                      y, ", ", b, ") outs(%e : ", y, R"() {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    %z = arith.maximumf %s, %zero : f32
    linalg.yield %z : f32
  } -> )",
                      y, R"(
  return %r : )",
                      y, R"(
}
)");
}

using MatmulFn = void (*)(const float*, const float*, const float*, float*);

TEST(CodegenTest, MatmulBiasReluMatchesReference) {
  struct Case {
    int64_t m, k, n;
  };
  for (const Case& c : {Case{1, 1, 1}, Case{3, 17, 5}, Case{8, 16, 16}, Case{13, 40, 20}, Case{64, 64, 64},
                        Case{127, 255, 129}, Case{256, 256, 256}}) {
    const uint32_t seed = static_cast<uint32_t>(1000 + c.m + c.k + c.n);
    SCOPED_TRACE(absl::StrCat("m=", c.m, " k=", c.k, " n=", c.n, " seed=", seed));
    auto compiled = CompileMlirToObject(MatmulBiasRelu(c.m, c.k, c.n));
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    // Printed, not asserted: a schedule that leaves the matmul untiled makes LLVM take
    // minutes on whole-matrix vectors (the test then times out).
    std::printf("m=%lld k=%lld n=%lld: MLIR %.3f s, LLVM %.3f s\n", static_cast<long long>(c.m),
                static_cast<long long>(c.k), static_cast<long long>(c.n), compiled->mlir_seconds,
                compiled->llvm_seconds);
    EXPECT_EQ(compiled->symbols, std::vector<std::string>{"matmul_bias_relu"});
    EXPECT_FALSE(compiled->object.empty());
    auto module =
        NativeModule::Load({NativeObject{"matmul.o", compiled->object, compiled->target, compiled->checksum}});
    ASSERT_TRUE(module.ok()) << module.status();
    auto entry = (*module)->Lookup("matmul_bias_relu");
    ASSERT_TRUE(entry.ok()) << entry.status();
    const Tensor x = Random({c.m, c.k}, seed), w = Random({c.k, c.n}, seed + 1), b = Random({c.n}, seed + 2);
    std::vector<float> y(c.m * c.n, std::nanf(""));
    reinterpret_cast<MatmulFn> (*entry)(x.data<float>(), w.data<float>(), b.data<float>(), y.data());
    const Tensor expected = Ref("Relu", {Ref("Add", {Ref("MatMul", {x, w}), b})});
    ExpectNear(expected, y.data(), 1e-5 * static_cast<double>(c.k));
  }
}

TEST(CodegenTest, BatchMatmulMatchesReference) {
  constexpr uint32_t kSeed = 77;
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  const std::string text = R"(
func.func @bmm(%a: tensor<3x9x20xf32>, %b: tensor<3x20x33xf32>) -> tensor<3x9x33xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x9x33xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<3x9x33xf32>) -> tensor<3x9x33xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<3x9x20xf32>, tensor<3x20x33xf32>)
                           outs(%acc : tensor<3x9x33xf32>) -> tensor<3x9x33xf32>
  return %r : tensor<3x9x33xf32>
}
)";
  auto module = CompileAndLoad(text);
  ASSERT_TRUE(module.ok()) << module.status();
  auto entry = (*module)->Lookup("bmm");
  ASSERT_TRUE(entry.ok()) << entry.status();
  const Tensor a = Random({3, 9, 20}, kSeed), b = Random({3, 20, 33}, kSeed + 1);
  std::vector<float> y(3 * 9 * 33, std::nanf(""));
  reinterpret_cast<void (*)(const float*, const float*, float*)> (*entry)(a.data<float>(), b.data<float>(), y.data());
  ExpectNear(Ref("MatMul", {a, b}), y.data(), 1e-4);
}

// relu((x + bias[j]) * scale[i]): an elementwise chain with broadcasting on both axes.
TEST(CodegenTest, ElementwiseChainWithBroadcastingMatchesReference) {
  struct Case {
    int64_t m, n;
  };
  for (const Case& c : {Case{3, 17}, Case{64, 96}, Case{37, 129}}) {
    const uint32_t seed = static_cast<uint32_t>(2000 + c.m * 7 + c.n);
    SCOPED_TRACE(absl::StrCat("m=", c.m, " n=", c.n, " seed=", seed));
    const std::string x = TensorType({c.m, c.n}), b = TensorType({c.n}), s = TensorType({c.m, 1});
    const std::string text = absl::StrCat(R"(
#id = affine_map<(i, j) -> (i, j)>
func.func @chain(%x: )",
                                          x, ", %b: ", b, ", %s: ", s, ") -> ", x, R"( {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : )",
                                          x, R"(
  %sum = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> (j)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : )",
                                          x, ", ", b, ") outs(%e : ", x, R"() {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> )",
                                          x, R"(
  %prod = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> (i, 0)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum, %s : )",
                                          x, ", ", s, ") outs(%e : ", x, R"() {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.mulf %u, %v : f32
    linalg.yield %r : f32
  } -> )",
                                          x, R"(
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%prod : )",
                                          x, ") outs(%e : ", x, R"() {
  ^bb0(%u: f32, %o: f32):
    %r = arith.maximumf %u, %zero : f32
    linalg.yield %r : f32
  } -> )",
                                          x, R"(
  return %relu : )",
                                          x, R"(
}
)");
    auto module = CompileAndLoad(text);
    ASSERT_TRUE(module.ok()) << module.status();
    auto entry = (*module)->Lookup("chain");
    ASSERT_TRUE(entry.ok()) << entry.status();
    const Tensor tx = Random({c.m, c.n}, seed), tb = Random({c.n}, seed + 1), ts = Random({c.m, 1}, seed + 2);
    std::vector<float> y(c.m * c.n, std::nanf(""));
    reinterpret_cast<MatmulFn> (*entry)(tx.data<float>(), tb.data<float>(), ts.data<float>(), y.data());
    ExpectNear(Ref("Relu", {Ref("Mul", {Ref("Add", {tx, tb}), ts})}), y.data(), 1e-6);
  }
}

// GELU in the erf form (what PyTorch's export gives): the polynomial erf at the narrower
// step the schedule gives polynomial bodies, on widths that are and are not multiples
// of it.
TEST(CodegenTest, GeluMatchesReference) {
  struct Case {
    int64_t m, n;
  };
  for (const Case& c : {Case{1, 1}, Case{3, 37}, Case{4, 3072}}) {
    const uint32_t seed = static_cast<uint32_t>(4000 + c.m * 13 + c.n);
    SCOPED_TRACE(absl::StrCat("m=", c.m, " n=", c.n, " seed=", seed));
    const std::string x = TensorType({c.m, c.n});
    const std::string text = absl::StrCat(R"(
#id = affine_map<(i, j) -> (i, j)>
func.func @gelu(%x: )",
                                          x, ") -> ", x, R"( {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rsqrt2 = arith.constant 0.707106769 : f32
  %e = tensor.empty() : )",
                                          x, R"(
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : )",
                                          x, ") outs(%e : ", x, R"() {
  ^bb0(%u: f32, %o: f32):
    %s = arith.mulf %u, %rsqrt2 : f32
    %f = math.erf %s : f32
    %p = arith.addf %f, %one : f32
    %h = arith.mulf %u, %half : f32
    %r = arith.mulf %h, %p : f32
    linalg.yield %r : f32
  } -> )",
                                          x, R"(
  return %y : )",
                                          x, R"(
}
)");
    Tensor tx = Random({c.m, c.n}, seed);
    for (float& v : tx.flat<float>()) v *= 5.0f;  // both sides of erf's polynomial pieces
    ExpectNear(Ref("Gelu", {tx}), CompileAndRunUnary(text, "gelu", tx).data(), 1e-5);
  }
}

// Softmax along the last axis: two reductions (max, sum) and elementwise exp/div.
TEST(CodegenTest, SoftmaxMatchesReference) {
  struct Case {
    int64_t m, n;
  };
  for (const Case& c : {Case{1, 1}, Case{5, 33}, Case{16, 256}}) {
    const uint32_t seed = static_cast<uint32_t>(3000 + c.m * 11 + c.n);
    SCOPED_TRACE(absl::StrCat("m=", c.m, " n=", c.n, " seed=", seed));
    const std::string x = TensorType({c.m, c.n}), r = TensorType({c.m});
    const std::string text = absl::StrCat(R"(
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @softmax(%x: )",
                                          x, ") -> ", x, R"( {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : )",
                                          r, R"(
  %mi = linalg.fill ins(%ninf : f32) outs(%er : )",
                                          r, ") -> ", r, R"(
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : )",
                                          x, ") outs(%mi : ", r, R"() {
  ^bb0(%u: f32, %acc: f32):
    %m = arith.maximumf %u, %acc : f32
    linalg.yield %m : f32
  } -> )",
                                          r, R"(
  %e = tensor.empty() : )",
                                          x, R"(
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : )",
                                          x, ", ", r, ") outs(%e : ", x, R"() {
  ^bb0(%u: f32, %m: f32, %o: f32):
    %d = arith.subf %u, %m : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> )",
                                          x, R"(
  %si = linalg.fill ins(%zero : f32) outs(%er : )",
                                          r, ") -> ", r, R"(
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%ex : )",
                                          x, ") outs(%si : ", r, R"() {
  ^bb0(%u: f32, %acc: f32):
    %s = arith.addf %u, %acc : f32
    linalg.yield %s : f32
  } -> )",
                                          r, R"(
  %out = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sum : )",
                                          x, ", ", r, ") outs(%e : ", x, R"() {
  ^bb0(%u: f32, %s: f32, %o: f32):
    %q = arith.divf %u, %s : f32
    linalg.yield %q : f32
  } -> )",
                                          x, R"(
  return %out : )",
                                          x, R"(
}
)");
    Tensor tx = Random({c.m, c.n}, seed);
    for (float& v : tx.flat<float>()) v *= 8.0f;
    ExpectNear(Ref("Softmax", {tx}, {{"axis", AttrValue::Int(-1)}}), CompileAndRunUnary(text, "softmax", tx).data(),
               1e-5);
  }
}

TEST(CodegenTest, ObjectForAnAvx512CpuIsRefusedOnAHostWithoutIt) {
  CodegenOptions options;
  options.cpu = "znver4";
  auto compiled = CompileMlirToObject(MatmulBiasRelu(16, 16, 16), options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(compiled->target.cpu, "znver4");
  const absl::Status host = CheckHostSupports(compiled->target);
  const bool host_has_avx512 = HostTargetDescription().features.find("+avx512f") != std::string::npos;
  if (host_has_avx512) GTEST_SKIP() << "this host has AVX-512; nothing to refuse";
  EXPECT_EQ(host.code(), absl::StatusCode::kFailedPrecondition) << host;
  EXPECT_NE(host.message().find("avx512f"), std::string::npos) << host;
  auto module = NativeModule::Load({NativeObject{"znver4.o", compiled->object, compiled->target, compiled->checksum}});
  EXPECT_EQ(module.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(module.status().message().find("znver4.o"), std::string::npos) << module.status();
}

TEST(CodegenTest, HostObjectRecordsTheHostTarget) {
  auto compiled = CompileMlirToObject(MatmulBiasRelu(8, 8, 8));
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const TargetDescription host = HostTargetDescription();
  EXPECT_EQ(compiled->target.triple, host.triple);
  EXPECT_EQ(compiled->target.cpu, host.cpu);
  EXPECT_EQ(compiled->target.features, host.features);
  EXPECT_TRUE(CheckHostSupports(compiled->target).ok());
  EXPECT_GT(compiled->mlir_seconds, 0.0);
  EXPECT_GT(compiled->llvm_seconds, 0.0);
}

TEST(CodegenTest, UnsupportedInputsAreErrors) {
  auto dynamic = CompileMlirToObject(R"(
func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> { return %x : tensor<?xf32> })");
  EXPECT_EQ(dynamic.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(dynamic.status().message().find("function 'f': argument 0"), std::string::npos) << dynamic.status();
  auto garbage = CompileMlirToObject("func.func @f(");
  EXPECT_EQ(garbage.status().code(), absl::StatusCode::kInvalidArgument);
  CodegenOptions unknown_cpu;
  unknown_cpu.cpu = "no-such-cpu";
  auto bad_cpu = CompileMlirToObject(MatmulBiasRelu(2, 2, 2), unknown_cpu);
  EXPECT_NE(bad_cpu.status().message().find("no-such-cpu"), std::string::npos) << bad_cpu.status();
}

}  // namespace
}  // namespace tsr
