// The GEMM driver: picks the micro-kernel for the ISA, splits C over the
// ParallelForFn, and runs the BLIS loop nest on each part:
//   jc (nc columns) -> pc (kc depth; pack B block) -> ic (mc rows; pack A block)
//     -> jr (nr) -> ir (mr) micro-kernel,
// then the epilogue on each finished mc x nc block while it is still in cache.
// A pre-packed A (SgemmPackedA) replaces the A packing by pointer arithmetic into
// its blocks, a GemmBPacker the B packing by a call to it. When C is split over M,
// B is packed once (split over the threads) into a buffer every task reads, instead
// of once per task. A plain row-major B that nobody packed is packed by the
// micro-kernel itself as it first reads each strip (MicroKernelPackBFn). A plain A of
// at most one mc block, for at most 1024 columns of C, is not packed at all: the
// micro-kernel reads its rows in place (MicroKernelRowsAFn). Also holds the portable
// scalar micro-kernel.
#include "kernels/cpu/gemm.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "kernels/cpu/aligned_buffer.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/gemm_microkernel.h"
#include "kernels/cpu/transpose.h"

namespace tsr {
namespace gemm_internal {

namespace {

constexpr int kScalarMr = 4;
constexpr int kScalarNr = 8;

void KernelScalar(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int m_eff, int n_eff, float alpha,
                  float beta, bool first) {
  float acc[kScalarMr][kScalarNr] = {};
  for (int64_t p = 0; p < kc; ++p) {
    for (int i = 0; i < kScalarMr; ++i) {
      for (int j = 0; j < kScalarNr; ++j) acc[i][j] += a[i] * b[j];
    }
    a += kScalarMr;
    b += kScalarNr;
  }
  for (int i = 0; i < m_eff; ++i) {
    for (int j = 0; j < n_eff; ++j) {
      float& out = c[i * ldc + j];
      if (!first) {
        out += alpha * acc[i][j];
      } else if (beta == 0.0f) {
        out = alpha * acc[i][j];
      } else {
        out = beta * out + alpha * acc[i][j];
      }
    }
  }
}

// The epilogue's elementwise part on one row, portably (EpilogueRowFn; the per-ISA
// ones in gemm_epilogue_simd.h give the same bits).
void EpilogueRowScalar(float* c, int64_t n, const float* bias, const float* row_bias, bool relu,
                       const float* residual) {
  for (int64_t j = 0; j < n; ++j) {
    float x = c[j];
    if (bias != nullptr) x += bias[j];
    if (row_bias != nullptr) x += *row_bias;
    if (relu) x = x > 0.0f ? x : 0.0f;
    if (residual != nullptr) x += residual[j];
    c[j] = x;
  }
}

}  // namespace

const MicroKernel& ScalarMicroKernel() {
  static constexpr MicroKernel kKernel{KernelScalar,
                                       kScalarMr,
                                       kScalarNr,
                                       /*mc=*/128,
                                       /*kc=*/256,
                                       /*nc=*/4096,
                                       /*pack_a_strip=*/nullptr,
                                       /*fn_pack_b=*/nullptr,
                                       /*gemv=*/nullptr,
                                       EpilogueRowScalar};
  return kKernel;
}

}  // namespace gemm_internal

namespace {

using gemm_internal::MicroKernel;

const MicroKernel& SelectMicroKernel(CpuIsa isa) {
  switch (SupportedCpuIsa(isa)) {
    case CpuIsa::kAvx512:
      return gemm_internal::Avx512MicroKernel();
    case CpuIsa::kAvx2:
      return gemm_internal::Avx2MicroKernel();
    case CpuIsa::kScalar:
      break;
  }
  return gemm_internal::ScalarMicroKernel();
}

struct Problem {
  bool trans_a, trans_b;
  int64_t k;
  float alpha;
  const float* a;
  int64_t lda;
  const float* b;
  int64_t ldb;
  float beta;
  float* c;
  int64_t ldc;
  const GemmEpilogue* epilogue;
  // Set when A is pre-packed: its kc blocks, each m_padded rows of mr-row strips.
  const float* packed_a = nullptr;
  int64_t packed_m_padded = 0;
  const GemmBPacker* b_packer = nullptr;  // set when the caller packs B
  // Set when B is packed once for all tasks: its kc blocks, each n_padded columns of
  // nr-column strips.
  const float* packed_b = nullptr;
  int64_t packed_n_padded = 0;
  // Set when the micro-kernel reads A's rows in place instead of packed blocks
  // (ReadsAInPlace; decided once per product, whatever the split).
  bool a_in_place = false;
};

// Packs rows [row0, row0 + mc) x depth [p0, p0 + kc) of op(A) into kMr-row strips,
// each kc x kMr (k-major), the last one zero padded. The tile sizes are template
// parameters so the full-strip copies compile to fixed-length vector moves.
template <int kMr>
void PackAStrips(const Problem& pr, int64_t row0, int64_t p0, int64_t mc, int64_t kc, float* dst) {
  const float* rows[kMr];
  for (int64_t ir = 0; ir < mc; ir += kMr) {
    const int n_rows = static_cast<int>(std::min<int64_t>(kMr, mc - ir));
    float* d = dst + ir * kc;
    if (!pr.trans_a) {
      for (int i = 0; i < kMr; ++i) rows[i] = pr.a + (row0 + ir + std::min(i, n_rows - 1)) * pr.lda + p0;
      if (n_rows == kMr) {
        for (int64_t p = 0; p < kc; ++p, d += kMr) {
          for (int i = 0; i < kMr; ++i) d[i] = rows[i][p];
        }
      } else {
        for (int64_t p = 0; p < kc; ++p, d += kMr) {
          for (int i = 0; i < kMr; ++i) d[i] = i < n_rows ? rows[i][p] : 0.0f;
        }
      }
    } else {
      for (int64_t p = 0; p < kc; ++p, d += kMr) {
        const float* src = pr.a + (p0 + p) * pr.lda + row0 + ir;
        if (n_rows == kMr) {
          std::memcpy(d, src, sizeof(float) * kMr);
        } else {
          for (int i = 0; i < kMr; ++i) d[i] = i < n_rows ? src[i] : 0.0f;
        }
      }
    }
  }
}

// Packs depth [p0, p0 + kc) x columns [col0, col0 + nc) of op(B) into kNr-column
// strips, each kc x kNr (k-major), the last one zero padded.
template <int kNr>
void PackBStrips(const Problem& pr, const MicroKernel& mk, int64_t p0, int64_t col0, int64_t kc, int64_t nc,
                 float* dst) {
  if (!pr.trans_b) {
    // Row by row: each row of the block is read as one contiguous run, which the
    // hardware prefetchers stream. Strip by strip would touch one new cache line per
    // row and wait for each (B is usually in L3 or memory).
    const int64_t full = nc / kNr * kNr;
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = pr.b + (p0 + p) * pr.ldb + col0;
      float* d = dst + p * kNr;
      for (int64_t jr = 0; jr < full; jr += kNr) {
        std::memcpy(d + jr * kc, src + jr, sizeof(float) * kNr);  // fixed size: inlined vector moves
      }
      if (full < nc) {
        for (int j = 0; j < kNr; ++j) d[full * kc + j] = j < nc - full ? src[full + j] : 0.0f;
      }
    }
    return;
  }
  const float* cols[kNr];
  for (int64_t jr = 0; jr < nc; jr += kNr) {
    const int n_cols = static_cast<int>(std::min<int64_t>(kNr, nc - jr));
    float* d = dst + jr * kc;
    if (mk.pack_b_transposed_strip != nullptr) {
      mk.pack_b_transposed_strip(pr.b + (col0 + jr) * pr.ldb + p0, pr.ldb, n_cols, kc, d);
      continue;
    }
    for (int j = 0; j < kNr; ++j) cols[j] = pr.b + (col0 + jr + std::min(j, n_cols - 1)) * pr.ldb + p0;
    for (int64_t p = 0; p < kc; ++p, d += kNr) {
      for (int j = 0; j < kNr; ++j) d[j] = j < n_cols ? cols[j][p] : 0.0f;
    }
  }
}

void PackAGeneric(const Problem& pr, int64_t row0, int64_t p0, int64_t mc, int64_t kc, int mr, float* dst) {
  switch (mr) {
    case 4:
      return PackAStrips<4>(pr, row0, p0, mc, kc, dst);
    case 6:
      return PackAStrips<6>(pr, row0, p0, mc, kc, dst);
    case 14:
      return PackAStrips<14>(pr, row0, p0, mc, kc, dst);
  }
  std::abort();  // a micro-kernel with an mr not listed here
}

// PackAGeneric, or the micro-kernel's own strip packing of a row-major A where it has
// one (the last, partial strip too: 64 rows are 4 strips of 14 and one of 8).
void PackA(const Problem& pr, const MicroKernel& mk, int64_t row0, int64_t p0, int64_t mc, int64_t kc, float* dst) {
  if (mk.pack_a_strip == nullptr || pr.trans_a) return PackAGeneric(pr, row0, p0, mc, kc, mk.mr, dst);
  for (int64_t done = 0; done < mc; done += mk.mr) {
    const int rows = static_cast<int>(std::min<int64_t>(mk.mr, mc - done));
    mk.pack_a_strip(pr.a + (row0 + done) * pr.lda + p0, pr.lda, rows, kc, dst + done * kc);
  }
}

// A block of A as the micro-kernels read it: packed mr-row strips (lda == 0; strip s at
// data + s * mr * kc), or A's rows in place (row i at data + i * lda).
struct ABlockView {
  const float* data;
  int64_t lda;
};

// The mc x kc block of A for rows [row0, row0 + mc), depth [p0, p0 + kc): A itself when
// pr.a_in_place, found in the pre-packed A (row0 is a multiple of mr, p0 of the kc
// block), or packed into `buffer`.
ABlockView ABlock(const Problem& pr, const MicroKernel& mk, int64_t row0, int64_t p0, int64_t mc, int64_t kc,
                  float* buffer) {
  if (pr.a_in_place) return {pr.a + row0 * pr.lda + p0, pr.lda};
  if (pr.packed_a != nullptr) return {pr.packed_a + p0 * pr.packed_m_padded + row0 * kc, 0};
  PackA(pr, mk, row0, p0, mc, kc, buffer);
  return {buffer, 0};
}

void PackB(const Problem& pr, const MicroKernel& mk, int64_t p0, int64_t col0, int64_t kc, int64_t nc, float* dst) {
  const int nr = mk.nr;
  if (pr.b_packer != nullptr) return pr.b_packer->Pack(p0, kc, col0, nc, nr, dst);
  switch (nr) {
    case 8:
      return PackBStrips<8>(pr, mk, p0, col0, kc, nc, dst);
    case 16:
      return PackBStrips<16>(pr, mk, p0, col0, kc, nc, dst);
    case 32:
      return PackBStrips<32>(pr, mk, p0, col0, kc, nc, dst);
  }
  std::abort();  // a micro-kernel with an nr not listed here
}

// The kc x nc block of B for depth [p0, p0 + kc), columns [col0, col0 + nc): packed
// into `buffer`, or found in the shared packed B (col0 a multiple of nr).
const float* BBlock(const Problem& pr, const MicroKernel& mk, int64_t p0, int64_t col0, int64_t kc, int64_t nc,
                    float* buffer) {
  if (pr.packed_b != nullptr) return pr.packed_b + p0 * pr.packed_n_padded + col0 * kc;
  PackB(pr, mk, p0, col0, kc, nc, buffer);
  return buffer;
}

// Exact GELU: 0.5 * x * (1 + erf(x / sqrt(2))).
float Gelu(float x) { return 0.5f * x * (1.0f + std::erf(x * static_cast<float>(M_SQRT1_2))); }

void ApplyEpilogue(const Problem& pr, const MicroKernel& mk, int64_t row0, int64_t rows, int64_t col0, int64_t cols) {
  const GemmEpilogue& ep = *pr.epilogue;
  const bool gelu = ep.activation == GemmActivation::kGelu;
  for (int64_t i = row0; i < row0 + rows; ++i) {
    float* c = pr.c + i * pr.ldc;
    const float* r = ep.residual != nullptr ? ep.residual + i * ep.ldr : nullptr;
    // The adds and ReLU per ISA; GELU, and the residual after it, here.
    mk.epilogue_row(c + col0, cols, ep.bias != nullptr ? ep.bias + col0 : nullptr,
                    ep.row_bias != nullptr ? ep.row_bias + i : nullptr, ep.activation == GemmActivation::kRelu,
                    r != nullptr && !gelu ? r + col0 : nullptr);
    if (!gelu) continue;
    for (int64_t j = col0; j < col0 + cols; ++j) c[j] = Gelu(c[j]);
    if (r != nullptr) {
      for (int64_t j = col0; j < col0 + cols; ++j) c[j] += r[j];
    }
  }
  if (ep.block != nullptr) (*ep.block)(row0, rows, col0, cols);
}

// nc when M fits one mc block: a multiple of every nr; kc * nc * 4 <= 384 KiB at the
// micro-kernel's own kc, up to 1.1 MiB at BlockedFor's deepest (768): that block is
// not reused across mc blocks, and each strip is read back while it is still in L2.
constexpr int64_t kSmallMNc = 384;
// When M fits one mc block and all of A packed takes at most this (512 KiB: half of
// Zen 4's L2), A is packed once and the C block kept in L2 over the kc blocks.
constexpr int64_t kMaxL2PackedAFloats = int64_t{1} << 17;

// Depths above the micro-kernel's kc run in even kc blocks of at most this many steps.
constexpr int64_t kMaxDepthBlock = 768;

// `mk` with the cache blocks for depth k: beyond the micro-kernel's own kc, the depth
// splits into the fewest even blocks of at most kMaxDepthBlock, so that each tile of C
// is loaded and stored once per block -- fewer times -- and the rows of an A block
// shrink to keep it within kMaxL2PackedAFloats. At kc 192, 128x3072x768 stored C four
// times, its rows 12 KiB apart in the same two L1 sets, each pass reloading them from
// L2; the B micro-panel (up to 96 KiB) then streams from L2, which keeps pace. Medians
// of 30 interleaved rounds in one process, kc 192 -> these blocks (pre-packed B):
// 128x3072x768 1 thread 87 -> 92 GFLOP/s, 2 threads 181 -> 188; 1024^3 87 -> 94 and
// 183 -> 194; 2048^3 (3 x 683) 91 -> 97 and 180 -> 195; 64x256x784 (2 x 392) 108 -> 112.
// Blocks of 1024 ran 128x768x3072 9% slower. Every entry (RunGemm, the packings) takes
// its blocks from here, so packed operands and products agree on them.
MicroKernel BlockedFor(const MicroKernel& mk, int64_t k) {
  MicroKernel blocked = mk;
  if (k > mk.kc) {
    const int64_t blocks = (k + kMaxDepthBlock - 1) / kMaxDepthBlock;
    const int64_t kc = (k + blocks - 1) / blocks;
    blocked.kc = static_cast<int>(kc);
    blocked.mc = static_cast<int>(std::clamp<int64_t>(kMaxL2PackedAFloats / kc / mk.mr * mk.mr, mk.mr, mk.mc));
  }
  return blocked;
}

// Whether GemmRegion packs B inside the micro-kernel (MicroKernelPackBFn): a plain
// row-major B that nobody has packed yet.
bool FusesBPacking(const Problem& pr, const MicroKernel& mk) {
  return mk.fn_pack_b != nullptr && pr.packed_b == nullptr && pr.b_packer == nullptr && !pr.trans_b;
}

// Runs the micro-kernel over an mc x nc block of C from A and packed B blocks. When
// b_fill is set (then b_pack == b_fill), B is not packed yet: each nr-column strip of
// it (depth [pc, pc + kc)) is packed into b_fill by the strip's first micro-tile (a
// partial last strip by PackB).
void MacroKernel(const Problem& pr, const MicroKernel& mk, ABlockView a, const float* b_pack, float* b_fill, int64_t pc,
                 int64_t ic, int64_t mc, int64_t jc, int64_t nc, int64_t kc, bool first) {
  // The micro-tile of rows [ir, ir + m_eff) of the block and columns [jr, jr + n_eff):
  // A packed or in place; B a packed strip (b_dst null) or rows of stride ldb that the
  // micro-kernel packs into b_dst as it reads them.
  const auto tile = [&](int64_t ir, int64_t jr, int m_eff, int n_eff, const float* b, int64_t ldb, float* b_dst) {
    float* c = pr.c + (ic + ir) * pr.ldc + jc + jr;
    if (a.lda != 0) {
      mk.fn_rows_a(kc, a.data + ir * a.lda, a.lda, b, ldb, b_dst, c, pr.ldc, m_eff, n_eff, pr.alpha, pr.beta, first);
    } else if (b_dst != nullptr) {
      mk.fn_pack_b(kc, a.data + ir * kc, b, ldb, b_dst, c, pr.ldc, m_eff, n_eff, pr.alpha, pr.beta, first);
    } else {
      mk.fn(kc, a.data + ir * kc, b, c, pr.ldc, m_eff, n_eff, pr.alpha, pr.beta, first);
    }
  };
  for (int64_t jr = 0; jr < nc; jr += mk.nr) {
    const int n_eff = static_cast<int>(std::min<int64_t>(mk.nr, nc - jr));
    const float* b_strip = b_pack + jr * kc;
    int64_t ir = 0;
    if (b_fill != nullptr && n_eff == mk.nr) {
      tile(0, jr, static_cast<int>(std::min<int64_t>(mk.mr, mc)), n_eff, pr.b + pc * pr.ldb + jc + jr, pr.ldb,
           b_fill + jr * kc);
      ir = mk.mr;
    } else if (b_fill != nullptr) {
      PackB(pr, mk, pc, jc + jr, kc, n_eff, b_fill + jr * kc);
    }
    for (; ir < mc; ir += mk.mr) {
      tile(ir, jr, static_cast<int>(std::min<int64_t>(mk.mr, mc - ir)), n_eff, b_strip, 0, nullptr);
    }
  }
}

// The sequential BLIS loop nest over C rows [m0, m1) x columns [n0, n1). Every
// element of C sees the same kc blocks in the same order whatever the region.
void GemmRegion(const Problem& pr, const MicroKernel& mk, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  thread_local AlignedFloatBuffer a_buffer, b_buffer;
  const int64_t kc_max = std::min<int64_t>(mk.kc, pr.k);
  const int64_t mc_max = std::min<int64_t>(mk.mc, (m1 - m0 + mk.mr - 1) / mk.mr * mk.mr);
  // With a single mc block of rows the packed B block is not reused across ic, so it
  // need not be large: keep it L2-sized (it is then read back from L2, not L3).
  const bool single_m_block = m1 - m0 <= mk.mc;
  const int64_t m_padded = (m1 - m0 + mk.mr - 1) / mk.mr * mk.mr;
  const int64_t nc_block = single_m_block ? std::min<int64_t>(mk.nc, kSmallMNc) : mk.nc;
  const int64_t nc_max = std::min<int64_t>(nc_block, (n1 - n0 + mk.nr - 1) / mk.nr * mk.nr);
  float* b_pack = pr.packed_b != nullptr ? nullptr : b_buffer.Get(nc_max * kc_max);
  const bool fuse_b = FusesBPacking(pr, mk);
  const bool epilogue = !pr.epilogue->empty();
  if (single_m_block && pr.k > mk.kc && n1 - n0 > nc_block && m_padded * pr.k <= kMaxL2PackedAFloats) {
    // All of A, packed once, fits in L2: jc outermost, so that each mc x nc block of C
    // also stays in L2 over the kc blocks instead of being re-read from L3 per block.
    float* a_all = pr.packed_a != nullptr || pr.a_in_place ? nullptr : a_buffer.Get(m_padded * pr.k);
    for (int64_t jc = n0; jc < n1; jc += nc_block) {
      const int64_t nc = std::min<int64_t>(nc_block, n1 - jc);
      for (int64_t pc = 0; pc < pr.k; pc += mk.kc) {
        const int64_t kc = std::min<int64_t>(mk.kc, pr.k - pc);
        // Packed on the first jc block, read back on the others.
        float* a_slot = a_all != nullptr ? a_all + pc * m_padded : nullptr;
        const ABlockView a_block =
            a_slot == nullptr || jc == n0 ? ABlock(pr, mk, m0, pc, m1 - m0, kc, a_slot) : ABlockView{a_slot, 0};
        const float* b_block = fuse_b ? b_pack : BBlock(pr, mk, pc, jc, kc, nc, b_pack);
        MacroKernel(pr, mk, a_block, b_block, fuse_b ? b_pack : nullptr, pc, m0, m1 - m0, jc, nc, kc, pc == 0);
        if (pc + kc == pr.k && epilogue) ApplyEpilogue(pr, mk, m0, m1 - m0, jc, nc);
      }
    }
    return;
  }
  float* a_pack = pr.packed_a != nullptr || pr.a_in_place ? nullptr : a_buffer.Get(mc_max * kc_max);
  if (single_m_block) {
    // pc outermost: the A block is packed once per kc block, not once per nc block.
    for (int64_t pc = 0; pc < pr.k; pc += mk.kc) {
      const int64_t kc = std::min<int64_t>(mk.kc, pr.k - pc);
      const ABlockView a_block = ABlock(pr, mk, m0, pc, m1 - m0, kc, a_pack);
      for (int64_t jc = n0; jc < n1; jc += nc_block) {
        const int64_t nc = std::min<int64_t>(nc_block, n1 - jc);
        const float* b_block = fuse_b ? b_pack : BBlock(pr, mk, pc, jc, kc, nc, b_pack);
        MacroKernel(pr, mk, a_block, b_block, fuse_b ? b_pack : nullptr, pc, m0, m1 - m0, jc, nc, kc, pc == 0);
        if (pc + kc == pr.k && epilogue) ApplyEpilogue(pr, mk, m0, m1 - m0, jc, nc);
      }
    }
    return;
  }
  for (int64_t jc = n0; jc < n1; jc += nc_block) {
    const int64_t nc = std::min<int64_t>(nc_block, n1 - jc);
    for (int64_t pc = 0; pc < pr.k; pc += mk.kc) {
      const int64_t kc = std::min<int64_t>(mk.kc, pr.k - pc);
      // Fused, B is packed while the first mc block of rows runs; the others reuse it.
      const float* b_block = fuse_b ? b_pack : BBlock(pr, mk, pc, jc, kc, nc, b_pack);
      for (int64_t ic = m0; ic < m1; ic += mk.mc) {
        const int64_t mc = std::min<int64_t>(mk.mc, m1 - ic);
        const ABlockView a_block = ABlock(pr, mk, ic, pc, mc, kc, a_pack);
        MacroKernel(pr, mk, a_block, b_block, fuse_b && ic == m0 ? b_pack : nullptr, pc, ic, mc, jc, nc, kc, pc == 0);
        if (pc + kc == pr.k && epilogue) ApplyEpilogue(pr, mk, ic, mc, jc, nc);
      }
    }
  }
}

// Up to this many columns of C, A is read in place (ReadsAInPlace). Packing costs m * k
// copies against 2 * m * n * k flops, so its share falls with n, while reading 14 rows
// in place touches 14 cache lines per step of a strip instead of one: 64x256x784 and
// 64x512x300 ran 7% faster in place, 128x768x768 the same, 128x2304x768 and
// 128x3072x768 3-5% slower (pre-packed B, one thread). At two threads in place also
// saves the shared packing pass and its join: 64x256x256 0.56 of the packed time.
constexpr int64_t kMaxInPlaceAColumns = 1024;

// Whether the micro-kernel reads A's rows in place (MicroKernelRowsAFn) instead of
// packed blocks: a plain row-major A within one mc block (packed, each kc block would be
// copied once for all of C's few columns), and a row stride that is not a multiple of
// 512 floats (2 KiB: 7 or all 14 rows of a strip would share the same few L1 sets).
bool ReadsAInPlace(const Problem& pr, const MicroKernel& mk, int64_t m, int64_t n) {
  return mk.fn_rows_a != nullptr && pr.a != nullptr && pr.packed_a == nullptr && !pr.trans_a && m <= mk.mc &&
         n <= kMaxInPlaceAColumns && pr.lda % 512 != 0;
}

// C = beta * C (+ epilogue) when there is no product to add (k == 0 or alpha == 0).
void ScaleOnly(const Problem& pr, const MicroKernel& mk, int64_t m, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    float* c = pr.c + i * pr.ldc;
    for (int64_t j = 0; j < n; ++j) c[j] = pr.beta == 0.0f ? 0.0f : pr.beta * c[j];
  }
  if (!pr.epilogue->empty()) ApplyEpilogue(pr, mk, 0, m, 0, n);
}

// At most this many parallel tasks, each at least this many flops.
constexpr int64_t kMaxTasks = 32;
constexpr int64_t kMinFlopsPerTask = 1 << 21;
// SgemmPackedA::Pack splits its work over threads from this many floats.
constexpr int64_t kMinPackFloatsToSplit = 1 << 16;
// Split over M, B is packed once for all tasks up to this many floats (16 MiB).
constexpr int64_t kMaxSharedPackFloats = int64_t{1} << 22;

// All of op(A)'s m rows packed at dst in the pre-packed layout (each kc block: m_padded
// rows in mr-row strips), split by strips over parallel_for (null: inline). The layout
// does not depend on the split.
void PackAllOfA(const Problem& pr, const MicroKernel& mk, int64_t m, int64_t m_padded, float* dst,
                const ParallelForFn& parallel_for) {
  RunParallelFor(parallel_for, m_padded / mk.mr, 2 * mk.mr * pr.k, [&](int64_t s0, int64_t s1) {
    const int64_t row0 = s0 * mk.mr, rows = std::min(m, s1 * mk.mr) - row0;
    for (int64_t pc = 0; pc < pr.k; pc += mk.kc) {
      const int64_t kc = std::min<int64_t>(mk.kc, pr.k - pc);
      PackA(pr, mk, row0, pc, rows, kc, dst + pc * m_padded + row0 * kc);
    }
  });
}

// The same for op(B)'s n columns: each kc block n_padded columns in nr-column strips.
void PackAllOfB(const Problem& pr, const MicroKernel& mk, int64_t n, int64_t n_padded, float* dst,
                const ParallelForFn& parallel_for) {
  RunParallelFor(parallel_for, n_padded / mk.nr, 2 * mk.nr * pr.k, [&](int64_t s0, int64_t s1) {
    const int64_t col0 = s0 * mk.nr, cols = std::min(n, s1 * mk.nr) - col0;
    for (int64_t pc = 0; pc < pr.k; pc += mk.kc) {
      const int64_t kc = std::min<int64_t>(mk.kc, pr.k - pc);
      PackB(pr, mk, pc, col0, kc, cols, dst + pc * n_padded + col0 * kc);
    }
  });
}

// op(A)'s first m rows, each k contiguous floats (row stride *lda): A itself when it is
// plain, otherwise gathered into `buffer` (A transposed, or packed) -- for the GEMV and
// the dot products, which read A's rows as they lie.
const float* RowsOfA(const Problem& pr, const MicroKernel& mk, int64_t m, AlignedFloatBuffer& buffer, int64_t* lda) {
  const int64_t k = pr.k;
  if (pr.packed_a == nullptr && !pr.trans_a) {
    *lda = pr.lda;
    return pr.a;
  }
  float* rows = buffer.Get(m * k);
  if (pr.trans_a) {
    TransposeBlock(sizeof(float), ActiveCpuIsa(), pr.a, pr.lda, rows, k, /*rows=*/m, /*cols=*/k);
  } else {
    // Element (i, p) of kc block pc: strip i / mr, step p - pc, lane i % mr.
    for (int64_t pc = 0; pc < k; pc += mk.kc) {
      const int64_t kc = std::min<int64_t>(mk.kc, k - pc);
      for (int64_t i = 0; i < m; ++i) {
        const float* strip = pr.packed_a + pc * pr.packed_m_padded + (i - i % mk.mr) * kc + i % mk.mr;
        for (int64_t p = 0; p < kc; ++p) rows[i * k + pc + p] = strip[p * mk.mr];
      }
    }
  }
  *lda = k;
  return rows;
}

// Columns per task of the M = 1 product and of the dot products: a multiple of every
// GEMV and dot block.
constexpr int64_t kGemvColumnsPerUnit = 64;

// C's one row (M = 1) by the micro-kernel's GEMV on a plain B in place, split over the
// columns.
void RunGemv(const Problem& pr, const MicroKernel& mk, int64_t n, const GemmOptions& options) {
  const int64_t k = pr.k;
  AlignedFloatBuffer gathered;
  int64_t lda;
  const float* a = RowsOfA(pr, mk, 1, gathered, &lda);
  const auto columns = [&](int64_t j0, int64_t j1) {
    mk.gemv(k, mk.kc, a, pr.b + j0, pr.ldb, j1 - j0, pr.c + j0, pr.alpha, pr.beta);
    if (!pr.epilogue->empty()) ApplyEpilogue(pr, mk, 0, 1, j0, j1 - j0);
  };
  const int64_t units = (n + kGemvColumnsPerUnit - 1) / kGemvColumnsPerUnit;
  RunParallelFor(options.parallel_for, units, 2 * kGemvColumnsPerUnit * k, [&](int64_t begin, int64_t end) {
    columns(begin * kGemvColumnsPerUnit, std::min(n, end * kGemvColumnsPerUnit));
  });
}

// Few rows of C against a transposed B in memory run as dot products (DotRowsFn): up to
// this many rows, and (beyond one row, where packing B cannot pay) at least this depth.
constexpr int64_t kMaxDotRows = 16;
constexpr int64_t kMinDotDepth = 64;

bool RunsAsDots(const Problem& pr, const MicroKernel& mk, int64_t m) {
  return mk.dot_rows != nullptr && pr.trans_b && pr.b != nullptr && pr.b_packer == nullptr && pr.packed_b == nullptr &&
         (m == 1 || (m <= kMaxDotRows && pr.k >= kMinDotDepth));
}

// C by the micro-kernel's dot products, split over the columns.
void RunDots(const Problem& pr, const MicroKernel& mk, int64_t m, int64_t n, const GemmOptions& options) {
  const int64_t k = pr.k;
  AlignedFloatBuffer gathered;
  int64_t lda;
  const float* a = RowsOfA(pr, mk, m, gathered, &lda);
  const int64_t units = (n + kGemvColumnsPerUnit - 1) / kGemvColumnsPerUnit;
  RunParallelFor(options.parallel_for, units, 2 * kGemvColumnsPerUnit * k * m, [&](int64_t begin, int64_t end) {
    const int64_t j0 = begin * kGemvColumnsPerUnit, j1 = std::min(n, end * kGemvColumnsPerUnit);
    mk.dot_rows(m, k, a, lda, pr.b + j0 * pr.ldb, pr.ldb, j1 - j0, pr.c + j0, pr.ldc, pr.alpha, pr.beta);
    if (!pr.epilogue->empty()) ApplyEpilogue(pr, mk, 0, m, j0, j1 - j0);
  });
}

// Splits C over options.parallel_for and runs GemmRegion on each part.
void RunGemm(const Problem& problem, const MicroKernel& kernel, int64_t m, int64_t n, const GemmOptions& options) {
  Problem pr = problem;
  const MicroKernel mk = BlockedFor(kernel, pr.k);
  if (m <= 0 || n <= 0) return;
  const int64_t k = pr.k;
  if (k <= 0 || pr.alpha == 0.0f) {
    ScaleOnly(pr, mk, m, n);
    return;
  }
  // One row of C and a B in memory: each element of B is used once, so packing it
  // would cost as much as the product. Likewise for a few rows and a transposed B.
  if (RunsAsDots(pr, mk, m)) {
    RunDots(pr, mk, m, n, options);
    return;
  }
  if (m == 1 && mk.gemv != nullptr && !pr.trans_b && pr.b != nullptr && pr.b_packer == nullptr &&
      pr.packed_b == nullptr) {
    RunGemv(pr, mk, n, options);
    return;
  }
  pr.a_in_place = ReadsAInPlace(pr, mk, m, n);
  // Split the larger of M and N: each task packs the whole of the other operand's
  // panel, so this keeps the duplicated packing to the smaller operand.
  const bool split_n = n >= m;
  const int64_t strip = split_n ? mk.nr : mk.mr;
  const int64_t extent = split_n ? n : m;
  const int64_t strips = (extent + strip - 1) / strip;
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const int64_t tasks =
      std::clamp<int64_t>(static_cast<int64_t>(flops / kMinFlopsPerTask), 1, std::min(kMaxTasks, strips));
  if (tasks == 1 || !options.parallel_for) {
    GemmRegion(pr, mk, 0, m, 0, n);
    return;
  }
  const int64_t strips_per_task = (strips + tasks - 1) / tasks;
  const int64_t unit = strips_per_task * strip;
  const int64_t units = (extent + unit - 1) / unit;
  // Split over M, every task would pack the whole of B (for an implicit-GEMM
  // convolution: run the whole im2col); pack it once instead, split over the threads,
  // into a buffer all tasks read. Split over N, the same for A: its m * k copies run
  // at a float or two a cycle against the micro-kernel's 32 flops, so a task packing
  // all of A spends a fifth of its time there (GPT-2's 128 x 768 activations against a
  // 768 x 2304 weight in 32 tasks). The packed values are the same either way.
  Problem shared = pr;
  AlignedFloatBuffer shared_buffer;
  const int64_t m_padded = (m + mk.mr - 1) / mk.mr * mk.mr;
  const int64_t n_padded = (n + mk.nr - 1) / mk.nr * mk.nr;
  if (split_n && units > 1 && pr.packed_a == nullptr && m_padded * k <= kMaxSharedPackFloats && !pr.a_in_place) {
    float* packed = shared_buffer.Get(m_padded * k);
    PackAllOfA(pr, mk, m, m_padded, packed, options.parallel_for);
    shared.packed_a = packed;
    shared.packed_m_padded = m_padded;
  } else if (!split_n && units > 1 && pr.packed_b == nullptr && n_padded * k <= kMaxSharedPackFloats) {
    float* packed = shared_buffer.Get(n_padded * k);
    PackAllOfB(pr, mk, n, n_padded, packed, options.parallel_for);
    shared.packed_b = packed;
    shared.packed_n_padded = n_padded;
  }
  options.parallel_for(units, static_cast<int64_t>(flops / units), [&](int64_t begin, int64_t end) {
    const int64_t lo = begin * unit;
    const int64_t hi = std::min(extent, end * unit);
    if (split_n) {
      GemmRegion(shared, mk, 0, m, lo, hi);
    } else {
      GemmRegion(shared, mk, lo, hi, 0, n);
    }
  });
}

}  // namespace

// Gives the driver the packed A's representation.
struct SgemmPackedAccess {
  static const MicroKernel& Kernel(const gemm_internal::PackedOperand& x) { return *x.kernel_; }
  static const float* Data(const gemm_internal::PackedOperand& x) { return x.data_.get(); }
  // Rows of a packed A, columns of a packed B, padded to the tile.
  static int64_t Padded(const gemm_internal::PackedOperand& x) { return x.padded_; }
};

namespace {

// A problem whose A is `a` (packed or not, as the caller passes).
Problem MakeProblem(const SgemmPackedA& a, bool trans_b, float alpha, const float* b, int64_t ldb, float beta, float* c,
                    int64_t ldc, const GemmOptions& options, const GemmBPacker* b_packer) {
  Problem pr{false, trans_b, a.depth(), alpha, nullptr, 0, b, ldb, beta, c, ldc, &options.epilogue};
  pr.packed_a = SgemmPackedAccess::Data(a);
  pr.packed_m_padded = SgemmPackedAccess::Padded(a);
  pr.b_packer = b_packer;
  return pr;
}

}  // namespace

namespace gemm_internal {

void PackedOperand::Free::operator()(float* p) const { std::free(p); }

float* PackedOperand::Reset(const MicroKernel& kernel, int64_t extent, int64_t k, int tile) {
  kernel_ = &kernel;
  extent_ = std::max<int64_t>(extent, 0);
  k_ = std::max<int64_t>(k, 0);
  padded_ = (extent_ + tile - 1) / tile * tile;
  const int64_t floats = padded_ * k_;
  if (floats > capacity_) {
    const size_t bytes = (static_cast<size_t>(floats) * sizeof(float) + 63) / 64 * 64;
    data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
    capacity_ = floats;
  }
  return floats == 0 ? nullptr : data_.get();
}

}  // namespace gemm_internal

void SgemmPackedA::Pack(bool trans_a, int64_t m, int64_t k, const float* a, int64_t lda, const GemmOptions& options) {
  const MicroKernel& kernel = SelectMicroKernel(options.isa.value_or(ActiveCpuIsa()));
  float* data = Reset(kernel, m, k, kernel.mr);
  if (data == nullptr) return;
  const Problem pr{trans_a, false, k_, 1.0f, a, lda, nullptr, 0, 0.0f, nullptr, 0, &options.epilogue};
  const MicroKernel mk = BlockedFor(kernel, k_);
  PackAllOfA(pr, mk, extent_, padded_, data, padded_ * k_ >= kMinPackFloatsToSplit ? options.parallel_for : nullptr);
}

SgemmTile SgemmTileFor(std::optional<CpuIsa> isa) {
  const MicroKernel& mk = SelectMicroKernel(isa.value_or(ActiveCpuIsa()));
  return {mk.mr, mk.nr};
}

void SgemmPackedB::Pack(bool trans_b, int64_t k, int64_t n, const float* b, int64_t ldb, const GemmOptions& options) {
  const MicroKernel& kernel = SelectMicroKernel(options.isa.value_or(ActiveCpuIsa()));
  float* data = Reset(kernel, n, k, kernel.nr);
  if (data == nullptr) return;
  const Problem pr{false, trans_b, k_, 1.0f, nullptr, 0, b, ldb, 0.0f, nullptr, 0, &options.epilogue};
  const MicroKernel mk = BlockedFor(kernel, k_);
  PackAllOfB(pr, mk, extent_, padded_, data, padded_ * k_ >= kMinPackFloatsToSplit ? options.parallel_for : nullptr);
}

void Sgemm(bool trans_a, int64_t m, float alpha, const float* a, int64_t lda, const SgemmPackedB& b, float beta,
           float* c, int64_t ldc, const GemmOptions& options) {
  if (b.empty()) return;
  Problem pr{trans_a, false, b.depth(), alpha, a, lda, nullptr, 0, beta, c, ldc, &options.epilogue};
  pr.packed_b = SgemmPackedAccess::Data(b);
  pr.packed_n_padded = SgemmPackedAccess::Padded(b);
  RunGemm(pr, SgemmPackedAccess::Kernel(b), m, b.columns(), options);
}

void Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, const GemmOptions& options) {
  const MicroKernel& mk = SelectMicroKernel(options.isa.value_or(ActiveCpuIsa()));
  const GemmEpilogue& epilogue = options.epilogue;
  // Few columns (a classifier's 10 classes) fill a fraction of the micro-tile's nr; as
  // C^T = op(B)^T op(A)^T they are the rows of a tile, whose narrower instantiations leave
  // no padding rows, and C's rows fill whole nr-column strips. Each element sees exactly
  // the same operations (products in depth order, kc blocks, then bias and activation), so
  // the result is the same bits -- but for one column of a plain A, whose C^T is one row:
  // the GEMV's dot products (gemv_simd.h). C^T is transposed into C afterwards.
  if (2 * n <= mk.nr && m >= 2 * mk.mr && k > 0 && epilogue.row_bias == nullptr && epilogue.residual == nullptr &&
      epilogue.block == nullptr) {
    thread_local AlignedFloatBuffer transposed_buffer;
    float* transposed = transposed_buffer.Get(n * m);
    const CpuIsa isa = ActiveCpuIsa();
    if (beta != 0.0f) TransposeBlock(sizeof(float), isa, c, ldc, transposed, m, n, m);
    GemmOptions t = options;
    t.epilogue = GemmEpilogue{};
    t.epilogue.row_bias = epilogue.bias;
    t.epilogue.activation = epilogue.activation;
    const Problem pr{!trans_b, !trans_a, k, alpha, b, ldb, a, lda, beta, transposed, m, &t.epilogue};
    RunGemm(pr, mk, n, m, t);
    TransposeBlock(sizeof(float), isa, transposed, m, c, ldc, m, n);
    return;
  }
  const Problem pr{trans_a, trans_b, k, alpha, a, lda, b, ldb, beta, c, ldc, &options.epilogue};
  RunGemm(pr, mk, m, n, options);
}

void Sgemm(const SgemmPackedA& a, bool trans_b, int64_t n, float alpha, const float* b, int64_t ldb, float beta,
           float* c, int64_t ldc, const GemmOptions& options) {
  if (a.empty()) return;
  RunGemm(MakeProblem(a, trans_b, alpha, b, ldb, beta, c, ldc, options, nullptr), SgemmPackedAccess::Kernel(a),
          a.rows(), n, options);
}

void Sgemm(const SgemmPackedA& a, const GemmBPacker& b, int64_t n, float alpha, float beta, float* c, int64_t ldc,
           const GemmOptions& options) {
  if (a.empty()) return;
  RunGemm(MakeProblem(a, false, alpha, nullptr, 0, beta, c, ldc, options, &b), SgemmPackedAccess::Kernel(a), a.rows(),
          n, options);
}

void Sgemm(bool trans_a, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const GemmBPacker& b, float beta, float* c, int64_t ldc, const GemmOptions& options) {
  Problem pr{trans_a, false, k, alpha, a, lda, nullptr, 0, beta, c, ldc, &options.epilogue};
  pr.b_packer = &b;
  RunGemm(pr, SelectMicroKernel(options.isa.value_or(ActiveCpuIsa())), m, n, options);
}

}  // namespace tsr
