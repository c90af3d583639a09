// Tests of the optimized CPU GEMM (kernels/cpu/gemm.h) against a double-precision
// triple loop at every ISA level the machine supports, of the cpu MatMul/Gemm
// kernels against the reference ones, and of thread-count independence. The entry
// points with a pre-packed A (SgemmPackedA), a pre-packed B (SgemmPackedB) or a
// caller-packed B (GemmBPacker) are checked the same way, and bitwise against the
// plain Sgemm.
#include "kernels/cpu/gemm.h"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/run_op.h"
#include "tests/kernels/cpu/cpu_test_util.h"

namespace tsr {
namespace {

using testing::SupportedIsas;
using testing::ThreadedParallelFor;

std::vector<float> RandomVector(std::mt19937& rng, int64_t size) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(size));
  for (float& x : v) x = dist(rng);
  return v;
}

// Which Sgemm entry point a check calls.
enum class Entry {
  kPlain,
  kPackedA,            // SgemmPackedA + strided B
  kPackedAAndBPacker,  // SgemmPackedA + GemmBPacker
  kBPacker,            // strided A + GemmBPacker
  kPackedB,            // strided A + SgemmPackedB
};

struct Case {
  bool trans_a, trans_b;
  int64_t m, n, k;
  float alpha, beta;
  int64_t pad;  // extra leading-dimension elements
  Entry entry = Entry::kPlain;
};

// A GemmBPacker over a strided op(B), written independently of gemm.cc's packing.
class MatrixPacker : public GemmBPacker {
 public:
  MatrixPacker(bool trans_b, const float* b, int64_t ldb) : trans_b_(trans_b), b_(b), ldb_(ldb) {}
  void Pack(int64_t p0, int64_t kc, int64_t j0, int64_t nc, int nr, float* dst) const override {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(dst) % 64, 0u);
    for (int64_t s = 0; s * nr < nc; ++s) {
      for (int64_t p = 0; p < kc; ++p) {
        for (int j = 0; j < nr; ++j) {
          const int64_t col = j0 + s * nr + j, row = p0 + p;
          dst[(s * kc + p) * nr + j] =
              s * nr + j >= nc ? 0.0f : (trans_b_ ? b_[col * ldb_ + row] : b_[row * ldb_ + col]);
        }
      }
    }
  }

 private:
  bool trans_b_;
  const float* b_;
  int64_t ldb_;
};

// Runs the Sgemm entry point `entry` (packing A with `options` where it packs).
void RunEntry(Entry entry, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
              int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const GemmOptions& options) {
  const MatrixPacker packer(trans_b, b, ldb);
  SgemmPackedA packed;
  if (entry == Entry::kPackedA || entry == Entry::kPackedAAndBPacker) {
    // Pack twice, the first time larger, so that reusing the memory is covered too.
    const std::vector<float> larger(static_cast<size_t>((m + 7) * (k + 3)), 1.0f);
    packed.Pack(false, m + 7, k + 3, larger.data(), k + 3, GemmOptions{.isa = options.isa});
    packed.Pack(trans_a, m, k, a, lda, options);
    ASSERT_EQ(packed.rows(), m);
    ASSERT_EQ(packed.depth(), k);
  }
  SgemmPackedB packed_b;
  if (entry == Entry::kPackedB) {
    const std::vector<float> larger(static_cast<size_t>((n + 40) * (k + 3)), 1.0f);
    packed_b.Pack(false, k + 3, n + 40, larger.data(), n + 40, GemmOptions{.isa = options.isa});
    packed_b.Pack(trans_b, k, n, b, ldb, options);
    ASSERT_EQ(packed_b.depth(), k);
    ASSERT_EQ(packed_b.columns(), n);
  }
  switch (entry) {
    case Entry::kPackedB:
      return Sgemm(trans_a, m, alpha, a, lda, packed_b, beta, c, ldc, options);
    case Entry::kPlain:
      return Sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, options);
    case Entry::kPackedA:
      return Sgemm(packed, trans_b, n, alpha, b, ldb, beta, c, ldc, options);
    case Entry::kPackedAAndBPacker:
      return Sgemm(packed, packer, n, alpha, beta, c, ldc, options);
    case Entry::kBPacker:
      return Sgemm(trans_a, m, n, k, alpha, a, lda, packer, beta, c, ldc, options);
  }
}

// Checks Sgemm against a double triple loop. The bound is the worst case of f32
// summation, about (k + a few) * 2^-24 * sum |alpha * a * b| (+ the beta/epilogue terms).
void CheckSgemm(const Case& cs, CpuIsa isa, uint32_t seed, const GemmEpilogue& epilogue = {}) {
  SCOPED_TRACE(absl::StrCat("seed=", seed, " isa=", CpuIsaName(isa), " transA=", cs.trans_a, " transB=", cs.trans_b,
                            " m=", cs.m, " n=", cs.n, " k=", cs.k, " alpha=", cs.alpha, " beta=", cs.beta,
                            " pad=", cs.pad, " entry=", static_cast<int>(cs.entry)));
  std::mt19937 rng(seed);
  const int64_t a_rows = cs.trans_a ? cs.k : cs.m, a_cols = cs.trans_a ? cs.m : cs.k;
  const int64_t b_rows = cs.trans_b ? cs.n : cs.k, b_cols = cs.trans_b ? cs.k : cs.n;
  const int64_t lda = a_cols + cs.pad, ldb = b_cols + cs.pad, ldc = cs.n + cs.pad;
  const std::vector<float> a = RandomVector(rng, a_rows * lda);
  const std::vector<float> b = RandomVector(rng, b_rows * ldb);
  std::vector<float> c = RandomVector(rng, cs.m * ldc);
  if (cs.beta == 0.0f) std::fill(c.begin(), c.end(), std::numeric_limits<float>::quiet_NaN());
  const std::vector<float> c0 = c;
  GemmOptions options;
  options.isa = isa;
  options.epilogue = epilogue;
  RunEntry(cs.entry, cs.trans_a, cs.trans_b, cs.m, cs.n, cs.k, cs.alpha, a.data(), lda, b.data(), ldb, cs.beta,
           c.data(), ldc, options);
  int bad = 0;
  for (int64_t i = 0; i < cs.m; ++i) {
    for (int64_t j = 0; j < cs.n; ++j) {
      double sum = 0, abs_sum = 0;
      for (int64_t p = 0; p < cs.k; ++p) {
        const double x = cs.trans_a ? a[p * lda + i] : a[i * lda + p];
        const double w = cs.trans_b ? b[j * ldb + p] : b[p * ldb + j];
        sum += x * w;
        abs_sum += std::abs(x * w);
      }
      double want = cs.alpha * sum;
      if (cs.beta != 0.0f) want += cs.beta * static_cast<double>(c0[i * ldc + j]);
      if (epilogue.bias != nullptr) want += epilogue.bias[j];
      if (epilogue.row_bias != nullptr) want += epilogue.row_bias[i];
      if (epilogue.activation == GemmActivation::kRelu) want = std::max(want, 0.0);
      if (epilogue.activation == GemmActivation::kGelu) want = 0.5 * want * (1 + std::erf(want / std::sqrt(2.0)));
      if (epilogue.residual != nullptr) want += epilogue.residual[i * epilogue.ldr + j];
      const double tol = 2e-7 * (cs.k + 8) * (std::abs(cs.alpha) * abs_sum + std::abs(cs.beta) + 2) + 1e-6;
      const float got = c[i * ldc + j];
      if (!(std::abs(got - want) <= tol) && ++bad <= 5) {
        ADD_FAILURE() << "C[" << i << "," << j << "] = " << got << ", want " << want;
      }
    }
    // The padding between rows is never written.
    for (int64_t j = cs.n; j < ldc; ++j) {
      if (!(c[i * ldc + j] == c0[i * ldc + j] || (std::isnan(c[i * ldc + j]) && std::isnan(c0[i * ldc + j])))) {
        ADD_FAILURE() << "padding C[" << i << "," << j << "] was overwritten";
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(CpuFeaturesTest, ParsesAndCapsTheIsa) {
  EXPECT_EQ(ParseCpuIsa("avx2"), CpuIsa::kAvx2);
  EXPECT_EQ(ParseCpuIsa("avx512"), CpuIsa::kAvx512);
  EXPECT_EQ(ParseCpuIsa("scalar"), CpuIsa::kScalar);
  EXPECT_EQ(ParseCpuIsa("sse9"), std::nullopt);
  EXPECT_EQ(SupportedCpuIsa(CpuIsa::kAvx512), DetectedCpuIsa());
  EXPECT_EQ(SupportedCpuIsa(CpuIsa::kScalar), CpuIsa::kScalar);
  ::setenv("TESSERA_CPU_ISA", "scalar", 1);
  EXPECT_EQ(ActiveCpuIsa(), CpuIsa::kScalar);
  ::setenv("TESSERA_CPU_ISA", "avx512", 1);
  EXPECT_EQ(ActiveCpuIsa(), DetectedCpuIsa());
  ::setenv("TESSERA_CPU_ISA", "bogus", 1);
  EXPECT_EQ(ActiveCpuIsa(), DetectedCpuIsa());
  ::unsetenv("TESSERA_CPU_ISA");
  EXPECT_EQ(ActiveCpuIsa(), DetectedCpuIsa());
  std::cout << "detected ISA: " << CpuIsaName(DetectedCpuIsa()) << "\n";
}

TEST(SgemmTest, MatchesTripleLoopAtEveryIsa) {
  const int64_t sizes[] = {1, 3, 17, 33, 64, 100};
  for (CpuIsa isa : SupportedIsas()) {
    uint32_t seed = 1;
    for (int t = 0; t < 4; ++t) {
      const bool trans_a = t & 1, trans_b = t & 2;
      for (int64_t m : sizes) {
        for (int64_t n : {int64_t{1}, int64_t{17}, int64_t{70}}) {
          const int64_t k = sizes[(m + n + t) % 6];
          CheckSgemm({trans_a, trans_b, m, n, k, 1.0f, 0.0f, 0}, isa, seed++);
        }
      }
    }
  }
}

// Every height of the last row strip (the micro-kernels compute only as many rows of
// a partial strip as needed): m = 1..30 covers every remainder of the AVX2 (6) and
// AVX-512 (14) tiles, k = 300 more than one depth block (the later blocks accumulate
// into C), n = 37 full and partial column strips, each entry point that packs A.
TEST(SgemmTest, EveryRowTailOfTheMicroTile) {
  for (CpuIsa isa : SupportedIsas()) {
    uint32_t seed = 500;
    for (int64_t m = 1; m <= 30; ++m) {
      for (Entry entry : {Entry::kPlain, Entry::kPackedA, Entry::kBPacker, Entry::kPackedB}) {
        const bool trans_a = m % 2 == 0;
        CheckSgemm({trans_a, false, m, 37, 300, 1.5f, m % 3 == 0 ? 0.0f : 0.5f, 1, entry}, isa, seed++);
      }
    }
  }
}

TEST(SgemmTest, LargeAndOddShapesWithAlphaBetaAndStrides) {
  const Case cases[] = {
      {false, false, 1023, 17, 33, 1.0f, 0.0f, 0},
      {true, false, 17, 1023, 3, -0.5f, 2.0f, 5},
      {false, true, 3, 35, 1023, 2.0f, 1.0f, 3},
      {true, true, 129, 67, 300, 0.75f, -1.5f, 1},
      {false, false, 200, 300, 600, 1.0f, 1.0f, 7},
      // One mc block of rows, several nc and kc blocks, a partial last column strip
      // and a padded B: the micro-kernel packs B strips as it reads them.
      {false, false, 128, 805, 600, 1.0f, 0.5f, 5},
  };
  uint32_t seed = 100;
  for (CpuIsa isa : SupportedIsas()) {
    for (const Case& cs : cases) CheckSgemm(cs, isa, seed++);
  }
}

TEST(SgemmTest, ZeroSizesAndZeroAlpha) {
  for (CpuIsa isa : SupportedIsas()) {
    CheckSgemm({false, false, 5, 7, 0, 1.0f, 0.5f, 2}, isa, 7);  // C = beta * C
    CheckSgemm({false, false, 5, 7, 0, 1.0f, 0.0f, 0}, isa, 8);  // C = 0, NaNs dropped
    CheckSgemm({false, true, 9, 4, 6, 0.0f, 3.0f, 0}, isa, 9);   // alpha == 0
    CheckSgemm({false, false, 0, 7, 5, 1.0f, 1.0f, 0}, isa, 10);
    CheckSgemm({true, false, 6, 0, 5, 1.0f, 1.0f, 0}, isa, 11);
  }
}

TEST(SgemmTest, Epilogues) {
  const int64_t m = 37, n = 45, ldr = 50;
  std::mt19937 rng(42);
  const std::vector<float> bias = RandomVector(rng, n);
  const std::vector<float> row_bias = RandomVector(rng, m);
  const std::vector<float> residual = RandomVector(rng, m * ldr);
  for (CpuIsa isa : SupportedIsas()) {
    for (GemmActivation act : {GemmActivation::kNone, GemmActivation::kRelu, GemmActivation::kGelu}) {
      GemmEpilogue ep;
      ep.bias = bias.data();
      ep.activation = act;
      CheckSgemm({false, false, m, n, 300, 1.0f, 0.5f, 0}, isa, 20 + static_cast<int>(act), ep);
      ep.residual = residual.data();
      ep.ldr = ldr;
      CheckSgemm({true, false, m, n, 19, 2.0f, 0.0f, 0}, isa, 30 + static_cast<int>(act), ep);
      ep.bias = nullptr;
      CheckSgemm({false, false, m, n, 0, 1.0f, 1.0f, 0}, isa, 40 + static_cast<int>(act), ep);
      ep.row_bias = row_bias.data();
      CheckSgemm({false, true, m, n, 70, 1.0f, 0.0f, 0}, isa, 50 + static_cast<int>(act), ep);
      ep.bias = bias.data();
      ep.residual = nullptr;
      CheckSgemm({false, false, m, n, 33, -1.0f, 1.0f, 0}, isa, 60 + static_cast<int>(act), ep);
    }
  }
}

// The epilogue (vectorized per ISA) gives exactly the bits of the product followed by
// the plain loop y = act(c + bias[j] + row_bias[i]) + residual, over odd widths.
TEST(SgemmTest, EpilogueIsBitwiseThePlainLoopAfterTheProduct) {
  const int64_t m = 5, k = 40, ldr = 80;
  std::mt19937 rng(90);
  const std::vector<float> a = RandomVector(rng, m * k), b = RandomVector(rng, k * ldr);
  const std::vector<float> bias = RandomVector(rng, ldr), row_bias = RandomVector(rng, m);
  const std::vector<float> residual = RandomVector(rng, m * ldr);
  for (CpuIsa isa : SupportedIsas()) {
    for (int64_t n : {int64_t{1}, int64_t{15}, int64_t{33}, int64_t{77}}) {
      for (GemmActivation act : {GemmActivation::kNone, GemmActivation::kRelu, GemmActivation::kGelu}) {
        SCOPED_TRACE(absl::StrCat("isa=", CpuIsaName(isa), " n=", n, " act=", static_cast<int>(act)));
        GemmOptions options;
        options.isa = isa;
        std::vector<float> want(static_cast<size_t>(m * n));
        Sgemm(false, false, m, n, k, 1.0f, a.data(), k, b.data(), ldr, 0.0f, want.data(), n, options);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            float x = want[i * n + j] + bias[j];
            x += row_bias[i];
            if (act == GemmActivation::kRelu) x = x > 0.0f ? x : 0.0f;
            if (act == GemmActivation::kGelu) x = 0.5f * x * (1.0f + std::erf(x * static_cast<float>(M_SQRT1_2)));
            want[i * n + j] = x + residual[i * ldr + j];
          }
        }
        options.epilogue.bias = bias.data();
        options.epilogue.row_bias = row_bias.data();
        options.epilogue.activation = act;
        options.epilogue.residual = residual.data();
        options.epilogue.ldr = ldr;
        std::vector<float> got(static_cast<size_t>(m * n));
        Sgemm(false, false, m, n, k, 1.0f, a.data(), k, b.data(), ldr, 0.0f, got.data(), n, options);
        EXPECT_TRUE(got == want);
      }
    }
  }
}

TEST(SgemmTest, ThreadedResultsAreBitwiseEqualToSingleThreaded) {
  struct Shape3 {
    int64_t m, n, k;
  };
  // Split over M (B packed once, shared) or over N (B packed by the micro-kernel in
  // each task; A packed once per task, kept in L2 over the kc blocks when it fits),
  // against the unsplit run.
  const Shape3 shapes[] = {{300, 70, 500}, {70, 300, 500}, {257, 259, 263}, {1, 1000, 100}, {128, 805, 300}};
  uint32_t seed = 500;
  for (CpuIsa isa : SupportedIsas()) {
    for (const Shape3& s : shapes) {
      for (int t = 0; t < 4; ++t) {
        SCOPED_TRACE(
            absl::StrCat("seed=", seed, " isa=", CpuIsaName(isa), " m=", s.m, " n=", s.n, " k=", s.k, " trans=", t));
        std::mt19937 rng(seed++);
        const bool trans_a = t & 1, trans_b = t & 2;
        const std::vector<float> a = RandomVector(rng, s.m * s.k);
        const std::vector<float> b = RandomVector(rng, s.k * s.n);
        const std::vector<float> c0 = RandomVector(rng, s.m * s.n);
        const std::vector<float> bias = RandomVector(rng, s.n);
        std::vector<std::vector<float>> results;
        for (int chunks : {1, 2, 3, 1000}) {
          GemmOptions options;
          options.isa = isa;
          options.epilogue.bias = bias.data();
          options.epilogue.activation = GemmActivation::kGelu;
          if (chunks > 1) options.parallel_for = ThreadedParallelFor(chunks);
          std::vector<float> c = c0;
          Sgemm(trans_a, trans_b, s.m, s.n, s.k, 1.5f, a.data(), trans_a ? s.m : s.k, b.data(), trans_b ? s.k : s.n,
                0.25f, c.data(), s.n, options);
          results.push_back(std::move(c));
        }
        for (size_t r = 1; r < results.size(); ++r) {
          EXPECT_TRUE(results[r] == results[0]) << "split " << r << " differs from single-threaded";
        }
      }
    }
  }
}

constexpr Entry kPackedEntries[] = {Entry::kPackedA, Entry::kPackedAAndBPacker, Entry::kBPacker, Entry::kPackedB};

TEST(SgemmPackedTest, MatchesTripleLoopAtEveryIsa) {
  const int64_t sizes[] = {1, 3, 17, 33, 64, 100};
  for (CpuIsa isa : SupportedIsas()) {
    uint32_t seed = 2000;
    for (Entry entry : kPackedEntries) {
      for (int t = 0; t < 4; ++t) {
        const bool trans_a = t & 1, trans_b = t & 2;
        for (int64_t m : sizes) {
          for (int64_t n : {int64_t{1}, int64_t{17}, int64_t{70}}) {
            const int64_t k = sizes[(m + n + t) % 6];
            CheckSgemm({trans_a, trans_b, m, n, k, 1.0f, 0.0f, 0, entry}, isa, seed++);
          }
        }
      }
    }
  }
}

// Several kc blocks, several mc blocks (m > 144), several nc blocks of a single mc
// block (n > 384), alpha/beta, padded strides, zero sizes, epilogues.
TEST(SgemmPackedTest, LargeOddAndZeroShapesWithEpilogues) {
  const Case cases[] = {
      {false, false, 1023, 17, 33, 1.0f, 0.0f, 0}, {true, false, 17, 1023, 3, -0.5f, 2.0f, 5},
      {false, true, 3, 35, 1023, 2.0f, 1.0f, 3},   {true, true, 300, 67, 600, 0.75f, -1.5f, 1},
      {false, false, 20, 900, 520, 1.0f, 1.0f, 7}, {false, false, 5, 7, 0, 1.0f, 0.5f, 2},
      {false, true, 9, 4, 6, 0.0f, 3.0f, 0},       {false, false, 0, 7, 5, 1.0f, 1.0f, 0},
      {true, false, 6, 0, 5, 1.0f, 1.0f, 0},
  };
  std::mt19937 rng(77);
  const std::vector<float> bias = RandomVector(rng, 1023);
  const std::vector<float> row_bias = RandomVector(rng, 1023);
  uint32_t seed = 3000;
  for (CpuIsa isa : SupportedIsas()) {
    for (Entry entry : kPackedEntries) {
      for (Case cs : cases) {
        cs.entry = entry;
        CheckSgemm(cs, isa, seed++);
        GemmEpilogue ep;
        ep.row_bias = row_bias.data();
        ep.bias = bias.data();
        ep.activation = GemmActivation::kRelu;
        CheckSgemm(cs, isa, seed++, ep);
      }
    }
  }
}

// Packing A (split or not) and packing B through a GemmBPacker perform the same
// operations on every element as the plain Sgemm, whatever the thread split.
TEST(SgemmPackedTest, BitwiseEqualToPlainSgemmAtAnySplit) {
  struct Shape3 {
    int64_t m, n, k;
  };
  const Shape3 shapes[] = {{300, 70, 500}, {70, 300, 500}, {100, 900, 300}, {257, 259, 263}, {1, 1000, 100}};
  uint32_t seed = 4000;
  for (CpuIsa isa : SupportedIsas()) {
    for (const Shape3& s : shapes) {
      for (int t = 0; t < 4; ++t) {
        SCOPED_TRACE(
            absl::StrCat("seed=", seed, " isa=", CpuIsaName(isa), " m=", s.m, " n=", s.n, " k=", s.k, " trans=", t));
        std::mt19937 rng(seed++);
        const bool trans_a = t & 1, trans_b = t & 2;
        const int64_t lda = trans_a ? s.m : s.k, ldb = trans_b ? s.k : s.n;
        const std::vector<float> a = RandomVector(rng, s.m * s.k);
        const std::vector<float> b = RandomVector(rng, s.k * s.n);
        const std::vector<float> c0 = RandomVector(rng, s.m * s.n);
        const std::vector<float> row_bias = RandomVector(rng, s.m);
        GemmOptions plain;
        plain.isa = isa;
        plain.epilogue.row_bias = row_bias.data();
        std::vector<float> want = c0;
        Sgemm(trans_a, trans_b, s.m, s.n, s.k, 1.5f, a.data(), lda, b.data(), ldb, 0.25f, want.data(), s.n, plain);
        for (Entry entry : kPackedEntries) {
          for (int chunks : {1, 2, 3, 1000}) {
            GemmOptions options = plain;
            if (chunks > 1) options.parallel_for = ThreadedParallelFor(chunks);
            // One row of C and a transposed B in memory run as dot products along B's rows
            // (gemv_simd.h), an order a caller-packed B cannot have: SgemvTest checks those.
            if (s.m == 1 && trans_b && entry != Entry::kPackedA) continue;
            std::vector<float> c = c0;
            RunEntry(entry, trans_a, trans_b, s.m, s.n, s.k, 1.5f, a.data(), lda, b.data(), ldb, 0.25f, c.data(), s.n,
                     options);
            EXPECT_TRUE(c == want) << "entry " << static_cast<int>(entry) << " split " << chunks
                                   << " differs from the plain single-threaded Sgemm";
          }
        }
      }
    }
  }
}

// A plain row-major A within one mc block and up to 1024 columns of C is read in place
// by the micro-kernel instead of packed, against a plain B (packed by the micro-kernel as
// it reads it), a pre-packed B or a caller-packed one: the same operations on every
// element as packing it (SgemmPackedA), at every row tail of the micro-tile, row strides
// that do and do not take the in-place path (a multiple of 512 floats packs), more than
// 1024 columns (packs), several kc blocks, epilogues and thread splits. A is allocated to
// its last row exactly, so a read past row m is an ASan error.
TEST(SgemmPackedTest, AReadInPlaceIsBitwiseThePackedA) {
  struct Shape3 {
    int64_t m, n, k, lda;
  };
  std::vector<Shape3> shapes;
  for (int64_t m = 1; m <= 30; ++m) shapes.push_back({m, 37 + m, 300, 300 + m % 3});
  for (const Shape3& s : {Shape3{64, 256, 784, 784}, Shape3{64, 1000, 200, 200}, Shape3{20, 1100, 100, 100},
                          Shape3{33, 70, 520, 1024}, Shape3{128, 768, 768, 768}, Shape3{336, 40, 50, 50}}) {
    shapes.push_back(s);
  }
  uint32_t seed = 6000;
  for (CpuIsa isa : SupportedIsas()) {
    for (const Shape3& s : shapes) {
      SCOPED_TRACE(
          absl::StrCat("seed=", seed, " isa=", CpuIsaName(isa), " m=", s.m, " n=", s.n, " k=", s.k, " lda=", s.lda));
      std::mt19937 rng(seed++);
      const std::vector<float> a = RandomVector(rng, (s.m - 1) * s.lda + s.k);
      const std::vector<float> b = RandomVector(rng, s.k * s.n);
      const std::vector<float> c0 = RandomVector(rng, s.m * s.n);
      const std::vector<float> bias = RandomVector(rng, s.n);
      const std::vector<float> residual = RandomVector(rng, s.m * s.n);
      GemmOptions plain;
      plain.isa = isa;
      plain.epilogue.bias = bias.data();
      plain.epilogue.activation = GemmActivation::kRelu;
      plain.epilogue.residual = residual.data();
      plain.epilogue.ldr = s.n;
      std::vector<float> want = c0;
      RunEntry(Entry::kPackedA, false, false, s.m, s.n, s.k, 1.5f, a.data(), s.lda, b.data(), s.n, 0.25f, want.data(),
               s.n, plain);
      for (Entry entry : {Entry::kPlain, Entry::kPackedB, Entry::kBPacker}) {
        for (int chunks : {1, 2, 3, 1000}) {
          GemmOptions options = plain;
          if (chunks > 1) options.parallel_for = ThreadedParallelFor(chunks);
          std::vector<float> c = c0;
          RunEntry(entry, false, false, s.m, s.n, s.k, 1.5f, a.data(), s.lda, b.data(), s.n, 0.25f, c.data(), s.n,
                   options);
          EXPECT_TRUE(c == want) << "entry " << static_cast<int>(entry) << " split " << chunks
                                 << " differs from the packed A";
        }
      }
    }
  }
}

TEST(SgemmPackedTest, OnePackedAServesManyCallsAndThreads) {
  std::mt19937 rng(5000);
  const int64_t m = 50, k = 300, n = 40, calls = 6;
  const std::vector<float> a = RandomVector(rng, m * k);
  std::vector<std::vector<float>> bs;
  for (int i = 0; i < calls; ++i) bs.push_back(RandomVector(rng, k * n));
  for (CpuIsa isa : SupportedIsas()) {
    SCOPED_TRACE(absl::StrCat("isa=", CpuIsaName(isa)));
    GemmOptions options;
    options.isa = isa;
    SgemmPackedA packed;
    packed.Pack(false, m, k, a.data(), k, options);
    std::vector<std::vector<float>> got(calls, std::vector<float>(m * n));
    std::vector<std::thread> threads;
    for (int i = 0; i < calls; ++i) {
      threads.emplace_back([&, i] { Sgemm(packed, false, n, 1.0f, bs[i].data(), n, 0.0f, got[i].data(), n, options); });
    }
    for (std::thread& t : threads) t.join();
    for (int i = 0; i < calls; ++i) {
      std::vector<float> want(m * n);
      Sgemm(false, false, m, n, k, 1.0f, a.data(), k, bs[i].data(), n, 0.0f, want.data(), n, options);
      EXPECT_TRUE(got[i] == want) << "call " << i;
    }
  }
}

// Few columns (2n <= nr) and enough rows run as C^T = op(B)^T op(A)^T (gemm.cc): against the
// triple loop, and bitwise equal to the blocked path on a caller-packed B (but for a plain A,
// whose C^T may run as dot products), with a bias and ReLU, beta 0 and not, every transpose combination
// and thread split.
TEST(SgemmTest, FewColumnsRunTransposedWithTheSameBits) {
  uint32_t seed = 7000;
  for (CpuIsa isa : SupportedIsas()) {
    for (int64_t m : {int64_t{28}, int64_t{64}, int64_t{101}}) {
      for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{10}, int64_t{16}}) {
        for (int64_t k : {int64_t{1}, int64_t{256}, int64_t{300}}) {
          for (int t = 0; t < 4; ++t) {
            const bool trans_a = t & 1, trans_b = t & 2;
            const float beta = (m + n + k + t) % 2 == 0 ? 0.0f : 0.5f;
            SCOPED_TRACE(absl::StrCat("isa=", CpuIsaName(isa), " m=", m, " n=", n, " k=", k, " trans=", t));
            std::mt19937 rng(seed++);
            const std::vector<float> a = RandomVector(rng, m * k), b = RandomVector(rng, k * n);
            const std::vector<float> c0 = RandomVector(rng, m * n), bias = RandomVector(rng, n);
            GemmOptions options;
            options.isa = isa;
            options.epilogue.bias = bias.data();
            options.epilogue.activation = GemmActivation::kRelu;
            const int64_t lda = trans_a ? m : k, ldb = trans_b ? k : n;
            std::vector<std::vector<float>> results;
            for (int chunks : {1, 3}) {
              if (chunks > 1) options.parallel_for = ThreadedParallelFor(chunks);
              std::vector<float> c = c0;
              Sgemm(trans_a, trans_b, m, n, k, 1.25f, a.data(), lda, b.data(), ldb, beta, c.data(), n, options);
              results.push_back(std::move(c));
            }
            EXPECT_TRUE(results[1] == results[0]) << "the thread split changed the bits";
            options.parallel_for = nullptr;
            std::vector<float> blocked = c0;
            RunEntry(Entry::kBPacker, trans_a, trans_b, m, n, k, 1.25f, a.data(), lda, b.data(), ldb, beta,
                     blocked.data(), n, options);
            // (With a plain A, C^T's few rows run against A's rows as dot products
            // (gemm_dot_simd.h), which sum in another order: one row at any depth, more from
            // a depth of 64, at the ISAs that have them.)
            const bool dots = !trans_a && isa != CpuIsa::kScalar && (n == 1 || k >= 64);
            if (!dots) {
              EXPECT_TRUE(blocked == results[0]) << "differs from the blocked path";
            }
            for (int64_t i = 0; i < m; ++i) {
              for (int64_t j = 0; j < n; ++j) {
                double want = beta * c0[i * n + j] + bias[j];
                for (int64_t p = 0; p < k; ++p) {
                  want += 1.25 * (trans_a ? a[p * m + i] : a[i * k + p]) * (trans_b ? b[j * k + p] : b[p * n + j]);
                }
                ASSERT_NEAR(results[0][i * n + j], std::max(0.0, want), 1e-4 * (1 + std::abs(want))) << i << "," << j;
              }
            }
          }
        }
      }
    }
  }
}

// One row of C (M = 1) with B in memory runs as a GEMV (gemv_simd.h): against the
// triple loop over column counts around every vector block (1, 15-17, 63-65, 1000, and
// 2100: past the 2048 columns one pass over B's rows covers) and
// depths around the vector width and past one depth block (300, 1280), with alpha,
// beta, padded strides, a transposed or packed A; bitwise equal at every thread split;
// and with a plain B bitwise equal to the blocked path (a caller-packed B).
TEST(SgemvTest, OneRowAgainstTripleLoopBlockedPathAndSplits) {
  const int64_t columns[] = {1, 15, 16, 17, 63, 64, 65, 1000, 2100};
  const int64_t depths[] = {1, 15, 17, 33, 300, 1280};
  for (CpuIsa isa : SupportedIsas()) {
    uint32_t seed = 6000;
    for (int t = 0; t < 4; ++t) {
      const bool trans_a = t & 1, trans_b = t & 2;
      for (int64_t n : columns) {
        for (int64_t k : depths) {
          const float beta = (n + k) % 2 == 0 ? 0.0f : 0.5f;
          const Entry entry = (n + k + t) % 3 == 0 ? Entry::kPackedA : Entry::kPlain;
          CheckSgemm({trans_a, trans_b, 1, n, k, 1.5f, beta, (n + k) % 4, entry}, isa, seed++);
        }
      }
    }
    for (int64_t n : {int64_t{17}, int64_t{1000}, int64_t{2100}}) {
      for (int64_t k : {int64_t{33}, int64_t{1280}}) {
        for (int t = 0; t < 4; ++t) {
          SCOPED_TRACE(absl::StrCat("isa=", CpuIsaName(isa), " n=", n, " k=", k, " trans=", t));
          const bool trans_a = t & 1, trans_b = t & 2;
          std::mt19937 rng(seed++);
          const std::vector<float> a = RandomVector(rng, k), b = RandomVector(rng, k * n), c0 = RandomVector(rng, n);
          const std::vector<float> bias = RandomVector(rng, n);
          std::vector<std::vector<float>> results;
          for (int chunks : {1, 2, 3, 1000}) {
            GemmOptions options;
            options.isa = isa;
            options.epilogue.bias = bias.data();
            options.epilogue.activation = GemmActivation::kRelu;
            if (chunks > 1) options.parallel_for = ThreadedParallelFor(chunks);
            std::vector<float> c = c0;
            Sgemm(trans_a, trans_b, 1, n, k, 1.5f, a.data(), trans_a ? 1 : k, b.data(), trans_b ? k : n, 0.25f,
                  c.data(), n, options);
            results.push_back(std::move(c));
          }
          for (size_t r = 1; r < results.size(); ++r) EXPECT_TRUE(results[r] == results[0]) << "split " << r;
          if (!trans_b) {
            GemmOptions options;
            options.isa = isa;
            options.epilogue.bias = bias.data();
            options.epilogue.activation = GemmActivation::kRelu;
            std::vector<float> blocked = c0;
            RunEntry(Entry::kBPacker, trans_a, false, 1, n, k, 1.5f, a.data(), trans_a ? 1 : k, b.data(), n, 0.25f,
                     blocked.data(), n, options);
            EXPECT_TRUE(blocked == results[0]) << "the GEMV differs from the blocked path on a plain B";
          }
        }
      }
    }
  }
}

// A few rows of C (up to 16) against a transposed B run as dot products along B's rows
// (gemm_dot_simd.h), at a depth of 64 or more (one row at any depth): against the triple
// loop around every block edge (rows 1-3, 16; columns around the 4- and 8-column blocks
// and the 64-column task unit), depths around the vector widths, with alpha, beta,
// padded strides, a transposed or packed A; and every row bitwise the same whatever
// the thread split and whatever other rows share the product (batch invariance: row i
// of an m-row product is the one-row product of A's row i).
TEST(SgemmDotTest, FewRowsAgainstTransposedBAgainstTripleLoopSplitsAndSingleRows) {
  const int64_t rows[] = {1, 2, 3, 16};
  const int64_t columns[] = {1, 3, 4, 7, 8, 9, 17, 64, 130};
  const int64_t depths[] = {64, 65, 79, 300};
  for (CpuIsa isa : SupportedIsas()) {
    uint32_t seed = 9000;
    for (int64_t m : rows) {
      for (int64_t n : columns) {
        for (int64_t k : depths) {
          const bool trans_a = (m + n + k) % 2 == 1;
          const float beta = (n + k) % 3 == 0 ? 0.0f : 0.5f;
          const Entry entry = (m + n + k) % 5 == 0 ? Entry::kPackedA : Entry::kPlain;
          CheckSgemm({trans_a, true, m, n, k, 1.5f, beta, (n + k) % 4, entry}, isa, seed++);
        }
      }
    }
    for (int64_t m : {int64_t{3}, int64_t{16}}) {
      for (int64_t k : {int64_t{64}, int64_t{100}}) {
        for (bool trans_a : {false, true}) {
          SCOPED_TRACE(absl::StrCat("isa=", CpuIsaName(isa), " m=", m, " k=", k, " trans_a=", trans_a));
          const int64_t n = 200, lda = trans_a ? m : k;
          std::mt19937 rng(seed++);
          const std::vector<float> a = RandomVector(rng, m * k), b = RandomVector(rng, n * k);
          const std::vector<float> c0 = RandomVector(rng, m * n), bias = RandomVector(rng, n);
          GemmOptions options;
          options.isa = isa;
          options.epilogue.bias = bias.data();
          std::vector<std::vector<float>> results;
          for (int chunks : {1, 2, 3, 1000}) {
            options.parallel_for = chunks > 1 ? ThreadedParallelFor(chunks) : nullptr;
            std::vector<float> c = c0;
            Sgemm(trans_a, true, m, n, k, 0.75f, a.data(), lda, b.data(), k, 0.25f, c.data(), n, options);
            results.push_back(std::move(c));
          }
          for (size_t r = 1; r < results.size(); ++r) EXPECT_TRUE(results[r] == results[0]) << "split " << r;
          options.parallel_for = nullptr;
          for (int64_t i = 0; i < m; ++i) {
            std::vector<float> row_a(k);
            for (int64_t p = 0; p < k; ++p) row_a[p] = trans_a ? a[p * lda + i] : a[i * lda + p];
            std::vector<float> row(c0.begin() + i * n, c0.begin() + (i + 1) * n);
            Sgemm(false, true, 1, n, k, 0.75f, row_a.data(), k, b.data(), k, 0.25f, row.data(), n, options);
            EXPECT_TRUE(std::equal(row.begin(), row.end(), results[0].begin() + i * n))
                << "row " << i << " differs from the one-row product";
          }
        }
      }
    }
  }
}

// --- The registered cpu kernels against the reference ones. ---

class CpuMatMulKernelTest : public testing::CpuIsaTest {};

TEST_P(CpuMatMulKernelTest, MatMulShapes) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{17, 33}, {33, 9}},     {{33}, {33, 40}},    {{2, 33}, {33}},  {{33}, {33}},     {{2, 1, 5, 7}, {3, 7, 4}},
      {{4, 20, 30}, {30, 50}}, {{1, 3}, {5, 3, 2}}, {{0, 4}, {4, 6}}, {{3, 0}, {0, 5}}, {{130, 70}, {70, 90}},
  };
  uint32_t seed = 900;
  for (const auto& [sa, sb] : shapes) {
    SCOPED_TRACE(absl::StrCat("seed=", seed, " A=", sa.ToString(), " B=", sb.ToString()));
    std::mt19937 rng(seed++);
    testing::ExpectCpuMatchesReference("MatMul", {testing::RandomF32(rng, sa), testing::RandomF32(rng, sb)}, {}, 1e-4);
  }
}

TEST_P(CpuMatMulKernelTest, GemmAttributesAndC) {
  struct GemmCase {
    Shape a, b;
    std::optional<Shape> c;
    int trans_a, trans_b;
    float alpha, beta;
  };
  const GemmCase cases[] = {
      {{20, 30}, {30, 40}, std::nullopt, 0, 0, 1.0f, 1.0f}, {{30, 20}, {30, 40}, Shape{20, 40}, 1, 0, 0.5f, 2.0f},
      {{20, 30}, {40, 30}, Shape{40}, 0, 1, 1.0f, 1.0f},    {{30, 20}, {40, 30}, Shape{1, 40}, 1, 1, -1.0f, 0.5f},
      {{20, 30}, {30, 40}, Shape{20, 1}, 0, 0, 1.0f, 3.0f}, {{20, 30}, {30, 40}, Shape{}, 0, 0, 2.0f, -1.0f},
      {{20, 0}, {0, 40}, Shape{20, 40}, 0, 0, 1.0f, 0.5f},  {{20, 30}, {30, 40}, Shape{20, 40}, 0, 0, 1.0f, 0.0f},
  };
  uint32_t seed = 1000;
  for (const GemmCase& gc : cases) {
    SCOPED_TRACE(absl::StrCat("seed=", seed, " A=", gc.a.ToString(), " B=", gc.b.ToString(),
                              " C=", gc.c ? gc.c->ToString() : "none", " transA=", gc.trans_a, " transB=", gc.trans_b,
                              " alpha=", gc.alpha, " beta=", gc.beta));
    std::mt19937 rng(seed++);
    std::vector<std::optional<Tensor>> inputs = {testing::RandomF32(rng, gc.a), testing::RandomF32(rng, gc.b)};
    if (gc.c) inputs.push_back(testing::RandomF32(rng, *gc.c));
    const AttrMap attrs = {{"transA", AttrValue::Int(gc.trans_a)},
                           {"transB", AttrValue::Int(gc.trans_b)},
                           {"alpha", AttrValue::Float(gc.alpha)},
                           {"beta", AttrValue::Float(gc.beta)}};
    testing::ExpectCpuMatchesReference("Gemm", inputs, attrs, 1e-4);
  }
}

TSR_INSTANTIATE_FOR_ALL_ISAS(CpuMatMulKernelTest);

}  // namespace
}  // namespace tsr
