// tsr-weight-layout (see weight_layout.h): transposed constant GEMM weights are stored
// row-major [K, N] at compile time.
#include "compiler/transforms/weight_layout.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/dialect/tsr_dialect.h"
#include "compiler/dialect/tsr_type_conversion.h"
#include "graph/tensor.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/Pass.h"

namespace tsr {
namespace {

constexpr int64_t kMaxTransposedElements = int64_t{1} << 24;

// The attribute that says B is stored transposed, for the ops this pass rewrites.
const char* TransposeAttrOf(mlir::Operation* op) {
  const llvm::StringRef name = op->getName().getStringRef();
  if (name == "tsr.FusedMatMul") return "transpose_b";
  if (name == "tsr.Gemm") return "transB";
  return nullptr;
}

// B [N, K] as a row-major [K, N] constant, or nullopt when B is not a 2-D f32 constant of
// bounded size.
std::optional<Tensor> TransposedWeights(mlir::Value b) {
  mlir::ElementsAttr attr;
  if (!b || !mlir::matchPattern(b, mlir::m_Constant(&attr))) return std::nullopt;
  absl::StatusOr<Tensor> value = mlir::tsr::ToTensor(attr);
  if (!value.ok() || value->dtype() != DType::kF32 || value->shape().rank() != 2 ||
      value->num_elements() > kMaxTransposedElements) {
    return std::nullopt;
  }
  const int64_t n = value->shape().dim(0), k = value->shape().dim(1);
  Tensor t(DType::kF32, Shape{k, n});
  const float* src = value->data<float>();
  float* dst = t.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) dst[j * n + i] = src[i * k + j];
  }
  return t;
}

class WeightLayoutPass : public mlir::PassWrapper<WeightLayoutPass, mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(WeightLayoutPass)

  llvm::StringRef getArgument() const override { return "tsr-weight-layout"; }
  llvm::StringRef getDescription() const override {
    return "Store constant transposed GEMM weights (FusedMatMul transpose_b, Gemm transB) row-major";
  }

  void runOnOperation() override {
    std::vector<mlir::Operation*> gemms;
    getOperation().walk([&](mlir::Operation* op) {
      if (TransposeAttrOf(op) != nullptr) gemms.push_back(op);
    });
    mlir::OpBuilder builder(&getContext());
    for (mlir::Operation* op : gemms) {
      const char* attr_name = TransposeAttrOf(op);
      auto transposed = op->getAttrOfType<mlir::IntegerAttr>(attr_name);
      if (!transposed || transposed.getInt() != 1 || op->getNumOperands() < 2) continue;
      std::optional<Tensor> weights = TransposedWeights(op->getOperand(1));
      if (!weights.has_value()) continue;
      builder.setInsertionPoint(op);
      mlir::DenseElementsAttr value = mlir::tsr::ToElementsAttr(&getContext(), *weights);
      auto constant = builder.create<mlir::tsr::ConstantOp>(op->getOperand(1).getLoc(), value.getType(), value);
      mlir::Operation* old = op->getOperand(1).getDefiningOp();
      op->setOperand(1, constant.getResult());
      op->setAttr(attr_name, builder.getI64IntegerAttr(0));
      if (old != nullptr && old->use_empty()) old->erase();
    }
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateWeightLayoutPass() { return std::make_unique<WeightLayoutPass>(); }

void RegisterWeightLayoutPass() { mlir::PassRegistration<WeightLayoutPass>(); }

}  // namespace tsr
