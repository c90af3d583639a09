// tsr-tile-fusions: marks each tsr.Fusion whose work splits into independent blocks of rows
// with the number of blocks, so that the compiled program runs the blocks on several
// threads (one generated function, called once per block). MLIR-level header.
//
// A fusion splits along axis `a` of its results (all of one rank; `a` is the first axis of
// extent D > 1 of the first one, every axis before it has extent 1, so that each block is
// one contiguous slice of every value it cuts) when every result is cut there, and every
// value of its body either has D at that axis (aligned to the right, numpy-style) and is cut
// into blocks of D / T, or has 1 there or no such axis and is read whole by every block; no
// op moves data across the axis: Softmax, LogSoftmax and LayerNormalization act on later
// axes only, a reduction keeps the axis (its input cut, its result cut), Reshape and Expand
// do not occur, and constants cut along the axis are splats. T is the largest divisor of D,
// at most kMaxFusionTiles, that leaves every block at least kMinFusionTileElements elements
// of the body's largest value; fusions with T < 2 are left alone.
//
// The marks: "tsr.tiles" (i64 T) and "tsr.tile_axis" (i64 a) on the tsr.Fusion. The
// outliner (compiler/lowering/fusion_outlining.h) then also builds the function of one block.
#ifndef TESSERA_COMPILER_LOWERING_FUSION_TILING_H_
#define TESSERA_COMPILER_LOWERING_FUSION_TILING_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"
#include "mlir/Pass/Pass.h"

namespace tsr {

inline constexpr int64_t kMaxFusionTiles = 64;
inline constexpr int64_t kMinFusionTileElements = 8192;

struct FusionTiling {
  int64_t axis = 0;         // in the results' shape
  int64_t extent = 0;       // D
  int64_t tiles = 1;        // T, dividing D
  int64_t result_rank = 0;  // the results' rank, against which values align
};

// How `fusion` (a tsr.Fusion) splits, or nullopt when it does not.
std::optional<FusionTiling> AnalyzeFusionTiling(mlir::Operation* fusion);

// The tiling the pass marked on `fusion`, or nullopt (no marks, or marks that do not fit).
std::optional<FusionTiling> FusionTilingOf(mlir::Operation* fusion);

// A value's type in the function of one block: D / T at the split axis where the value is
// split, otherwise `type` itself.
mlir::Type TileType(mlir::Type type, const FusionTiling& tiling);

// Runs on func.func: marks every tsr.Fusion that AnalyzeFusionTiling splits.
std::unique_ptr<mlir::Pass> CreateFusionTilingPass();

// Registers `tsr-tile-fusions` for tessera-opt.
void RegisterFusionTilingPass();

}  // namespace tsr

#endif  // TESSERA_COMPILER_LOWERING_FUSION_TILING_H_
