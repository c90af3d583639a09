// Numeric tests of tsr-outline-fusions (compiler/lowering/fusion_outlining.h): small tsr.Fusion
// regions written as MLIR text are outlined, compiled to machine code by compiler/codegen in
// one module, loaded by runtime/native and called; their results are compared with the
// reference kernels run op by op through RunOp (1e-5, relative to 1 + |expected|). Every op
// the outliner lowers is covered, with odd shapes, broadcasting corners and negative axes.
// The figures of the last test (fused chain and softmax vs the cpu kernels) are printed.
#include "compiler/lowering/fusion_outlining.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/codegen.h"
#include "compiler/codegen/codegen_mlir.h"
#include "compiler/dialect/tsr_dialect.h"
#include "graph/attribute.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "kernels/kernel.h"
#include "kernels/run_op.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "runtime/native/object_loader.h"

namespace tsr {
namespace {

std::string TypeText(DType dtype, const Shape& shape) {
  std::string text = "tensor<";
  for (int i = 0; i < shape.rank(); ++i) absl::StrAppend(&text, shape.dim(i), "x");
  const char* element = dtype == DType::kF32 ? "f32" : dtype == DType::kI64 ? "i64" : "i1";
  return absl::StrCat(text, element, ">");
}

std::string AttrText(const std::string& name, const AttrValue& value) {
  switch (value.type()) {
    case AttrType::kInt:
      return absl::StrCat(name, " = ", value.i(), " : i64");
    case AttrType::kFloat:
      return absl::StrFormat("%s = %.17e : f64", name, value.f());
    case AttrType::kString:
      return absl::StrCat(name, " = \"", value.s(), "\"");
    case AttrType::kType:
      return absl::StrCat(name, " = f32");
    default:
      ADD_FAILURE() << "attribute kind not handled by the test: " << name;
      return "";
  }
}

// A rank-0 or rank-1 constant as an MLIR literal.
std::string ConstantText(const Tensor& t) {
  std::vector<std::string> items;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    items.push_back(t.dtype() == DType::kF32 ? absl::StrFormat("%.9e", t.data<float>()[i])
                                             : absl::StrCat(t.data<int64_t>()[i]));
  }
  const std::string body = t.shape().rank() == 0 ? items[0] : absl::StrCat("[", absl::StrJoin(items, ", "), "]");
  return absl::StrCat("dense<", body, "> : ", TypeText(t.dtype(), t.shape()));
}

// One fusion: its MLIR text (a function @c_<name> holding a tsr.Fusion) and the reference
// values, computed op by op with RunOp while the fusion is described.
class FusionCase {
 public:
  FusionCase(std::string name, uint32_t seed) : name_(std::move(name)), rng_(seed) {}

  // A fusion input with random values in [lo, hi] (bool: random).
  int Input(Shape shape, float lo = -2.0f, float hi = 2.0f, DType dtype = DType::kF32) {
    Tensor t(dtype, std::move(shape));
    if (dtype == DType::kBool) {
      for (int64_t i = 0; i < t.num_elements(); ++i) t.data<bool>()[i] = (rng_() & 1) != 0;
    } else {
      std::uniform_real_distribution<float> dist(lo, hi);
      for (float& v : t.flat<float>()) v = dist(rng_);
    }
    inputs_.push_back(Add(t, absl::StrCat("%a", inputs_.size())));
    return inputs_.back();
  }

  int Constant(Tensor t) {
    const int id = Add(t, absl::StrCat("%v", values_.size()));
    absl::StrAppend(&body_, "    ", names_[id], " = tsr.Constant ", ConstantText(t), "\n");
    return id;
  }

  // An op of the fusion (operand -1: absent optional operand); returns its first result.
  int Op(const std::string& op, const std::vector<int>& operands, const AttrMap& attrs = {}) {
    std::vector<std::optional<Tensor>> args;
    std::vector<std::string> names, types;
    for (int id : operands) {
      args.push_back(id < 0 ? std::nullopt : std::optional<Tensor>(values_[id]));
      if (id < 0) continue;
      names.push_back(names_[id]);
      types.push_back(TypeText(values_[id].dtype(), values_[id].shape()));
    }
    auto outputs = RunOp(op, args, attrs);
    EXPECT_TRUE(outputs.ok()) << name_ << ": " << op << ": " << outputs.status();
    if (!outputs.ok()) return Add(Tensor(DType::kF32, Shape({1})), "%invalid");
    std::vector<std::string> result_types, properties;
    for (const Tensor& t : *outputs) result_types.push_back(TypeText(t.dtype(), t.shape()));
    for (const auto& [key, value] : attrs) properties.push_back(AttrText(key, value));
    if (op == "Clip") {
      properties.push_back(absl::StrCat("operandSegmentSizes = array<i32: 1, ", operands.size() > 1 && operands[1] >= 0,
                                        ", ", operands.size() > 2 && operands[2] >= 0, ">"));
    }
    const std::string result = absl::StrCat("%v", values_.size());
    absl::StrAppend(&body_, "    ", result, outputs->size() > 1 ? absl::StrCat(":", outputs->size()) : "", " = \"tsr.",
                    op, "\"(", absl::StrJoin(names, ", "), ")",
                    properties.empty() ? "" : absl::StrCat(" <{", absl::StrJoin(properties, ", "), "}>"), " : (",
                    absl::StrJoin(types, ", "), ") -> (", absl::StrJoin(result_types, ", "), ")\n");
    if (op.rfind("Reduce", 0) == 0 || op == "Softmax" || op == "LogSoftmax" || op == "LayerNormalization") {
      kind_ = "reduction";
    }
    return Add((*outputs)[0], outputs->size() > 1 ? absl::StrCat(result, "#0") : result);
  }

  void Output(int id) { outputs_.push_back(id); }

  std::string Text() const {
    std::vector<std::string> params, args, arg_types, block_args, result_types, yielded;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const Tensor& t = values_[inputs_[i]];
      const std::string type = TypeText(t.dtype(), t.shape());
      params.push_back(absl::StrCat("%p", i, ": ", type));
      args.push_back(absl::StrCat("%p", i));
      arg_types.push_back(type);
      block_args.push_back(absl::StrCat(names_[inputs_[i]], ": ", type));
    }
    for (int id : outputs_) {
      result_types.push_back(TypeText(values_[id].dtype(), values_[id].shape()));
      yielded.push_back(names_[id]);
    }
    const std::string results = absl::StrCat("(", absl::StrJoin(result_types, ", "), ")");
    std::vector<std::string> returned;
    for (size_t i = 0; i < outputs_.size(); ++i) {
      returned.push_back(outputs_.size() > 1 ? absl::StrCat("%r#", i) : std::string("%r"));
    }
    return absl::StrCat("func.func @c_", name_, "(", absl::StrJoin(params, ", "), ") -> ", results, " {\n", "  %r",
                        outputs_.size() > 1 ? absl::StrCat(":", outputs_.size()) : "", " = tsr.Fusion \"", kind_,
                        "\" (", absl::StrJoin(args, ", "), ") : (", absl::StrJoin(arg_types, ", "), ") -> ", results,
                        " {\n  ^bb0(", absl::StrJoin(block_args, ", "), "):\n", body_, "    tsr.Yield ",
                        absl::StrJoin(yielded, ", "), " : ", absl::StrJoin(result_types, ", "), "\n  }\n  return ",
                        absl::StrJoin(returned, ", "), " : ", absl::StrJoin(result_types, ", "), "\n}\n");
  }

  const std::string& name() const { return name_; }
  std::vector<const Tensor*> InputTensors() const {
    std::vector<const Tensor*> out;
    for (int id : inputs_) out.push_back(&values_[id]);
    return out;
  }
  std::vector<const Tensor*> Expected() const {
    std::vector<const Tensor*> out;
    for (int id : outputs_) out.push_back(&values_[id]);
    return out;
  }

 private:
  int Add(Tensor t, std::string name) {
    values_.push_back(std::move(t));
    names_.push_back(std::move(name));
    return static_cast<int>(values_.size()) - 1;
  }

  std::string name_;
  std::mt19937 rng_;
  std::vector<Tensor> values_;
  std::vector<std::string> names_;
  std::vector<int> inputs_, outputs_;
  std::string body_;
  std::string kind_ = "loop";
};

// Calls a function of the codegen calling convention: inputs, then outputs, all pointers.
void Call(void* entry, std::vector<void*> p) {
  switch (p.size()) {
    case 2:
      return reinterpret_cast<void (*)(void*, void*)>(entry)(p[0], p[1]);
    case 3:
      return reinterpret_cast<void (*)(void*, void*, void*)>(entry)(p[0], p[1], p[2]);
    case 4:
      return reinterpret_cast<void (*)(void*, void*, void*, void*)>(entry)(p[0], p[1], p[2], p[3]);
    case 5:
      return reinterpret_cast<void (*)(void*, void*, void*, void*, void*)>(entry)(p[0], p[1], p[2], p[3], p[4]);
    case 6:
      return reinterpret_cast<void (*)(void*, void*, void*, void*, void*, void*)>(entry)(p[0], p[1], p[2], p[3], p[4],
                                                                                         p[5]);
    default:
      FAIL() << "the test calls functions of 2..6 pointers, not " << p.size();
  }
}

struct Compiled {
  std::unique_ptr<NativeModule> module;
  std::map<std::string, std::string> symbol_of_case;  // case name -> outlined function
};

// Parses the cases as one module, outlines the fusions, keeps only the outlined functions
// (made public) and compiles and loads them.
absl::StatusOr<Compiled> OutlineAndCompile(const std::vector<FusionCase>& cases) {
  std::string text;
  for (const FusionCase& c : cases) absl::StrAppend(&text, c.Text());
  mlir::DialectRegistry registry;
  codegen::RegisterCodegenDialects(registry);
  registry.insert<mlir::tsr::TsrDialect>();
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module) return absl::InvalidArgumentError(absl::StrCat("cannot parse:\n", text));
  if (mlir::failed(OutlineFusions(*module))) return absl::InternalError("OutlineFusions failed");
  Compiled compiled;
  std::vector<mlir::func::FuncOp> wrappers;
  for (mlir::func::FuncOp function : module->getOps<mlir::func::FuncOp>()) {
    if (!function.isPrivate()) {
      wrappers.push_back(function);
      continue;
    }
    function.setPublic();
  }
  for (mlir::func::FuncOp wrapper : wrappers) {
    wrapper.walk([&](mlir::func::CallOp call) {
      compiled.symbol_of_case[wrapper.getSymName().drop_front(2).str()] = call.getCallee().str();
    });
    wrapper.erase();
  }
  if (mlir::failed(mlir::verify(*module))) return absl::InternalError("the outlined module is invalid");
  auto object = codegen::CompileModule(*module, CodegenOptions());
  if (!object.ok()) return object.status();
  std::printf("%zu functions: MLIR %.2f s, LLVM %.2f s\n", object->symbols.size(), object->mlir_seconds,
              object->llvm_seconds);
  auto loaded = NativeModule::Load({NativeObject{"fusions.o", object->object, object->target, object->checksum}});
  if (!loaded.ok()) return loaded.status();
  compiled.module = std::move(*loaded);
  return compiled;
}

void ExpectNear(const std::string& what, const Tensor& expected, const std::vector<float>& actual, double tolerance) {
  const auto want = expected.flat<float>();
  ASSERT_EQ(want.size(), actual.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const bool both_nan = std::isnan(want[i]) && std::isnan(actual[i]);
    if (!both_nan && !(std::abs(want[i] - actual[i]) <= tolerance * (1.0 + std::abs(want[i])))) {
      ADD_FAILURE() << what << " element " << i << ": expected " << want[i] << ", got " << actual[i];
      if (++reported == 5) return;
    }
  }
}

void RunCases(const std::vector<FusionCase>& cases, double tolerance = 1e-5) {
  auto compiled = OutlineAndCompile(cases);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  for (const FusionCase& c : cases) {
    SCOPED_TRACE(c.name());
    ASSERT_TRUE(compiled->symbol_of_case.count(c.name())) << "no call in @c_" << c.name();
    auto entry = compiled->module->Lookup(compiled->symbol_of_case[c.name()]);
    ASSERT_TRUE(entry.ok()) << entry.status();
    std::vector<void*> pointers;
    for (const Tensor* t : c.InputTensors()) pointers.push_back(const_cast<void*>(t->raw_data()));
    std::vector<std::vector<float>> results;
    for (const Tensor* t : c.Expected()) results.emplace_back(t->num_elements(), std::nanf(""));
    for (std::vector<float>& r : results) pointers.push_back(r.data());
    Call(*entry, pointers);
    for (size_t i = 0; i < results.size(); ++i) {
      ExpectNear(absl::StrCat(c.name(), " result ", i), *c.Expected()[i], results[i], tolerance);
    }
  }
}

Tensor I64(std::vector<int64_t> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return Tensor::FromVector<int64_t>(Shape({n}), values);
}

AttrMap Ints(std::initializer_list<std::pair<const char*, int64_t>> items) {
  AttrMap attrs;
  for (const auto& [k, v] : items) attrs[k] = AttrValue::Int(v);
  return attrs;
}

TEST(FusionOutliningTest, ElementwiseOpsMatchReference) {
  std::vector<FusionCase> cases;
  uint32_t seed = 100;
  // Binary ops with broadcasting corners.
  struct Binary {
    const char* op;
    Shape a, b;
    float lo_b = -2.0f, hi_b = 2.0f;
  };
  for (const Binary& bin :
       {Binary{"Add", Shape({3, 17}), Shape({17})}, Binary{"Sub", Shape({1, 5}), Shape({4, 1})},
        Binary{"Mul", Shape({1023}), Shape({})}, Binary{"Div", Shape({2, 3, 4}), Shape({3, 1}), 0.5f, 2.0f},
        Binary{"Max", Shape({7, 1}), Shape({1, 9})}, Binary{"Min", Shape({9}), Shape({7, 9})},
        Binary{"Pow", Shape({3, 17}), Shape({17}), -2.0f, 2.0f}, Binary{"Add", Shape({1}), Shape({1})},
        Binary{"Mul", Shape({}), Shape({2, 1, 3})}}) {
    FusionCase c(absl::StrCat(bin.op, "_", cases.size()), ++seed);
    const bool pow = std::string(bin.op) == "Pow";
    const int a = c.Input(bin.a, pow ? 0.1f : -2.0f, 2.0f);
    const int b = c.Input(bin.b, bin.lo_b, bin.hi_b);
    c.Output(c.Op(bin.op, {a, b}));
    cases.push_back(std::move(c));
  }
  // Pow with splat constant exponents (multiplications) and a negative base.
  for (float exponent : {2.0f, 3.0f, -1.0f, 1.0f, 0.5f}) {
    FusionCase c(absl::StrCat("PowConst_", cases.size()), ++seed);
    const int x = c.Input(Shape({17}), exponent == 0.5f ? 0.1f : -2.0f, 2.0f);
    c.Output(c.Op("Pow", {x, c.Constant(Tensor::Scalar<float>(exponent))}));
    cases.push_back(std::move(c));
  }
  // Unary ops over odd shapes; value ranges keep each op on its domain.
  const std::vector<Shape> shapes = {Shape({1}), Shape({3, 17}), Shape({1023}), Shape({2, 1, 17})};
  struct Unary {
    const char* op;
    float lo, hi;
    AttrMap attrs;
  };
  const std::vector<Unary> unary = {
      {"Neg", -3, 3, {}},
      {"Abs", -3, 3, {}},
      {"Exp", -20, 20, {}},
      {"Log", 1e-3f, 100, {}},
      {"Sqrt", 0, 100, {}},
      {"Rsqrt", 1e-2f, 100, {}},
      {"Reciprocal", 0.1f, 10, {}},
      {"Tanh", -6, 6, {}},
      {"Sigmoid", -20, 20, {}},
      {"Relu", -3, 3, {}},
      {"LeakyRelu", -3, 3, {{"alpha", AttrValue::Float(0.2)}}},
      {"Erf", -4, 4, {}},
      {"Gelu", -6, 6, {}},
      {"Gelu", -6, 6, {{"approximate", AttrValue::String("tanh")}}},
      {"Silu", -20, 20, {}},
      {"Softplus", -20, 20, {}},
      {"HardSigmoid", -6, 6, {{"alpha", AttrValue::Float(0.3)}, {"beta", AttrValue::Float(0.4)}}},
      {"HardSwish", -6, 6, {}},
      {"Elu", -6, 3, {{"alpha", AttrValue::Float(0.7)}}},
      {"Selu", -6, 3, {}},
      {"Celu", -6, 3, {{"alpha", AttrValue::Float(2.0)}}},
      {"Floor", -5, 5, {}},
      {"Ceil", -5, 5, {}},
      {"Sign", -3, 3, {}},
      {"Identity", -3, 3, {}},
      {"Cast", -3, 3, {{"to", AttrValue::Type(DType::kF32)}}},
  };
  for (size_t i = 0; i < unary.size(); ++i) {
    FusionCase c(absl::StrCat(unary[i].op, "_", cases.size()), ++seed);
    const int x = c.Input(shapes[i % shapes.size()], unary[i].lo, unary[i].hi);
    c.Output(c.Op(unary[i].op, {x}, unary[i].attrs));
    cases.push_back(std::move(c));
  }
  {
    FusionCase c("Where", ++seed);
    const int cond = c.Input(Shape({4, 1}), 0, 1, DType::kBool);
    c.Output(c.Op("Where", {cond, c.Input(Shape({4, 5})), c.Input(Shape({5}))}));
    cases.push_back(std::move(c));
  }
  {
    FusionCase c("ClipBoth", ++seed);
    const int x = c.Input(Shape({3, 17}), -3, 3);
    c.Output(c.Op("Clip", {x, c.Constant(Tensor::Scalar<float>(-1.0f)), c.Constant(Tensor::Scalar<float>(0.5f))}));
    cases.push_back(std::move(c));
  }
  {
    FusionCase c("ClipMaxOnly", ++seed);
    const int x = c.Input(Shape({1023}), -3, 3);
    const int hi = c.Input(Shape({1}), 0, 1);
    c.Output(c.Op("Clip", {x, -1, hi}));
    cases.push_back(std::move(c));
  }
  {
    FusionCase c("Expand", ++seed);
    const int x = c.Input(Shape({3, 1}));
    const int e = c.Op("Expand", {x, c.Constant(I64({2, 1, 4}))});
    c.Output(c.Op("Relu", {e}));
    cases.push_back(std::move(c));
  }
  {
    FusionCase c("Reshape", ++seed);
    const int x = c.Input(Shape({3, 4}));
    const int r = c.Op("Reshape", {c.Op("Exp", {x}), c.Constant(I64({2, -1}))});
    const int flat = c.Op("Reshape", {x, c.Constant(I64({12}))});
    c.Output(c.Op("Add", {r, c.Input(Shape({6}))}));
    c.Output(flat);  // a view of an input: copied into the result
    cases.push_back(std::move(c));
  }
  {
    // A chain with a multi-use value and two results.
    FusionCase c("Chain", ++seed);
    const int x = c.Input(Shape({5, 17})), b = c.Input(Shape({17})), s = c.Input(Shape({5, 1}));
    const int t = c.Op("Add", {x, b});
    const int g = c.Op("Gelu", {t});
    const int m = c.Op("Mul", {g, s});
    c.Output(m);
    c.Output(c.Op("Sub", {m, c.Op("Tanh", {t})}));
    cases.push_back(std::move(c));
  }
  RunCases(cases);
}

TEST(FusionOutliningTest, ReductionsAndNormalizationsMatchReference) {
  std::vector<FusionCase> cases;
  uint32_t seed = 500;
  struct Reduce {
    const char* op;
    Shape shape;
    std::vector<int64_t> axes;  // empty: no axes operand
    int64_t keepdims;
  };
  for (const Reduce& r :
       {Reduce{"ReduceSum", Shape({3, 17}), {1}, 0}, Reduce{"ReduceMean", Shape({4, 5, 6}), {0, -1}, 1},
        Reduce{"ReduceMax", Shape({1023}), {}, 0}, Reduce{"ReduceMin", Shape({2, 3, 17}), {-2}, 1},
        Reduce{"ReduceSumSquare", Shape({17, 3}), {0}, 0}, Reduce{"ReduceMean", Shape({1}), {0}, 1},
        Reduce{"ReduceSum", Shape({3, 1023}), {-1}, 1}, Reduce{"ReduceMax", Shape({2, 3, 4}), {1, 2}, 0},
        Reduce{"ReduceMin", Shape({17, 3}), {}, 1}}) {
    FusionCase c(absl::StrCat(r.op, "_", cases.size()), ++seed);
    const int x = c.Input(r.shape, -3, 3);
    std::vector<int> operands = {x};
    if (!r.axes.empty()) operands.push_back(c.Constant(I64(r.axes)));
    // An elementwise producer in front, as region fusion makes them.
    operands[0] = c.Op("Abs", {x});
    c.Output(c.Op(r.op, operands, Ints({{"keepdims", r.keepdims}})));
    cases.push_back(std::move(c));
  }
  // Innermost extents that split into chunks of 64, 32, 16 or 8 lanes (two-stage reductions).
  for (const Reduce& r :
       {Reduce{"ReduceSum", Shape({3, 128}), {-1}, 1}, Reduce{"ReduceMean", Shape({2, 3, 64}), {1, 2}, 0},
        Reduce{"ReduceMax", Shape({5, 96}), {1}, 0}, Reduce{"ReduceSumSquare", Shape({16}), {}, 0}}) {
    FusionCase c(absl::StrCat(r.op, "_split_", cases.size()), ++seed);
    const int x = c.Input(r.shape, -3, 3);
    std::vector<int> operands = {x};
    if (!r.axes.empty()) operands.push_back(c.Constant(I64(r.axes)));
    c.Output(c.Op(r.op, operands, Ints({{"keepdims", r.keepdims}})));
    cases.push_back(std::move(c));
  }
  {
    FusionCase c("LogSoftmaxSplit", ++seed);
    c.Output(c.Op("LogSoftmax", {c.Input(Shape({5, 96}), -10, 10)}, Ints({{"axis", -1}})));
    cases.push_back(std::move(c));
  }
  {
    FusionCase c("LayerNormalizationSplit", ++seed);
    AttrMap attrs = Ints({{"axis", -1}});
    attrs["epsilon"] = AttrValue::Float(1e-5);
    c.Output(c.Op("LayerNormalization", {c.Input(Shape({2, 3, 16}), -3, 3), c.Input(Shape({16})), c.Input(Shape({16}))},
                  attrs));
    cases.push_back(std::move(c));
  }
  {
    FusionCase c("ReduceSumNoop", ++seed);
    c.Output(c.Op("ReduceSum", {c.Input(Shape({3, 4}))}, Ints({{"noop_with_empty_axes", 1}})));
    cases.push_back(std::move(c));
  }
  struct Softmax {
    const char* op;
    Shape shape;
    int64_t axis;
  };
  for (const Softmax& s : {Softmax{"Softmax", Shape({3, 17}), -1}, Softmax{"Softmax", Shape({5, 3, 4}), 1},
                           Softmax{"LogSoftmax", Shape({4, 1023}), -1}, Softmax{"LogSoftmax", Shape({17, 3}), 0},
                           Softmax{"Softmax", Shape({1}), 0}, Softmax{"Softmax", Shape({2, 1023}), -1}}) {
    FusionCase c(absl::StrCat(s.op, "_", cases.size()), ++seed);
    const int x = c.Input(s.shape, -10, 10);
    c.Output(c.Op(s.op, {x}, Ints({{"axis", s.axis}})));
    cases.push_back(std::move(c));
  }
  struct LayerNorm {
    Shape x, scale;
    int64_t axis;
    bool bias;
  };
  for (const LayerNorm& l :
       {LayerNorm{Shape({3, 17}), Shape({17}), -1, true}, LayerNorm{Shape({2, 3, 4}), Shape({3, 4}), 1, false},
        LayerNorm{Shape({2, 3, 4}), Shape({4}), -2, true}, LayerNorm{Shape({4, 1023}), Shape({1023}), 1, true},
        LayerNorm{Shape({1, 1}), Shape({1}), -1, true}}) {
    FusionCase c(absl::StrCat("LayerNormalization_", cases.size()), ++seed);
    const int x = c.Input(l.x, -3, 3);
    const int residual = c.Input(l.x, -1, 1);
    std::vector<int> operands = {c.Op("Add", {x, residual}), c.Input(l.scale)};
    if (l.bias) operands.push_back(c.Input(l.scale));
    AttrMap attrs = Ints({{"axis", l.axis}});
    attrs["epsilon"] = AttrValue::Float(1e-3);
    c.Output(c.Op("LayerNormalization", operands, attrs));
    cases.push_back(std::move(c));
  }
  {
    // Softmax of (x * scale + mask), also yielding the masked logits.
    FusionCase c("AttentionSoftmax", ++seed);
    const int x = c.Input(Shape({2, 4, 17}), -3, 3), mask = c.Input(Shape({4, 17}), -1, 0);
    const int logits = c.Op("Add", {c.Op("Mul", {x, c.Constant(Tensor::Scalar<float>(0.125f))}), mask});
    c.Output(c.Op("Softmax", {logits}, Ints({{"axis", -1}})));
    c.Output(logits);
    cases.push_back(std::move(c));
  }
  RunCases(cases);
}

// The math functions codegen expands into polynomials (exp, log, tanh, erf, log1p, expm1)
// over wide ranges, element by element relative to the reference.
TEST(FusionOutliningTest, MathApproximationsAreAccurate) {
  std::vector<FusionCase> cases;
  struct Range {
    const char* op;
    float lo, hi;
  };
  uint32_t seed = 900;
  for (const Range& r :
       {Range{"Exp", -87, 88}, Range{"Log", 1e-30f, 1e30f}, Range{"Log", 0.5f, 2.0f}, Range{"Tanh", -10, 10},
        Range{"Tanh", -0.01f, 0.01f}, Range{"Erf", -5, 5}, Range{"Erf", -0.01f, 0.01f}, Range{"Softplus", -30, 30},
        Range{"Elu", -30, 1}, Range{"Sigmoid", -100, 100}}) {
    FusionCase c(absl::StrCat(r.op, "_", cases.size()), ++seed);
    c.Output(c.Op(r.op, {c.Input(Shape({4096}), r.lo, r.hi)}));
    cases.push_back(std::move(c));
  }
  auto compiled = OutlineAndCompile(cases);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  for (const FusionCase& c : cases) {
    SCOPED_TRACE(c.name());
    auto entry = compiled->module->Lookup(compiled->symbol_of_case[c.name()]);
    ASSERT_TRUE(entry.ok()) << entry.status();
    const Tensor& x = *c.InputTensors()[0];
    std::vector<float> y(x.num_elements());
    Call(*entry, {const_cast<void*>(x.raw_data()), y.data()});
    const auto want = c.Expected()[0]->flat<float>();
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      // Relative error, with an absolute floor of 1e-30 for results that underflow.
      const double error = std::abs(double{y[i]} - want[i]) / std::max(1e-30, std::abs(double{want[i]}));
      worst = std::max(worst, std::isnan(error) ? 1.0 : error);
    }
    std::printf("%-12s max relative error %.3g\n", c.name().c_str(), worst);
    EXPECT_LE(worst, 1e-5);
  }
}

double BestSeconds(int reps, const std::function<void()>& run) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// Figures, printed (not asserted: the machine is shared): a fused chain of 4 elementwise ops
// on 1M floats against the 4 cpu kernels run one by one through RunOp, and softmax over
// [64, 1024] against the cpu Softmax kernel. The results are checked too.
TEST(FusionOutliningTest, FusedCodeAgainstCpuKernels) {
  std::vector<FusionCase> cases;
  FusionCase chain("PerfChain", 7);
  const int x = chain.Input(Shape({1024, 1024})), y = chain.Input(Shape({1024, 1024}));
  const int bias = chain.Input(Shape({1024}));
  const int sum = chain.Op("Add", {x, y});
  const int product = chain.Op("Mul", {sum, x});
  chain.Output(chain.Op("Add", {chain.Op("Tanh", {product}), bias}));
  cases.push_back(std::move(chain));
  FusionCase softmax("PerfSoftmax", 8);
  softmax.Output(softmax.Op("Softmax", {softmax.Input(Shape({64, 1024}), -8, 8)}, Ints({{"axis", -1}})));
  cases.push_back(std::move(softmax));
  auto compiled = OutlineAndCompile(cases);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  RunOpOptions cpu;
  cpu.device = kCpuDevice;

  {
    const FusionCase& c = cases[0];
    auto entry = compiled->module->Lookup(compiled->symbol_of_case[c.name()]);
    ASSERT_TRUE(entry.ok()) << entry.status();
    const std::vector<const Tensor*> in = c.InputTensors();
    std::vector<float> out(in[0]->num_elements());
    const double fused = BestSeconds(10, [&] {
      Call(*entry, {const_cast<void*>(in[0]->raw_data()), const_cast<void*>(in[1]->raw_data()),
                    const_cast<void*>(in[2]->raw_data()), out.data()});
    });
    ExpectNear("chain", *c.Expected()[0], out, 1e-5);
    Tensor t1, t2, t3;
    const double add = BestSeconds(10, [&] { t1 = (*RunOp("Add", {*in[0], *in[1]}, {}, cpu))[0]; });
    const double mul = BestSeconds(10, [&] { t2 = (*RunOp("Mul", {t1, *in[0]}, {}, cpu))[0]; });
    const double tanh = BestSeconds(10, [&] { t3 = (*RunOp("Tanh", {t2}, {}, cpu))[0]; });
    const double relu = BestSeconds(10, [&] { (void)RunOp("Add", {t3, *in[2]}, {}, cpu); });
    const double kernels = add + mul + tanh + relu;
    // Bytes the fused code must move: x, y, the bias (negligible) and the result.
    const double bytes = 3.0 * 4.0 * in[0]->num_elements();
    std::printf(
        "chain Add,Mul,Tanh,Add(bias) on 1M floats: fused %.3f ms (%.1f GB/s), cpu kernels %.3f ms "
        "(Add %.3f Mul %.3f Tanh %.3f Add %.3f), ratio %.2fx\n",
        fused * 1e3, bytes / fused / 1e9, kernels * 1e3, add * 1e3, mul * 1e3, tanh * 1e3, relu * 1e3, kernels / fused);
  }
  {
    const FusionCase& c = cases[1];
    auto entry = compiled->module->Lookup(compiled->symbol_of_case[c.name()]);
    ASSERT_TRUE(entry.ok()) << entry.status();
    const Tensor& in = *c.InputTensors()[0];
    std::vector<float> out(in.num_elements());
    const double fused = BestSeconds(20, [&] { Call(*entry, {const_cast<void*>(in.raw_data()), out.data()}); });
    ExpectNear("softmax", *c.Expected()[0], out, 1e-5);
    const AttrMap attrs = Ints({{"axis", -1}});
    const double kernel = BestSeconds(20, [&] { (void)RunOp("Softmax", {in}, attrs, cpu); });
    const double bytes = 2.0 * 4.0 * in.num_elements();
    std::printf("softmax [64,1024]: fused %.3f ms (%.1f GB/s), cpu kernel %.3f ms (%.1f GB/s), ratio %.2fx\n",
                fused * 1e3, bytes / fused / 1e9, kernel * 1e3, bytes / kernel / 1e9, kernel / fused);
  }
}

}  // namespace
}  // namespace tsr
