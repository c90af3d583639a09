// Tiling and vectorization of bufferized linalg ops by a transform-dialect schedule
// generated for the module's ops and shapes.
//
// matmul / batch_matmul: tiled for the caches (64 x 128 x 256) and then for registers
// (8 rows x one or two vector registers of columns x 1 deep, by the target's vector
// width), vectorized, loads/stores of the accumulator hoisted out of the k loop, and the
// contraction lowered to outer products (FMAs). Every other linalg op is tiled to one
// row by up to eight vector registers of innermost elements (two when its body holds
// math that becomes a polynomial: erf, exp, tanh, ...) and vectorized. Tile sizes are
// the largest divisors of each loop's extent not above these targets, so every tile is
// static and vectorizes (an extent like 127 gives tiles of 1: correct, but with short
// vectors).
#ifndef TESSERA_COMPILER_CODEGEN_VECTORIZATION_SCHEDULE_H_
#define TESSERA_COMPILER_CODEGEN_VECTORIZATION_SCHEDULE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "mlir/IR/BuiltinOps.h"

namespace tsr::codegen {

struct ScheduleOptions {
  int64_t vector_bits = 256;  // of the target's widest float vector registers
};

// The schedule's text for `module` (annotates the linalg ops it refers to with
// `tsr_cg_tile` ids); exposed for tests and IR dumps.
std::string BuildVectorizationSchedule(mlir::ModuleOp module, const ScheduleOptions& options);

// Builds the schedule, applies it, and removes the annotations.
absl::Status TileAndVectorize(mlir::ModuleOp module, const ScheduleOptions& options);

}  // namespace tsr::codegen

#endif  // TESSERA_COMPILER_CODEGEN_VECTORIZATION_SCHEDULE_H_
