// EmitObject and TargetVectorBits: LLVM's TargetMachine for the host or a named CPU, the
// -O3 pipeline, and object file emission into memory. LLVM only, no MLIR.
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen_mlir.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "runtime/native/target_description.h"

namespace tsr::codegen {
namespace {

TargetDescription DescribeTarget(const CodegenOptions& options) {
  if (options.cpu.empty()) return HostTargetDescription();
  TargetDescription target;
  target.triple = llvm::sys::getProcessTriple();
  target.cpu = options.cpu;
  target.features = options.features;
  return target;
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(const TargetDescription& target) {
  tsr::InitializeNativeTargetOnce();
  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (llvm_target == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("no LLVM target for triple '", target.triple, "': ", error));
  }
  std::unique_ptr<llvm::TargetMachine> machine(
      llvm_target->createTargetMachine(target.triple, target.cpu, target.features, llvm::TargetOptions(),
                                       llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (machine == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("cannot create a target machine for ", target.ToString()));
  }
  if (!machine->getMCSubtargetInfo()->isCPUStringValid(target.cpu)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown CPU '", target.cpu, "' for target triple '", target.triple, "'"));
  }
  return machine;
}

}  // namespace

absl::StatusOr<int64_t> TargetVectorBits(const CodegenOptions& options) {
  const TargetDescription target = DescribeTarget(options);
  auto machine = CreateTargetMachine(target);
  if (!machine.ok()) return machine.status();
  const llvm::MCSubtargetInfo& subtarget = *(*machine)->getMCSubtargetInfo();
  if (subtarget.checkFeatures("+avx512f")) return 512;
  if (subtarget.checkFeatures("+avx")) return 256;
  return 128;
}

absl::Status EmitObject(llvm::Module& module, const CodegenOptions& options, CompiledObject* compiled) {
  const TargetDescription target = DescribeTarget(options);
  auto machine_or = CreateTargetMachine(target);
  if (!machine_or.ok()) return machine_or.status();
  llvm::TargetMachine& machine = **machine_or;
  module.setDataLayout(machine.createDataLayout());
  module.setTargetTriple(target.triple);
  // The functions carry the target so that -O3's cost models see the right vectors.
  for (llvm::Function& function : module) {
    if (function.isDeclaration()) continue;
    function.addFnAttr("target-cpu", target.cpu);
    if (!target.features.empty()) function.addFnAttr("target-features", target.features);
  }
  std::string verifier_errors;
  llvm::raw_string_ostream verifier_os(verifier_errors);
  if (llvm::verifyModule(module, &verifier_os)) {
    return absl::InternalError(absl::StrCat("invalid LLVM IR from the MLIR translation: ", verifier_errors));
  }

  llvm::LoopAnalysisManager loop_analyses;
  llvm::FunctionAnalysisManager function_analyses;
  llvm::CGSCCAnalysisManager cgscc_analyses;
  llvm::ModuleAnalysisManager module_analyses;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(module_analyses);
  builder.registerCGSCCAnalyses(cgscc_analyses);
  builder.registerFunctionAnalyses(function_analyses);
  builder.registerLoopAnalyses(loop_analyses);
  builder.crossRegisterProxies(loop_analyses, function_analyses, cgscc_analyses, module_analyses);
  llvm::ModulePassManager optimizations = builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  optimizations.run(module, module_analyses);

  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream os(bytes);
  llvm::legacy::PassManager emission;
  if (machine.addPassesToEmitFile(emission, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    return absl::InternalError(absl::StrCat("LLVM cannot emit object files for ", target.ToString()));
  }
  emission.run(module);
  compiled->object.assign(bytes.begin(), bytes.end());
  compiled->checksum = ObjectChecksum(compiled->object);
  compiled->target = target;
  return absl::OkStatus();
}

}  // namespace tsr::codegen
