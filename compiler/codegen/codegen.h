// CPU code generation: an MLIR module of `func.func`s on static-shaped tensors (linalg,
// tensor, arith, math) compiled to a relocatable object file in memory for the host CPU
// or a named one. No MLIR or LLVM types here; codegen_mlir.h is the MLIR-level API.
//
// Pipeline: elementwise fusion -> one-shot bufferization (function boundaries included)
// -> results turned into out-parameters -> deallocation of temporaries -> tiling and
// vectorization by a generated transform-dialect schedule (vectorization_schedule.h) ->
// LLVM dialect -> LLVM IR -> LLVM -O3 -> TargetMachine object emission.
//
// Calling convention of every public function in the object (bare pointers; shapes are
// static, so no sizes or strides are passed):
//
//   func.func @f(%x: tensor<AxBxf32>, %y: tensor<Cxf32>) -> (tensor<DxExf32>, ...)
//   becomes  extern "C" void f(const float* x, const float* y, float* result0, ...);
//
// inputs first, in order, then one pointer per result, in order. Every buffer is dense
// row-major (identity layout), at least 4-byte aligned; the caller owns all of them and the
// function writes every element of each result. Inputs are never written. Temporaries
// are malloc'ed and freed inside the call. The code is single-threaded and reentrant.
#ifndef TESSERA_COMPILER_CODEGEN_CODEGEN_H_
#define TESSERA_COMPILER_CODEGEN_CODEGEN_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/native/object_loader.h"
#include "runtime/native/target_description.h"

namespace tsr {

// Receives a stage name and the IR after it, as text.
using IrDumpFn = std::function<void(const std::string& stage, const std::string& ir)>;

struct CodegenOptions {
  // LLVM CPU name to compile for ("znver4", "x86-64-v3", ...); empty: this host, with
  // every feature it has.
  std::string cpu;
  // Extra LLVM features ("+avx2,-avx512f"), with `cpu` only.
  std::string features;
  // Tile and vectorize linalg ops; off leaves them as scalar loops (a baseline).
  bool vectorize = true;
  // When set, called with the IR after every MLIR pass of the pipeline that changed it
  // (stage: the pass's command-line name), after the tiling and vectorization schedule
  // ("transform-schedule") and the LLVM IR given to -O3 ("llvm-ir"); for --dump-ir.
  IrDumpFn dump_ir;
};

struct CompiledObject {
  std::vector<uint8_t> object;       // ELF relocatable object file
  std::vector<std::string> symbols;  // public functions, in module order
  uint64_t checksum = 0;             // ObjectChecksum(object), for NativeObject::checksum
  TargetDescription target;          // what `object` may run on
  double mlir_seconds = 0;           // MLIR pipeline (parse through LLVM dialect)
  double llvm_seconds = 0;           // LLVM IR translation, -O3 and code emission
};

// Compiles MLIR text (one module). Errors carry MLIR's diagnostics.
absl::StatusOr<CompiledObject> CompileMlirToObject(absl::string_view mlir_text, const CodegenOptions& options = {});

// JIT convenience: compiles for this host and loads the object with runtime/native.
absl::StatusOr<std::unique_ptr<NativeModule>> CompileAndLoad(absl::string_view mlir_text,
                                                             const CodegenOptions& options = {});

}  // namespace tsr

#endif  // TESSERA_COMPILER_CODEGEN_CODEGEN_H_
