// The layout copy engine (see kernels/cpu/layout_copy.h): plan simplification, the
// row copier (memcpy runs, strided runs and fills per element size) and the batched
// blocked transpose.
#include "kernels/cpu/layout_copy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/transpose.h"

namespace tsr {

namespace {

// A stretch of the innermost output axis: `len` elements from output position `begin`
// reading src[offset + k * stride], or the fill element.
struct Segment {
  int64_t begin = 0;
  int64_t len = 0;
  int64_t offset = 0;
  int64_t stride = 1;
  bool fill = false;
};

template <typename T>
void CopyStridedAs(const void* src, int64_t stride, void* dst, int64_t n) {
  const T* s = static_cast<const T*>(src);
  T* d = static_cast<T*>(dst);
  for (int64_t k = 0; k < n; ++k) d[k] = s[k * stride];
}

template <typename T>
void FillAs(void* dst, const void* value, int64_t n) {
  T v;
  std::memcpy(&v, value, sizeof(T));
  T* d = static_cast<T*>(dst);
  for (int64_t k = 0; k < n; ++k) d[k] = v;
}

// n elements src[k * stride] -> dst[k]; contiguous runs go to memcpy.
void CopyStrided(size_t esize, const char* src, int64_t stride, char* dst, int64_t n) {
  if (stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * esize);
    return;
  }
  switch (esize) {
    case 1:
      CopyStridedAs<uint8_t>(src, stride, dst, n);
      break;
    case 2:
      CopyStridedAs<uint16_t>(src, stride, dst, n);
      break;
    case 4:
      CopyStridedAs<uint32_t>(src, stride, dst, n);
      break;
    default:
      CopyStridedAs<uint64_t>(src, stride, dst, n);
      break;
  }
}

void Fill(size_t esize, const void* value, char* dst, int64_t n) {
  switch (esize) {
    case 1:
      std::memset(dst, *static_cast<const uint8_t*>(value), static_cast<size_t>(n));
      break;
    case 2:
      FillAs<uint16_t>(dst, value, n);
      break;
    case 4:
      FillAs<uint32_t>(dst, value, n);
      break;
    default:
      FillAs<uint64_t>(dst, value, n);
      break;
  }
}

int64_t AxisOffset(const CopyAxis& a, int64_t i) { return a.affine ? a.base + i * a.stride : a.table[i]; }

// A table without fills whose entries step evenly becomes affine (so it may merge).
void MakeAffineIfPossible(CopyAxis& a) {
  if (a.affine || a.size < 1 || a.table[0] < 0) return;
  const int64_t stride = a.size > 1 ? a.table[1] - a.table[0] : 0;
  for (int64_t i = 0; i < a.size; ++i) {
    if (a.table[i] < 0 || a.table[i] != a.table[0] + i * stride) return;
  }
  a = CopyAxis::Affine(a.size, a.table[0], stride);
}

// The innermost axis as runs of evenly stepping offsets and runs of fills.
std::vector<Segment> InnerSegments(const CopyAxis& a) {
  std::vector<Segment> segments;
  if (a.affine) {
    segments.push_back(Segment{0, a.size, a.base, a.stride, false});
    return segments;
  }
  const std::vector<int64_t>& t = a.table;
  int64_t i = 0;
  while (i < a.size) {
    int64_t j = i + 1;
    if (t[i] < 0) {
      while (j < a.size && t[j] < 0) ++j;
      segments.push_back(Segment{i, j - i, 0, 1, true});
    } else if (j < a.size && t[j] >= 0) {
      const int64_t step = t[j] - t[i];
      while (j < a.size && t[j] >= 0 && t[j] - t[j - 1] == step) ++j;
      segments.push_back(Segment{i, j - i, t[i], step, false});
    } else {
      segments.push_back(Segment{i, 1, t[i], 1, false});
    }
    i = j;
  }
  return segments;
}

// Output positions [lo, hi) of one row whose source starts at `src` (element offsets
// of the segments are relative to it).
void CopyRowRange(size_t esize, const std::vector<Segment>& segments, const char* src, char* dst, const void* fill,
                  int64_t lo, int64_t hi) {
  for (const Segment& s : segments) {
    const int64_t b = std::max(lo, s.begin), e = std::min(hi, s.begin + s.len);
    if (b >= e) continue;
    char* d = dst + b * static_cast<int64_t>(esize);
    if (s.fill) {
      Fill(esize, fill, d, e - b);
    } else {
      const int64_t first = s.offset + (b - s.begin) * s.stride;
      CopyStrided(esize, src + first * static_cast<int64_t>(esize), s.stride, d, e - b);
    }
  }
}

// Rows of the innermost axis, split into pieces of about kPieceBytes when rows are few
// and long so that a single huge run still spreads over the threads.
void RunRows(const std::vector<CopyAxis>& axes, int64_t base, size_t esize, const char* src, char* dst,
             const void* fill, const KernelContext& ctx) {
  constexpr int64_t kPieceBytes = 64 * 1024;
  const int outer_rank = static_cast<int>(axes.size()) - 1;
  const CopyAxis& inner = axes.back();
  const std::vector<Segment> segments = InnerSegments(inner);
  const int64_t row_len = inner.size;
  const int64_t row_bytes = row_len * static_cast<int64_t>(esize);
  int64_t rows = 1;
  for (int k = 0; k < outer_rank; ++k) rows *= axes[k].size;
  const int64_t pieces = row_bytes > 4 * kPieceBytes ? (row_bytes + kPieceBytes - 1) / kPieceBytes : 1;
  const int64_t piece_len = (row_len + pieces - 1) / pieces;
  const int64_t cost = std::max<int64_t>(1, piece_len * static_cast<int64_t>(esize) / 4) + 8 * outer_rank;
  ctx.ParallelFor(rows * pieces, cost, [&](int64_t begin, int64_t end) {
    // Odometer over the outer axes: per-axis offsets, their sum and how many fill.
    std::vector<int64_t> idx(outer_rank), off(outer_rank);
    int64_t row = begin / pieces;
    int64_t rest = row, sum = base, fills = 0;
    for (int k = outer_rank - 1; k >= 0; --k) {
      idx[k] = rest % axes[k].size;
      rest /= axes[k].size;
      off[k] = AxisOffset(axes[k], idx[k]);
      if (off[k] < 0) {
        ++fills;
      } else {
        sum += off[k];
      }
    }
    for (int64_t item = begin; item < end; ++item) {
      const int64_t r = item / pieces, p = item % pieces;
      if (r != row) {
        row = r;
        for (int k = outer_rank - 1; k >= 0; --k) {
          if (off[k] < 0) {
            --fills;
          } else {
            sum -= off[k];
          }
          const bool carry = ++idx[k] == axes[k].size;
          if (carry) idx[k] = 0;
          off[k] = AxisOffset(axes[k], idx[k]);
          if (off[k] < 0) {
            ++fills;
          } else {
            sum += off[k];
          }
          if (!carry) break;
        }
      }
      const int64_t lo = p * piece_len, hi = std::min(row_len, lo + piece_len);
      char* d = dst + r * row_bytes;
      if (fills > 0) {
        Fill(esize, fill, d + lo * static_cast<int64_t>(esize), hi - lo);
      } else {
        CopyRowRange(esize, segments, src + sum * static_cast<int64_t>(esize), d, fill, lo, hi);
      }
    }
  });
}

// All axes affine; the innermost reads with stride != 1 and axis `j` with stride 1:
// for each index of the other axes, out[.., r (axis j), .., c] = src[.. + r + c * ld],
// a transpose, done in tiles of kRowBlock rows (read contiguously from the source)
// by kColBlock columns (written contiguously): long contiguous source runs keep the
// hardware prefetchers useful when the source rows are far apart.
void RunTransposed(const std::vector<CopyAxis>& axes, int j, int64_t base, size_t esize, const char* src, char* dst,
                   const KernelContext& ctx) {
  constexpr int64_t kRowBlock = 256, kColBlock = 64;
  const int rank = static_cast<int>(axes.size());
  std::vector<int64_t> dims;
  for (const CopyAxis& a : axes) dims.push_back(a.size);
  const std::vector<int64_t> out_strides = RowMajorStrides(dims);
  std::vector<int> outer;  // the axes other than j and the innermost
  for (int k = 0; k < rank - 1; ++k) {
    if (k != j) outer.push_back(k);
  }
  const CopyAxis& inner = axes.back();
  const int64_t rows = axes[j].size, cols = inner.size;
  const int64_t row_blocks = (rows + kRowBlock - 1) / kRowBlock, col_blocks = (cols + kColBlock - 1) / kColBlock;
  int64_t outer_count = 1;
  for (int k : outer) outer_count *= axes[k].size;
  const int64_t ld_src = inner.stride, ld_dst = out_strides[j];
  const int64_t e = static_cast<int64_t>(esize);
  const CpuIsa isa = ActiveCpuIsa();
  ctx.ParallelFor(
      outer_count * row_blocks * col_blocks, kRowBlock * kColBlock * e / 2, [&](int64_t begin, int64_t end) {
        for (int64_t item = begin; item < end; ++item) {
          const int64_t cb = item % col_blocks, rb = (item / col_blocks) % row_blocks;
          int64_t rest = item / (col_blocks * row_blocks);
          int64_t s = base + axes[j].base + inner.base, d = 0;
          for (int k = static_cast<int>(outer.size()) - 1; k >= 0; --k) {
            const CopyAxis& a = axes[outer[k]];
            const int64_t i = rest % a.size;
            rest /= a.size;
            s += a.base + i * a.stride;
            d += i * out_strides[outer[k]];
          }
          const int64_t r0 = rb * kRowBlock, c0 = cb * kColBlock;
          TransposeBlock(esize, isa, src + (s + r0 + c0 * ld_src) * e, ld_src, dst + (d + r0 * ld_dst + c0) * e, ld_dst,
                         std::min(kRowBlock, rows - r0), std::min(kColBlock, cols - c0));
        }
      });
}

}  // namespace

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

void RunCopyPlan(std::vector<CopyAxis> axes, size_t esize, const void* src_data, void* dst_data, const void* fill,
                 const KernelContext& ctx) {
  const char* src = static_cast<const char*>(src_data);
  char* dst = static_cast<char*>(dst_data);
  int64_t total = 1;
  for (const CopyAxis& a : axes) total *= a.size;
  if (total == 0) return;
  // Size-1 axes only add to the base; adjacent affine axes with
  // stride(outer) == size(inner) * stride(inner) read as one axis.
  int64_t base = 0;
  bool all_fill = false;
  std::vector<CopyAxis> kept;
  for (CopyAxis& a : axes) {
    if (a.size == 1) {
      const int64_t off = AxisOffset(a, 0);
      if (off < 0) {
        all_fill = true;
      } else {
        base += off;
      }
      continue;
    }
    MakeAffineIfPossible(a);
    if (!kept.empty() && kept.back().affine && a.affine && kept.back().stride == a.size * a.stride) {
      CopyAxis& b = kept.back();
      b.size *= a.size;
      b.base += a.base;
      b.stride = a.stride;
    } else {
      kept.push_back(std::move(a));
    }
  }
  if (all_fill) {
    constexpr int64_t kChunk = 16 * 1024;
    ctx.ParallelFor((total + kChunk - 1) / kChunk, kChunk, [&](int64_t begin, int64_t end) {
      const int64_t lo = begin * kChunk, hi = std::min(total, end * kChunk);
      Fill(esize, fill, dst + lo * static_cast<int64_t>(esize), hi - lo);
    });
    return;
  }
  if (kept.empty()) {
    std::memcpy(dst, src + base * static_cast<int64_t>(esize), esize);
    return;
  }
  const CopyAxis& inner = kept.back();
  bool all_affine = true;
  for (const CopyAxis& a : kept) all_affine = all_affine && a.affine;
  if (all_affine && inner.stride != 1) {
    for (int k = static_cast<int>(kept.size()) - 2; k >= 0; --k) {
      if (kept[k].stride == 1) {
        RunTransposed(kept, k, base, esize, src, dst, ctx);
        return;
      }
    }
  }
  RunRows(kept, base, esize, src, dst, fill, ctx);
}

}  // namespace tsr
