// BuildVectorizationSchedule / TileAndVectorize: one tile_using_for per linalg op (matched
// by an id attribute), then vectorization and vector lowering patterns on every function.
#include "compiler/codegen/vectorization_schedule.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/diagnostic_collector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Interfaces/TransformInterfaces.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"

namespace tsr::codegen {
namespace {

constexpr char kTileAttr[] = "tsr_cg_tile";
// On every func.func while the schedule runs: 1 when it holds a (batch) matmul, else 0.
constexpr char kContractAttr[] = "tsr_cg_contract";

// The largest divisor of `extent` that is at most `target` (at least 1).
int64_t LargestDivisorAtMost(int64_t extent, int64_t target) {
  for (int64_t size = std::min(extent, target); size > 1; --size) {
    if (extent % size == 0) return size;
  }
  return 1;
}

// One level of tiling: tile sizes (0 = not tiled) for `extents` aiming at `targets`;
// returns the tile extents in `tiled`.
std::vector<int64_t> TileLevel(const std::vector<int64_t>& extents, const std::vector<int64_t>& targets,
                               std::vector<int64_t>* tiled) {
  std::vector<int64_t> sizes;
  tiled->clear();
  for (size_t i = 0; i < extents.size(); ++i) {
    const int64_t size = LargestDivisorAtMost(extents[i], targets[i]);
    sizes.push_back(size == extents[i] ? 0 : size);
    tiled->push_back(size);
  }
  return sizes;
}

void AppendTiling(const std::string& handle, const std::vector<int64_t>& sizes, std::string* script,
                  std::string* tiled_handle, int* counter) {
  int loops = 0;
  for (int64_t size : sizes) loops += size != 0;
  if (loops == 0) {
    *tiled_handle = handle;
    return;
  }
  *tiled_handle = absl::StrCat("%tiled", (*counter)++);
  std::vector<std::string> results = {*tiled_handle};
  std::vector<std::string> types = {"!transform.any_op"};
  for (int i = 0; i < loops; ++i) {
    results.push_back(absl::StrCat("%loop", (*counter)++));
    types.push_back("!transform.any_op");
  }
  absl::StrAppend(script, "    ", absl::StrJoin(results, ", "), " = transform.structured.tile_using_for ", handle,
                  " tile_sizes [", absl::StrJoin(sizes, ", "), "] : (!transform.any_op) -> (",
                  absl::StrJoin(types, ", "), ")\n");
}

// Whether the op's body holds math ops that become polynomials (erf, exp, tanh, log,
// ...): tens of operations and constants per element.
bool HasApproximatedMath(mlir::linalg::LinalgOp op) {
  bool found = false;
  op->walk([&](mlir::Operation* inner) {
    if (!mlir::isa_and_nonnull<mlir::math::MathDialect>(inner->getDialect())) return;
    found |= !mlir::isa<mlir::math::FmaOp, mlir::math::AbsFOp, mlir::math::SqrtOp, mlir::math::FloorOp,
                        mlir::math::CeilOp, mlir::math::RoundEvenOp, mlir::math::CopySignOp>(inner);
  });
  return found;
}

}  // namespace

std::string BuildVectorizationSchedule(mlir::ModuleOp module, const ScheduleOptions& options) {
  const int64_t lanes = std::max<int64_t>(1, options.vector_bits / 32);
  // Register tile: 8 rows x (16 accumulator registers / 8 rows) vectors of columns: 8x16
  // with AVX2 (16 ymm), 8x32 with AVX-512 (32 zmm).
  const int64_t register_columns = 2 * lanes;
  std::string script =
      "module attributes {transform.with_named_sequence} {\n"
      "  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {\n";
  int counter = 0;
  int64_t id = 0;
  const mlir::Type i64 = mlir::IntegerType::get(module.getContext(), 64);
  bool any_contract = false, any_other = false;
  module.walk([&](mlir::func::FuncOp f) {
    bool contract = false;
    f.walk(
        [&](mlir::Operation* op) { contract |= mlir::isa<mlir::linalg::MatmulOp, mlir::linalg::BatchMatmulOp>(op); });
    f->setAttr(kContractAttr, mlir::IntegerAttr::get(i64, contract ? 1 : 0));
    any_contract |= contract;
    any_other |= !contract;
  });
  module.walk([&](mlir::linalg::LinalgOp op) {
    if (!op.hasPureBufferSemantics() || op.hasDynamicShape()) return;
    std::vector<int64_t> extents;
    for (int64_t extent : op.getStaticLoopRanges()) extents.push_back(extent);
    if (extents.empty()) return;
    op->setAttr(kTileAttr, mlir::IntegerAttr::get(mlir::IntegerType::get(op->getContext(), 64), id));
    std::string handle = absl::StrCat("%op", id);
    absl::StrAppend(&script, "    ", handle, " = transform.structured.match attributes{", kTileAttr, " = ", id,
                    " : i64} in %root : (!transform.any_op) -> !transform.any_op\n");
    ++id;
    std::vector<int64_t> tiled;
    std::string tiled_handle;
    const bool is_matmul = mlir::isa<mlir::linalg::MatmulOp>(op.getOperation());
    const bool is_batch_matmul = mlir::isa<mlir::linalg::BatchMatmulOp>(op.getOperation());
    if (is_matmul || is_batch_matmul) {
      std::vector<int64_t> cache = {64, 128, 256};
      std::vector<int64_t> registers = {8, register_columns, 1};
      if (is_batch_matmul) {
        cache.insert(cache.begin(), 1);
        registers.insert(registers.begin(), 1);
      }
      std::vector<int64_t> sizes = TileLevel(extents, cache, &tiled);
      AppendTiling(handle, sizes, &script, &tiled_handle, &counter);
      // The register level tiles the cache tile (copies: TileLevel and AppendTiling write
      // their outputs before reading their inputs).
      const std::vector<int64_t> cache_tile = tiled;
      const std::string cache_tiled_handle = tiled_handle;
      sizes = TileLevel(cache_tile, registers, &tiled);
      AppendTiling(cache_tiled_handle, sizes, &script, &tiled_handle, &counter);
      return;
    }
    std::vector<int64_t> targets(extents.size(), 1);
    // Eight vectors of the innermost dim per step keep the FMA units busy on plain
    // arithmetic; a body with polynomial math (GELU's erf: ~40 operations and ~25
    // constants) at that width needs hundreds of registers and spills them, so it steps
    // by two vectors (GPT-2's GELU on [128,3072]: 560 -> 220 us).
    targets.back() = (HasApproximatedMath(op) ? 2 : 8) * lanes;
    // A reduction along the innermost dim: a tile of one output is one serial chain through
    // the reduced elements. `lanes` outputs at a time (of the innermost parallel dim) run
    // `lanes` chains side by side in one vector register instead.
    const llvm::SmallVector<mlir::utils::IteratorType> iterators = op.getIteratorTypesArray();
    // The vectorized tile's lowering transposes it lane by lane (an extract and an insert
    // per element), so the reduced dim steps by `lanes` too: a 16 x 16 tile, not 16 x 128
    // (GPT-2's layer norm: 2.7 MB of LLVM IR and 1.8 s of codegen for 16 x 64 tiles).
    if (iterators.back() == mlir::utils::IteratorType::reduction) {
      for (size_t d = iterators.size(); d-- > 0;) {
        if (iterators[d] == mlir::utils::IteratorType::parallel) {
          targets[d] = lanes;
          targets.back() = lanes;
          break;
        }
      }
    }
    AppendTiling(handle, TileLevel(extents, targets, &tiled), &script, &tiled_handle, &counter);
  });
  // Vectorization turns a multiply and a reduction into vector.contract, which lowers to
  // the outer products (FMAs) a matmul wants; but in a reduction over a unit dimension (a
  // normalization's sum of squares, tiled to one step of its reduced dimension) the
  // outer-product lowering unrolls into one scalar extract, multiply and insert per lane
  // (a LayerNorm's [128,768] piece took 250 us instead of 25). Functions without a matmul
  // keep the multiply and the reduction apart.
  std::vector<std::string> vectorized;
  for (const bool contract : {true, false}) {
    if (!(contract ? any_contract : any_other)) continue;
    const std::string suffix = contract ? "contract" : "other";
    absl::StrAppend(&script, "    %funcs_", suffix, " = transform.structured.match ops{[\"func.func\"]} attributes{",
                    kContractAttr, " = ", contract ? 1 : 0,
                    " : i64} in %root : (!transform.any_op) -> !transform.any_op\n", "    %vectorized_", suffix,
                    " = transform.structured.vectorize_children_and_apply_patterns %funcs_", suffix,
                    contract ? "" : " {disable_multi_reduction_to_contract_patterns}",
                    " : (!transform.any_op) -> !transform.any_op\n");
    vectorized.push_back("%vectorized_" + suffix);
  }
  absl::StrAppend(&script, "    %vectorized = transform.merge_handles ", absl::StrJoin(vectorized, ", "),
                  " : !transform.any_op\n");
  // fold_memref_alias_ops and CSE make the accumulator's loads and stores provably
  // loop-invariant; without them the hoisting finds nothing. cast_away_vector_leading_one_dim
  // before the hoisting: the accumulators it carries across loops are then plain 1-D
  // vectors; carried as vector<1x1x1x64xf32>, every iteration reshaped them lane by lane.
  absl::StrAppend(&script,
                  "    transform.apply_patterns to %vectorized {\n"
                  "      transform.apply_patterns.memref.fold_memref_alias_ops\n"
                  "      transform.apply_patterns.vector.cast_away_vector_leading_one_dim\n"
                  "    } : !transform.any_op\n"
                  "    transform.apply_cse to %vectorized : !transform.any_op\n"
                  "    %hoisted = transform.structured.hoist_redundant_vector_transfers %vectorized : "
                  "(!transform.any_op) -> !transform.any_op\n"
                  "    transform.apply_patterns to %hoisted {\n"
                  "      transform.apply_patterns.vector.lower_contraction lowering_strategy = \"outerproduct\"\n"
                  "      transform.apply_patterns.vector.transfer_permutation_patterns\n"
                  "      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = \"innerparallel\"\n"
                  "      transform.apply_patterns.vector.lower_outerproduct\n"
                  "      transform.apply_patterns.vector.lower_broadcast\n"
                  "      transform.apply_patterns.vector.lower_shape_cast\n"
                  "      transform.apply_patterns.vector.lower_transpose lowering_strategy = \"shuffle_1d\"\n"
                  "    } : !transform.any_op\n"
                  "    transform.yield\n"
                  "  }\n"
                  "}\n");
  return script;
}

absl::Status TileAndVectorize(mlir::ModuleOp module, const ScheduleOptions& options) {
  mlir::MLIRContext* context = module.getContext();
  const std::string script = BuildVectorizationSchedule(module, options);
  DiagnosticCollector diagnostics(context);
  mlir::OwningOpRef<mlir::ModuleOp> schedule = mlir::parseSourceString<mlir::ModuleOp>(script, context);
  if (!schedule) return diagnostics.Error(absl::StrCat("cannot parse the generated schedule\n", script));
  auto entry = mlir::SymbolTable::lookupNearestSymbolFrom<mlir::transform::NamedSequenceOp>(
      *schedule, mlir::StringAttr::get(context, "__transform_main"));
  if (!entry) return absl::InternalError("the generated schedule has no @__transform_main");
  if (mlir::failed(mlir::transform::applyTransformNamedSequence(module, entry, *schedule,
                                                                mlir::transform::TransformOptions()))) {
    return diagnostics.Error(absl::StrCat("tiling and vectorization failed; schedule:\n", script));
  }
  module.walk([](mlir::Operation* op) {
    op->removeAttr(kTileAttr);
    op->removeAttr(kContractAttr);
  });
  return absl::OkStatus();
}

}  // namespace tsr::codegen
