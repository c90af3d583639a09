// The MLIR-level code generation API, for the compiler's own use (includes MLIR headers;
// keep it out of headers outside compiler/). codegen.h is the public entry point.
#ifndef TESSERA_COMPILER_CODEGEN_CODEGEN_MLIR_H_
#define TESSERA_COMPILER_CODEGEN_CODEGEN_MLIR_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/codegen/codegen.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace mlir {
class PassManager;
}  // namespace mlir

namespace tsr::codegen {

// The dialects, interfaces and transform extensions the pipeline needs.
void RegisterCodegenDialects(mlir::DialectRegistry& registry);

// Tensors -> buffers in the calling convention of codegen.h (results as out-params,
// temporaries freed).
absl::Status Bufferize(mlir::ModuleOp module, const IrDumpFn& dump_ir = {});

// Buffers in linalg/vector/scf/... -> LLVM dialect (bare-pointer function arguments).
absl::Status LowerToLLVMDialect(mlir::ModuleOp module, const IrDumpFn& dump_ir = {});

// Makes `pm` call `dump_ir` (when set) with the IR after every pass that changed it.
void EnableIrDumps(mlir::PassManager& pm, const IrDumpFn& dump_ir);

// Whole pipeline on a module of tensor functions, which it rewrites in place.
absl::StatusOr<CompiledObject> CompileModule(mlir::ModuleOp module, const CodegenOptions& options);

// Width in bits of the widest float vector registers of the target `options` names.
absl::StatusOr<int64_t> TargetVectorBits(const CodegenOptions& options);

// LLVM IR -> -O3 -> object bytes for `target` (cpu/features empty: host). Fills
// `compiled->object` and `compiled->target`.
absl::Status EmitObject(llvm::Module& module, const CodegenOptions& options, CompiledObject* compiled);

}  // namespace tsr::codegen

#endif  // TESSERA_COMPILER_CODEGEN_CODEGEN_MLIR_H_
