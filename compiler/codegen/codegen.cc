// CompileMlirToObject, CompileModule and CompileAndLoad: the code generation pipeline of
// codegen.h from MLIR text or a module to object bytes (and, for tests, loaded code).
#include "compiler/codegen/codegen.h"

#include <chrono>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen_mlir.h"
#include "compiler/codegen/diagnostic_collector.h"
#include "compiler/codegen/vectorization_schedule.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Export.h"

namespace tsr {
namespace codegen {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The calling convention passes one bare pointer per tensor: every argument and result
// must be a statically shaped tensor.
absl::Status CheckSignature(mlir::func::FuncOp function) {
  auto check = [&](mlir::Type type, absl::string_view what, int index) -> absl::Status {
    auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type);
    if (tensor == nullptr || !tensor.hasStaticShape()) {
      std::string printed;
      llvm::raw_string_ostream os(printed);
      os << type;
      return absl::InvalidArgumentError(absl::StrCat("function '", function.getSymName().str(), "': ", what, " ", index,
                                                     " has type ", printed,
                                                     "; code generation needs statically shaped tensors"));
    }
    return absl::OkStatus();
  };
  const mlir::FunctionType type = function.getFunctionType();
  for (int i = 0; i < static_cast<int>(type.getNumInputs()); ++i) {
    if (absl::Status status = check(type.getInput(i), "argument", i); !status.ok()) return status;
  }
  for (int i = 0; i < static_cast<int>(type.getNumResults()); ++i) {
    if (absl::Status status = check(type.getResult(i), "result", i); !status.ok()) return status;
  }
  return absl::OkStatus();
}

std::string PrintIr(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, mlir::OpPrintingFlags().elideLargeElementsAttrs(16));
  return text;
}

}  // namespace

absl::StatusOr<CompiledObject> CompileModule(mlir::ModuleOp module, const CodegenOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  CompiledObject compiled;
  for (mlir::func::FuncOp function : module.getOps<mlir::func::FuncOp>()) {
    if (function.isDeclaration() || !function.isPublic()) continue;
    if (absl::Status status = CheckSignature(function); !status.ok()) return status;
    compiled.symbols.push_back(function.getSymName().str());
  }
  if (compiled.symbols.empty()) return absl::InvalidArgumentError("the module defines no public function");
  auto vector_bits = TargetVectorBits(options);
  if (!vector_bits.ok()) return vector_bits.status();

  if (absl::Status status = Bufferize(module, options.dump_ir); !status.ok()) return status;
  if (options.vectorize) {
    ScheduleOptions schedule;
    schedule.vector_bits = *vector_bits;
    if (absl::Status status = TileAndVectorize(module, schedule); !status.ok()) return status;
    if (options.dump_ir) options.dump_ir("transform-schedule", PrintIr(module));
  }
  if (absl::Status status = LowerToLLVMDialect(module, options.dump_ir); !status.ok()) return status;
  compiled.mlir_seconds = SecondsSince(start);

  const auto llvm_start = std::chrono::steady_clock::now();
  llvm::LLVMContext llvm_context;
  DiagnosticCollector diagnostics(module.getContext());
  std::unique_ptr<llvm::Module> llvm_module = mlir::translateModuleToLLVMIR(module, llvm_context, "tessera_codegen");
  if (llvm_module == nullptr) return diagnostics.Error("translation to LLVM IR failed");
  if (options.dump_ir) {
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm_module->print(os, nullptr);
    options.dump_ir("llvm-ir", text);
  }
  if (absl::Status status = EmitObject(*llvm_module, options, &compiled); !status.ok()) return status;
  compiled.llvm_seconds = SecondsSince(llvm_start);
  return compiled;
}

}  // namespace codegen

absl::StatusOr<CompiledObject> CompileMlirToObject(absl::string_view mlir_text, const CodegenOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  mlir::DialectRegistry registry;
  codegen::RegisterCodegenDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  codegen::DiagnosticCollector diagnostics(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(llvm::StringRef(mlir_text.data(), mlir_text.size()), &context);
  if (!module) return diagnostics.Error("cannot parse the MLIR module");
  if (mlir::failed(mlir::verify(*module))) return diagnostics.Error("the MLIR module is invalid");
  const double parse_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto compiled = codegen::CompileModule(*module, options);
  if (compiled.ok()) compiled->mlir_seconds += parse_seconds;
  return compiled;
}

absl::StatusOr<std::unique_ptr<NativeModule>> CompileAndLoad(absl::string_view mlir_text,
                                                             const CodegenOptions& options) {
  auto compiled = CompileMlirToObject(mlir_text, options);
  if (!compiled.ok()) return compiled.status();
  NativeObject object;
  object.name = "jit.o";
  object.bytes = compiled->object;
  object.target = compiled->target;
  object.checksum = compiled->checksum;
  return NativeModule::Load({object});
}

}  // namespace tsr
