// The elementwise loops of the f32 optimizer updates (optimizer_kernels.cc), one table
// per ISA level: portable (optimizer_kernels.cc) and AVX2 (optimizer_rows_avx2.cc, used
// only after runtime detection). SGD, Adam and RMSProp update every element in double
// with the reference kernels' expressions (kernels/reference/optimizer_kernels.cc) in the
// same order, no operation fused, and round once, so every table gives the reference's
// bits. Momentum updates in f32, as TensorFlow's and PyTorch's f32 updates do, each step
// one fused multiply-add (g + wd * p, mu * v + g', then p - lr * step), so every table
// gives the same bits and each result is within an ulp or two of the reference's; in
// double the conversions made it a third as fast, the largest cost of a training step
// after its products (66 of the MLP's 850 us for its 200K-weight layer).
// Outputs may alias inputs at the same index: an element's inputs are read before its
// outputs are written.
#ifndef TESSERA_KERNELS_CPU_OPTIMIZER_ROWS_H_
#define TESSERA_KERNELS_CPU_OPTIMIZER_ROWS_H_

#include <cstdint>

namespace tsr {
namespace optimizer_internal {

// The scalar hyperparameters of one update, in the precision the loops use them.
struct SgdParams {
  double lr, weight_decay;
};
struct MomentumParams {  // in f32, as the loop computes
  float lr, momentum, weight_decay;
  bool nesterov;
};
struct AdamParams {
  double lr, beta1, beta2, epsilon, weight_decay;
  double correction1, correction2;  // 1 - beta^t
  bool decoupled;                   // AdamW: decay the parameter, not the gradient
};
struct RmsPropParams {
  double lr, rho, epsilon, weight_decay;
};

// Elements [0, n) of one update; the pointers are offset by the caller.
struct OptimizerRowKernels {
  void (*sgd)(const SgdParams& h, const float* p, const float* g, int64_t n, float* new_p);
  void (*momentum)(const MomentumParams& h, const float* p, const float* v, const float* g, int64_t n, float* new_p,
                   float* new_v);
  void (*adam)(const AdamParams& h, const float* p, const float* m, const float* v, const float* g, int64_t n,
               float* new_p, float* new_m, float* new_v);
  void (*rmsprop)(const RmsPropParams& h, const float* p, const float* s, const float* g, int64_t n, float* new_p,
                  float* new_s);
};

const OptimizerRowKernels& PortableOptimizerRows();
const OptimizerRowKernels& Avx2OptimizerRows();

}  // namespace optimizer_internal
}  // namespace tsr

#endif  // TESSERA_KERNELS_CPU_OPTIMIZER_ROWS_H_
