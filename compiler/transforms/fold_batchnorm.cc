// tsr-fold-batchnorm (see fold_batchnorm.h). The folded parameters are computed in double, as
// the reference BatchNormalization kernel computes, and rounded once to the weights' dtype.
#include "compiler/transforms/fold_batchnorm.h"

#include <cmath>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/dialect/tsr_dialect.h"
#include "compiler/dialect/tsr_type_conversion.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Pass/Pass.h"

namespace tsr {
namespace {

using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Value;
namespace tsr_ops = mlir::tsr;

// The value of a tsr.Constant operand, or nullopt.
std::optional<Tensor> ConstantValue(Value v) {
  mlir::ElementsAttr attr;
  if (!v || !mlir::matchPattern(v, mlir::m_Constant(&attr))) return std::nullopt;
  absl::StatusOr<Tensor> t = tsr_ops::ToTensor(attr);
  if (!t.ok()) return std::nullopt;
  return *std::move(t);
}

std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.num_elements()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = t.GetAsDouble(static_cast<int64_t>(i));
  return out;
}

// An f32 or f64 tensor holding `values` (rounded once).
Tensor FromDoubles(DType dtype, const Shape& shape, const std::vector<double>& values) {
  Tensor t(dtype, shape);
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kF32) {
      t.data<float>()[i] = static_cast<float>(values[i]);
    } else {
      t.data<double>()[i] = values[i];
    }
  }
  return t;
}

// The per-channel affine map of an inference BatchNormalization: Y = X * a + shift.
struct ChannelAffine {
  std::vector<double> a;      // scale / sqrt(var + epsilon)
  std::vector<double> mean;   // input_mean
  std::vector<double> shift;  // B - mean * a
  std::vector<double> bias;   // B
};

class FoldBatchNormPass : public mlir::PassWrapper<FoldBatchNormPass, mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FoldBatchNormPass)

  FoldBatchNormPass() = default;
  explicit FoldBatchNormPass(const FoldBatchNormOptions& options) { standalone_ = options.standalone; }
  FoldBatchNormPass(const FoldBatchNormPass& other) : PassWrapper(other) {}

  llvm::StringRef getArgument() const override { return "tsr-fold-batchnorm"; }
  llvm::StringRef getDescription() const override {
    return "Fold inference BatchNormalization into Conv/Gemm/MatMul weights (or into Mul+Add)";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override { registry.insert<tsr_ops::TsrDialect>(); }

  void runOnOperation() override {
    llvm::SmallVector<tsr_ops::BatchNormalizationOp> norms;
    getOperation().walk([&](tsr_ops::BatchNormalizationOp op) { norms.push_back(op); });
    for (tsr_ops::BatchNormalizationOp bn : norms) Fold(bn);
    // Weights and parameters only the folded ops read are dead now.
    for (Operation* op : maybe_dead_) {
      if (op->use_empty()) op->erase();
    }
    maybe_dead_.clear();
  }

 private:
  void Fold(tsr_ops::BatchNormalizationOp bn) {
    std::optional<ChannelAffine> affine = InferenceAffine(bn);
    if (!affine.has_value()) return;
    Value x = bn.getX();
    Operation* producer = x.getDefiningOp();
    std::optional<Value> folded;
    if (producer != nullptr && x.hasOneUse()) {
      if (auto conv = llvm::dyn_cast<tsr_ops::ConvOp>(producer)) folded = FoldIntoConv(conv, *affine);
      if (auto gemm = llvm::dyn_cast<tsr_ops::GemmOp>(producer)) folded = FoldIntoGemm(gemm, *affine);
      if (auto matmul = llvm::dyn_cast<tsr_ops::MatMulOp>(producer)) folded = FoldIntoMatMul(matmul, *affine);
    }
    if (folded.has_value()) {
      MarkOperandsMaybeDead(producer);
      bn.getY().replaceAllUsesWith(*folded);
      MarkOperandsMaybeDead(bn);
      bn->erase();
      producer->erase();
      return;
    }
    if (!standalone_) return;
    mlir::OpBuilder b(bn);
    auto type = llvm::cast<RankedTensorType>(x.getType());
    // [C, 1, ..., 1] broadcasts over [N, C, D1, ...]; a 1-D X is [N] with one channel: [1].
    llvm::SmallVector<int64_t> dims = {static_cast<int64_t>(affine->a.size())};
    for (int64_t i = 2; i < type.getRank(); ++i) dims.push_back(1);
    const DType dtype = *tsr_ops::ToDType(type.getElementType());
    Value scale = Constant(b, bn.getLoc(), FromDoubles(dtype, Shape(dims), affine->a));
    Value shift = Constant(b, bn.getLoc(), FromDoubles(dtype, Shape(dims), affine->shift));
    Value scaled = b.create<tsr_ops::MulOp>(bn.getLoc(), type, x, scale);
    Value y = b.create<tsr_ops::AddOp>(bn.getLoc(), type, scaled, shift);
    bn.getY().replaceAllUsesWith(y);
    MarkOperandsMaybeDead(bn);
    bn->erase();
  }

  // The affine map of `bn` when it is an inference BatchNormalization with constant parameters,
  // an f32/f64 X and only Y used; nullopt otherwise.
  static std::optional<ChannelAffine> InferenceAffine(tsr_ops::BatchNormalizationOp bn) {
    if (bn.getTrainingMode() != 0) return std::nullopt;
    for (unsigned i = 1; i < bn->getNumResults(); ++i) {
      if (!bn->getResult(i).use_empty()) return std::nullopt;
    }
    auto type = llvm::cast<RankedTensorType>(bn.getX().getType());
    if (!type.getElementType().isF32() && !type.getElementType().isF64()) return std::nullopt;
    if (bn.getY().getType() != type) return std::nullopt;
    std::optional<Tensor> scale = ConstantValue(bn.getScale()), bias = ConstantValue(bn.getB()),
                          mean = ConstantValue(bn.getInputMean()), var = ConstantValue(bn.getInputVar());
    if (!scale || !bias || !mean || !var) return std::nullopt;
    ChannelAffine affine;
    affine.mean = ToDoubles(*mean);
    affine.bias = ToDoubles(*bias);
    const std::vector<double> s = ToDoubles(*scale), v = ToDoubles(*var);
    const double epsilon = bn.getEpsilon().convertToDouble();
    for (size_t c = 0; c < s.size(); ++c) {
      // As the reference kernel: scale * (x - mean) * (1 / sqrt(var + epsilon)) + B.
      affine.a.push_back(s[c] * (1.0 / std::sqrt(v[c] + epsilon)));
      affine.shift.push_back(affine.bias[c] - affine.mean[c] * affine.a[c]);
    }
    return affine;
  }

  // Conv(X, W, bias) -> Conv(X, W * a, (bias - mean) * a + B).
  std::optional<Value> FoldIntoConv(tsr_ops::ConvOp conv, const ChannelAffine& affine) {
    std::optional<Tensor> w = ConstantValue(conv.getW());
    if (!w || w->dtype() != ToDTypeOf(conv.getType()) || w->shape().rank() < 1) return std::nullopt;
    const int64_t m = w->shape().dim(0);
    if (m != static_cast<int64_t>(affine.a.size())) return std::nullopt;
    std::vector<double> bias(m, 0.0);
    if (conv.getB()) {
      std::optional<Tensor> b = ConstantValue(conv.getB());
      if (!b || b->num_elements() != m) return std::nullopt;
      bias = ToDoubles(*b);
    }
    std::vector<double> weights = ToDoubles(*w);
    const int64_t per_channel = m == 0 ? 0 : w->num_elements() / m;
    for (int64_t c = 0; c < m; ++c) {
      for (int64_t i = 0; i < per_channel; ++i) weights[c * per_channel + i] *= affine.a[c];
      bias[c] = (bias[c] - affine.mean[c]) * affine.a[c] + affine.bias[c];
    }
    mlir::OpBuilder b(conv);
    Value new_w = Constant(b, conv.getW().getLoc(), FromDoubles(w->dtype(), w->shape(), weights));
    Value new_b = Constant(b, conv.getLoc(), FromDoubles(w->dtype(), Shape{m}, bias));
    auto folded = b.create<tsr_ops::ConvOp>(conv.getLoc(), mlir::TypeRange{conv.getType()},
                                            mlir::ValueRange{conv.getX(), new_w, new_b}, conv->getAttrs());
    return folded.getY();
  }

  // Gemm(A, B, C; alpha, beta) -> Gemm(A, B * a per column, (beta * C - mean) * a + B_bn; alpha, 1).
  std::optional<Value> FoldIntoGemm(tsr_ops::GemmOp gemm, const ChannelAffine& affine) {
    auto y = llvm::cast<RankedTensorType>(gemm.getType());
    if (y.getRank() != 2 || y.isDynamicDim(1) || y.getDimSize(1) != static_cast<int64_t>(affine.a.size())) {
      return std::nullopt;
    }
    const DType dtype = ToDTypeOf(y);
    std::optional<Tensor> weight = ConstantValue(gemm.getB());
    if (!weight || weight->dtype() != dtype || weight->shape().rank() != 2) return std::nullopt;
    std::optional<Tensor> c;
    if (gemm.getC()) {
      c = ConstantValue(gemm.getC());
      if (!c || c->dtype() != dtype || c->shape().rank() > 2) return std::nullopt;
    }
    Tensor new_b = ScaleColumns(*weight, gemm.getTransB() != 0, affine.a);
    Tensor new_c = FoldedBias(c, gemm.getBeta().convertToDouble(), affine, dtype);
    mlir::OpBuilder b(gemm);
    llvm::SmallVector<mlir::NamedAttribute> attrs(gemm->getAttrs());
    bool has_beta = false;
    for (mlir::NamedAttribute& attr : attrs) {
      if (attr.getName() != "beta") continue;
      attr.setValue(b.getF64FloatAttr(1.0));
      has_beta = true;
    }
    if (!has_beta) attrs.push_back(b.getNamedAttr("beta", b.getF64FloatAttr(1.0)));
    auto folded = b.create<tsr_ops::GemmOp>(
        gemm.getLoc(), mlir::TypeRange{y},
        mlir::ValueRange{gemm.getA(), Constant(b, gemm.getB().getLoc(), new_b), Constant(b, gemm.getLoc(), new_c)},
        attrs);
    return folded.getY();
  }

  // MatMul(A [M, K], B [K, N]) -> Gemm(A, B * a per column, B_bn - mean * a).
  std::optional<Value> FoldIntoMatMul(tsr_ops::MatMulOp matmul, const ChannelAffine& affine) {
    auto y = llvm::cast<RankedTensorType>(matmul.getType());
    if (y.getRank() != 2 || y.isDynamicDim(1) || y.getDimSize(1) != static_cast<int64_t>(affine.a.size())) {
      return std::nullopt;
    }
    if (llvm::cast<RankedTensorType>(matmul.getA().getType()).getRank() != 2) return std::nullopt;
    const DType dtype = ToDTypeOf(y);
    std::optional<Tensor> weight = ConstantValue(matmul.getB());
    if (!weight || weight->dtype() != dtype || weight->shape().rank() != 2) return std::nullopt;
    Tensor new_b = ScaleColumns(*weight, /*transposed=*/false, affine.a);
    Tensor new_c = FoldedBias(std::nullopt, 1.0, affine, dtype);
    mlir::OpBuilder b(matmul);
    auto folded = b.create<tsr_ops::GemmOp>(matmul.getLoc(), mlir::TypeRange{y},
                                            mlir::ValueRange{matmul.getA(), Constant(b, matmul.getB().getLoc(), new_b),
                                                             Constant(b, matmul.getLoc(), new_c)},
                                            llvm::ArrayRef<mlir::NamedAttribute>{});
    return folded.getY();
  }

  // The weight of a Gemm with every output column n scaled by a[n]: B [K, N], or [N, K] when
  // transposed.
  static Tensor ScaleColumns(const Tensor& weight, bool transposed, const std::vector<double>& a) {
    std::vector<double> v = ToDoubles(weight);
    const int64_t rows = weight.shape().dim(0), cols = weight.shape().dim(1);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) v[r * cols + c] *= a[transposed ? r : c];
    }
    return FromDoubles(weight.dtype(), weight.shape(), v);
  }

  // (beta * C - mean) * a + B_bn over C broadcast with [N]: [N] for a C of rank <= 1 (or none),
  // [R, N] for a C of shape [R, 1] or [R, N].
  static Tensor FoldedBias(const std::optional<Tensor>& c, double beta, const ChannelAffine& affine, DType dtype) {
    const int64_t n = static_cast<int64_t>(affine.a.size());
    const std::vector<double> cv = c.has_value() ? ToDoubles(*c) : std::vector<double>{0.0};
    const bool two_d = c.has_value() && c->shape().rank() == 2;
    const int64_t rows = two_d ? c->shape().dim(0) : 1;
    const int64_t c_cols = c.has_value() && c->shape().rank() >= 1 ? c->shape().dim(c->shape().rank() - 1) : 1;
    std::vector<double> out(static_cast<size_t>(rows * n));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < n; ++j) {
        const double cj = cv[(two_d ? r * c_cols : 0) + (c_cols == 1 ? 0 : j)];
        out[r * n + j] = (beta * cj - affine.mean[j]) * affine.a[j] + affine.bias[j];
      }
    }
    return FromDoubles(dtype, two_d ? Shape{rows, n} : Shape{n}, out);
  }

  static DType ToDTypeOf(mlir::Type type) {
    absl::StatusOr<DType> d = tsr_ops::ToDType(mlir::getElementTypeOrSelf(type));
    return d.ok() ? *d : DType::kInvalid;
  }

  static Value Constant(mlir::OpBuilder& b, mlir::Location loc, const Tensor& value) {
    mlir::DenseElementsAttr attr = tsr_ops::ToElementsAttr(b.getContext(), value);
    return b.create<tsr_ops::ConstantOp>(loc, attr.getType(), attr);
  }

  void MarkOperandsMaybeDead(Operation* op) {
    for (Value v : op->getOperands()) {
      if (Operation* def = v.getDefiningOp(); def != nullptr && llvm::isa<tsr_ops::ConstantOp>(def)) {
        maybe_dead_.insert(def);
      }
    }
  }

  llvm::SetVector<Operation*> maybe_dead_;
  Option<bool> standalone_{*this, "standalone",
                           llvm::cl::desc("Rewrite a BatchNormalization that follows no Conv/Gemm/MatMul as Mul + Add"),
                           llvm::cl::init(FoldBatchNormOptions().standalone)};
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateFoldBatchNormPass(const FoldBatchNormOptions& options) {
  return std::make_unique<FoldBatchNormPass>(options);
}

void RegisterFoldBatchNormPass() { mlir::PassRegistration<FoldBatchNormPass>(); }

}  // namespace tsr
