// tsr.Fusion and tsr.Yield (TsrOps.td): the builder of an empty fusion and the verifier that
// ties the body block's arguments to the inputs and the yielded values to the results.
#include "compiler/dialect/tsr_dialect.h"

namespace mlir::tsr {

void FusionOp::build(OpBuilder& builder, OperationState& state, llvm::StringRef kind, ValueRange inputs,
                     TypeRange result_types) {
  state.addAttribute(getKindAttrName(state.name), builder.getStringAttr(kind));
  state.addOperands(inputs);
  state.addTypes(result_types);
  Region* body = state.addRegion();
  Block* block = new Block();
  for (Value input : inputs) block->addArgument(input.getType(), input.getLoc());
  body->push_back(block);
}

LogicalResult FusionOp::verify() {
  llvm::StringRef kind = getKind();
  if (kind != "loop" && kind != "reduction") {
    return emitOpError() << "kind must be \"loop\" or \"reduction\", got \"" << kind << "\"";
  }
  Block& block = getBody().front();
  if (block.getNumArguments() != getInputs().size()) {
    return emitOpError() << "body takes " << block.getNumArguments() << " arguments for " << getInputs().size()
                         << " inputs";
  }
  for (auto [i, pair] : llvm::enumerate(llvm::zip(block.getArguments(), getInputs()))) {
    auto [argument, input] = pair;
    if (argument.getType() != input.getType()) {
      return emitOpError() << "body argument #" << i << " has type " << argument.getType() << " but input #" << i
                           << " is " << input.getType();
    }
  }
  auto yield = llvm::dyn_cast<YieldOp>(block.getTerminator());
  if (!yield) return emitOpError() << "body must end with tsr.Yield";
  if (yield.getValues().getTypes() != getResultTypes()) {
    return emitOpError() << "yields " << yield.getValues().size() << " values of types (" << yield.getValues().getTypes()
                         << ") for results of types (" << getResultTypes() << ")";
  }
  if (getNumResults() == 0) return emitOpError() << "must have at least one result";
  for (Operation& op : block.without_terminator()) {
    if (op.getDialect() != getOperation()->getDialect()) {
      return op.emitOpError() << "inside tsr.Fusion: only tsr ops may be fused";
    }
    if (llvm::isa<FusionOp>(op)) return op.emitOpError() << "tsr.Fusion may not nest";
  }
  return success();
}

}  // namespace mlir::tsr
