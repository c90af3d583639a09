// The Winograd F(m x m, 3 x 3) transforms of one channel, per ISA (AVX2 in
// conv_winograd_avx2.cc; there is no scalar version: without AVX2 the Conv kernel
// uses its im2col path). Plain declarations only, so the ISA file includes nothing
// with inline functions or templates.
//
// Layouts, with alpha = m + 2 and xi = i * alpha + j in [0, alpha^2):
//   transformed weights U: element (xi, out channel o, channel c) at u[(o * alpha^2 + xi) * channels + c];
//   transformed input V of a block of tile rows: (xi, channel, tile n) at v[xi * v_stride + n] for the
//     channel's v, with tile n = (th - th_begin) * tiles_w + tw;
//   GEMM products (xi, out channel, tile n) the same way, read by the output transform.
#ifndef TESSERA_KERNELS_CPU_CONV_WINOGRAD_TRANSFORM_H_
#define TESSERA_KERNELS_CPU_CONV_WINOGRAD_TRANSFORM_H_

#include <cstdint>

namespace tsr {

// One image plane of a 3x3, stride 1, undilated 2-D convolution cut into m x m
// output tiles.
struct WinogradPlane {
  int tile;  // m: 2 or 4
  int64_t in_h, in_w, out_h, out_w;
  int64_t pad_top, pad_left;
  int64_t tiles_w;  // ceil(out_w / m)
};

// Floats of scratch WinogradInputAvx2 needs for `tile_rows` rows of tiles.
int64_t WinogradInputScratchFloats(const WinogradPlane& p, int64_t tile_rows);

// U for output channels [o_begin, o_end) from w ([out channels, channels, 3, 3]).
void WinogradWeightsAvx2(int tile, const float* w, int64_t channels, int64_t o_begin, int64_t o_end, float* u);

// V of one channel (x: its in_h x in_w plane) for tile rows [th_begin, th_end). Each
// xi's row of tiles must be followed by 8 floats of padding (it is stored in whole
// vectors of 8 tiles).
void WinogradInputAvx2(const WinogradPlane& p, const float* x, int64_t th_begin, int64_t th_end, float* v,
                       int64_t v_stride, float* scratch);

// The output plane rows of tile rows [th_begin, th_end) of one output channel from
// its GEMM products `mo` (as V, row length padded by at least 8 floats past the last
// tile of the last xi), plus `bias`. May write past the end of an output row into
// a later row of the plane (stored again afterwards), never past the plane.
void WinogradOutputAvx2(const WinogradPlane& p, const float* mo, int64_t mo_stride, int64_t th_begin, int64_t th_end,
                        float bias, float* y);

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_WINOGRAD_TRANSFORM_H_
