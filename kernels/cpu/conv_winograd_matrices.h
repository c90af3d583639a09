// Lavin & Gray's Winograd matrices for F(m x m, 3 x 3), m = 2 or 4 (alpha = m + 2):
// V = Bt d B (input tiles), U = G g Gt (weights), Y = At M A (outputs). Data only (no
// functions), so that files compiled for different ISAs may share it.
#ifndef TESSERA_KERNELS_CPU_CONV_WINOGRAD_MATRICES_H_
#define TESSERA_KERNELS_CPU_CONV_WINOGRAD_MATRICES_H_

namespace tsr {

template <int kM>
struct WinogradMatrices;

template <>
struct WinogradMatrices<2> {
  static constexpr int kAlpha = 4;
  static constexpr float kBt[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  static constexpr float kG[4][3] = {{1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}};
  static constexpr float kAt[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
};

template <>
struct WinogradMatrices<4> {
  static constexpr int kAlpha = 6;
  static constexpr float kBt[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                                      {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  static constexpr float kG[6][3] = {{0.25f, 0, 0},
                                     {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                                     {-1.0f / 6, 1.0f / 6, -1.0f / 6},
                                     {1.0f / 24, 1.0f / 12, 1.0f / 6},
                                     {1.0f / 24, -1.0f / 12, 1.0f / 6},
                                     {0, 0, 1}};
  static constexpr float kAt[4][6] = {
      {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
};

}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_CONV_WINOGRAD_MATRICES_H_
