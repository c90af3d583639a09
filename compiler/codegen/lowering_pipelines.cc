// The pass pipelines of code generation: dialect registration, bufferization into the
// calling convention of codegen.h, and lowering of buffers and vectors to the LLVM dialect.
#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen_mlir.h"
#include "compiler/codegen/diagnostic_collector.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/TransformOps/DialectExtension.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/TransformOps/MemRefTransformOps.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/TransformOps/VectorTransformOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

namespace tsr::codegen {

void RegisterCodegenDialects(mlir::DialectRegistry& registry) {
  registry.insert<mlir::affine::AffineDialect, mlir::arith::ArithDialect, mlir::bufferization::BufferizationDialect,
                  mlir::cf::ControlFlowDialect, mlir::func::FuncDialect, mlir::index::IndexDialect,
                  mlir::linalg::LinalgDialect, mlir::LLVM::LLVMDialect, mlir::math::MathDialect,
                  mlir::memref::MemRefDialect, mlir::scf::SCFDialect, mlir::tensor::TensorDialect,
                  mlir::transform::TransformDialect, mlir::vector::VectorDialect>();
  mlir::arith::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::linalg::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::scf::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::tensor::registerBufferizableOpInterfaceExternalModels(registry);
  mlir::memref::registerAllocationOpInterfaceExternalModels(registry);
  // Without the TilingInterface models tile_using_for refuses every linalg op.
  mlir::linalg::registerTilingInterfaceExternalModels(registry);
  mlir::linalg::registerTransformDialectExtension(registry);
  mlir::memref::registerTransformDialectExtension(registry);
  mlir::vector::registerTransformDialectExtension(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
}

namespace {

// IR printing into the dump callback, one call per pass that changed the IR.
class DumpConfig : public mlir::PassManager::IRPrinterConfig {
 public:
  explicit DumpConfig(IrDumpFn dump)
      : IRPrinterConfig(/*printModuleScope=*/false, /*printAfterOnlyOnChange=*/true,
                        /*printAfterOnlyOnFailure=*/false, mlir::OpPrintingFlags().elideLargeElementsAttrs(16)),
        dump_(std::move(dump)) {}

  void printAfterIfEnabled(mlir::Pass* pass, mlir::Operation* op, PrintCallbackFn print_callback) override {
    std::string text;
    llvm::raw_string_ostream os(text);
    print_callback(os);
    const llvm::StringRef argument = pass->getArgument();
    dump_(argument.empty() ? pass->getName().str() : argument.str(), text);
  }

 private:
  IrDumpFn dump_;
};

}  // namespace

void EnableIrDumps(mlir::PassManager& pm, const IrDumpFn& dump_ir) {
  if (dump_ir) pm.enableIRPrinting(std::make_unique<DumpConfig>(dump_ir));
}

absl::Status Bufferize(mlir::ModuleOp module, const IrDumpFn& dump_ir) {
  mlir::PassManager pm(module.getContext());
  EnableIrDumps(pm, dump_ir);
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createLinalgElementwiseOpFusionPass());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  pm.addPass(mlir::bufferization::createEmptyTensorEliminationPass());
  pm.addPass(mlir::bufferization::createEmptyTensorToAllocTensorPass());
  mlir::bufferization::OneShotBufferizationOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  // Dense row-major arguments: what bare pointers can describe.
  bufferization.setFunctionBoundaryTypeConversion(mlir::bufferization::LayoutMapOption::IdentityLayoutMap);
  pm.addPass(mlir::bufferization::createOneShotBufferizePass(bufferization));
  mlir::bufferization::BufferResultsToOutParamsOpts out_params;
  // A result's allocation becomes the caller's buffer (no copy into it).
  out_params.hoistStaticAllocs = true;
  pm.addPass(mlir::bufferization::createBufferResultsToOutParamsPass(out_params));
  pm.addPass(mlir::createCanonicalizerPass());
  mlir::bufferization::BufferDeallocationPipelineOptions deallocation;
  mlir::bufferization::buildBufferDeallocationPipeline(pm, deallocation);
  pm.addPass(mlir::createBufferizationToMemRefPass());
  pm.addPass(mlir::createCanonicalizerPass());
  DiagnosticCollector diagnostics(module.getContext());
  if (mlir::failed(pm.run(module))) return diagnostics.Error("bufferization failed");
  return absl::OkStatus();
}

absl::Status LowerToLLVMDialect(mlir::ModuleOp module, const IrDumpFn& dump_ir) {
  // exp, expm1, log, log1p, tanh, erf, ... as polynomials in arith ops, on the vectors the
  // schedule made: LLVM would otherwise call scalar libm functions lane by lane.
  mlir::RewritePatternSet math_patterns(module.getContext());
  mlir::populateMathPolynomialApproximationPatterns(math_patterns);
  (void)mlir::applyPatternsAndFoldGreedily(module, std::move(math_patterns));
  mlir::PassManager pm(module.getContext());
  EnableIrDumps(pm, dump_ir);
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  // Ops the schedule did not vectorize become scalar loops.
  pm.addPass(mlir::createConvertLinalgToLoopsPass());
  mlir::VectorTransferToSCFOptions transfer_options;
  transfer_options.unroll = true;
  pm.addPass(mlir::createConvertVectorToSCFPass(transfer_options));
  pm.addPass(mlir::createLowerAffinePass());
  pm.addPass(mlir::createConvertSCFToCFPass());
  pm.addPass(mlir::memref::createExpandStridedMetadataPass());
  pm.addPass(mlir::createLowerAffinePass());
  pm.addPass(mlir::createConvertVectorToLLVMPass());
  pm.addPass(mlir::createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(mlir::createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (tanh, erf, ...) becomes a libm call.
  pm.addPass(mlir::createConvertMathToLibmPass());
  pm.addPass(mlir::createArithToLLVMConversionPass());
  pm.addPass(mlir::createConvertIndexToLLVMPass());
  mlir::ConvertFuncToLLVMPassOptions func_options;
  func_options.useBarePtrCallConv = true;
  pm.addPass(mlir::createConvertFuncToLLVMPass(func_options));
  pm.addPass(mlir::createConvertControlFlowToLLVMPass());
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
  DiagnosticCollector diagnostics(module.getContext());
  if (mlir::failed(pm.run(module))) return diagnostics.Error("lowering to the LLVM dialect failed");
  return absl::OkStatus();
}

}  // namespace tsr::codegen
