// The float values of a tsr.Constant operand, for the passes that match constants (a bias,
// a clip bound, an attention scale). MLIR-level header.
#ifndef TESSERA_COMPILER_TRANSFORMS_CONSTANT_VALUES_H_
#define TESSERA_COMPILER_TRANSFORMS_CONSTANT_VALUES_H_

#include <optional>
#include <vector>

#include "mlir/IR/Value.h"

namespace tsr {

// The elements of `v` as doubles when it is a float tsr.Constant, else nullopt.
std::optional<std::vector<double>> ConstantValues(mlir::Value v);

// The one element of `v` when it is a float tsr.Constant of one element (any rank).
std::optional<double> ConstantScalar(mlir::Value v);

}  // namespace tsr

#endif  // TESSERA_COMPILER_TRANSFORMS_CONSTANT_VALUES_H_
