// `OpDef`: the definition of one op — its signature (inputs, outputs, type
// constraints), its attributes with types and defaults, its shape/dtype inference,
// a FLOP estimate, and the slot for its gradient (filled by autodiff).
//
// `OpDefBuilder` declares an op in a few lines:
//
//   OpDefBuilder("LeakyRelu")
//       .Summary("x if x >= 0 else alpha * x")
//       .Input("X", "T").Output("Y", "T")
//       .TypeConstraint("T", kFloatDTypes)
//       .Attr("alpha", AttrType::kFloat, AttrValue::Float(0.01))
//       .Infer(SameAsFirstInput)
//       .Build();
//
// Semantics follow ONNX wherever ONNX defines the op (latest opset; inputs that
// newer opsets take as tensors — Reshape's shape, Slice's starts — are inputs here too).
#ifndef TESSERA_GRAPH_OP_DEF_H_
#define TESSERA_GRAPH_OP_DEF_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "graph/attr_reader.h"
#include "graph/attribute.h"
#include "graph/dtype.h"
#include "graph/tensor.h"
#include "graph/tensor_type.h"

namespace tsr {

class InferenceContext;
class GradientContext;

// Most outputs one node may have (Split's num_outputs from a hostile file would
// otherwise size an allocation).
inline constexpr int kMaxNodeOutputs = 1 << 16;  // defined by autodiff

using ShapeFn = std::function<absl::Status(InferenceContext&)>;
// Estimated floating-point operations of one execution, given inferred types
// (symbolic batch dims counted as 1).
using FlopsFn = std::function<int64_t(const InferenceContext&)>;
using GradientFn = std::function<absl::Status(GradientContext&)>;

struct ArgDef {
  enum class Kind { kSingle, kOptional, kVariadic };
  std::string name;
  // Arguments with the same type variable have the same dtype; the variable's
  // TypeConstraint lists the dtypes it may take.
  std::string type_var;
  Kind kind = Kind::kSingle;
  int min_count = 1;  // for kVariadic
};

struct AttrDef {
  std::string name;
  AttrType type = AttrType::kInt;
  std::optional<AttrValue> default_value;
  bool required = false;
};

struct TypeConstraintDef {
  std::string type_var;
  std::vector<DType> allowed;
};

struct OpDef {
  std::string name;
  std::string summary;
  std::vector<ArgDef> inputs;
  std::vector<ArgDef> outputs;
  std::vector<AttrDef> attrs;
  std::vector<TypeConstraintDef> type_constraints;
  ShapeFn infer;
  FlopsFn flops;
  GradientFn gradient;
  // Reads or writes state or randomness (Variable, Dropout): never folded or CSE'd.
  bool stateful = false;
  // Communicates with other devices (AllReduce, ...): every device must issue these in
  // the same order, so runtimes never reorder them (the executor chains them in
  // topological order). Implies stateful.
  bool collective = false;
  // Optimizer ops: once the node ran, its output i becomes the new value of the
  // Variable read by input variable_updates[i] (which must be a Variable node's
  // output; the verifier checks it). Readers earlier in the same run keep the old
  // value (a compiled program writes an update in place only where no step after it
  // reads the variable: compiler/pipeline/executable_builder.cc).
  std::vector<int> variable_updates;

  const AttrDef* FindAttr(absl::string_view attr_name) const;
  const TypeConstraintDef* FindTypeConstraint(absl::string_view type_var) const;
  // Inclusive bounds on the number of input slots; max is -1 when variadic.
  int min_inputs() const;
  int max_inputs() const;
  int min_outputs() const;
  int max_outputs() const;
};

class OpDefBuilder {
 public:
  explicit OpDefBuilder(std::string name);

  OpDefBuilder& Summary(std::string summary);
  OpDefBuilder& Input(std::string name, std::string type_var);
  OpDefBuilder& OptionalInput(std::string name, std::string type_var);
  // Must be the last input.
  OpDefBuilder& VariadicInput(std::string name, std::string type_var, int min_count = 1);
  OpDefBuilder& Output(std::string name, std::string type_var);
  OpDefBuilder& OptionalOutput(std::string name, std::string type_var);
  OpDefBuilder& VariadicOutput(std::string name, std::string type_var, int min_count = 1);
  OpDefBuilder& TypeConstraint(std::string type_var, absl::Span<const DType> allowed);
  // An attribute with a default value.
  OpDefBuilder& Attr(std::string name, AttrType type, AttrValue default_value);
  // An attribute that must be given.
  OpDefBuilder& RequiredAttr(std::string name, AttrType type);
  // An attribute that may be absent (no default).
  OpDefBuilder& OptionalAttr(std::string name, AttrType type);
  OpDefBuilder& Infer(ShapeFn fn);
  OpDefBuilder& Flops(FlopsFn fn);
  OpDefBuilder& Stateful();
  // Marks a collective op (OpDef::collective); makes the op stateful.
  OpDefBuilder& Collective();
  // The next output (in declaration order) replaces the Variable read by `input`;
  // makes the op stateful.
  OpDefBuilder& UpdatesVariable(int input);

  OpDef Build() { return std::move(def_); }

 private:
  OpDef def_;
};

// What a ShapeFn sees: the node's input types (and constant input values when
// known), its attributes with defaults applied; it sets the output types.
class InferenceContext : public AttrReader {
 public:
  InferenceContext(const OpDef& def, absl::string_view node_name, const AttrMap& attrs,
                   std::vector<std::optional<TensorType>> input_types, std::vector<const Tensor*> input_values);

  const OpDef& op_def() const { return def_; }
  absl::string_view node_name() const { return node_name_; }

  // Number of input slots (absent optional inputs included).
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  bool has_input(int i) const { return i >= 0 && i < num_inputs() && inputs_[i].has_value(); }
  // Requires has_input(i).
  const TensorType& input(int i) const { return *inputs_[i]; }
  const Shape& input_shape(int i) const { return inputs_[i]->shape; }
  DType input_dtype(int i) const { return inputs_[i]->dtype; }
  int input_rank(int i) const { return inputs_[i]->shape.rank(); }
  // The value of input i when it is a known constant, else nullptr.
  const Tensor* input_value(int i) const {
    return i >= 0 && i < static_cast<int>(values_.size()) ? values_[i] : nullptr;
  }

  // Output indices at or above kMaxNodeOutputs are refused (inference then fails).
  void set_output(int i, TensorType type);
  void set_output(int i, DType dtype, Shape shape) { set_output(i, TensorType(dtype, std::move(shape))); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  const TensorType& output(int i) const { return outputs_[i]; }
  const std::vector<TensorType>& outputs() const { return outputs_; }

  // InvalidArgument "node 'name' (Op): message".
  absl::Status Error(absl::string_view message) const;

 private:
  const OpDef& def_;
  std::string node_name_;
  std::vector<std::optional<TensorType>> inputs_;
  std::vector<const Tensor*> values_;
  std::vector<TensorType> outputs_;
  bool too_many_outputs_ = false;

  friend absl::StatusOr<std::vector<TensorType>> InferOutputTypes(const OpDef&, absl::string_view, const AttrMap&,
                                                                  std::vector<std::optional<TensorType>>,
                                                                  std::vector<const Tensor*>);
};

// Checks the attributes (unknown names, wrong types, missing required ones), the
// input count and presence, and the type constraints; runs the op's ShapeFn and
// checks its outputs. Errors name the node and op.
absl::StatusOr<std::vector<TensorType>> InferOutputTypes(const OpDef& def, absl::string_view node_name,
                                                         const AttrMap& attrs,
                                                         std::vector<std::optional<TensorType>> input_types,
                                                         std::vector<const Tensor*> input_values);

// FLOPs of a node given its (already inferred) input types; 0 when the op has no
// estimate. Symbolic batch dims count as 1.
int64_t EstimateFlops(const OpDef& def, absl::string_view node_name, const AttrMap& attrs,
                      std::vector<std::optional<TensorType>> input_types, std::vector<const Tensor*> input_values,
                      const std::vector<TensorType>& output_types);

}  // namespace tsr

#endif  // TESSERA_GRAPH_OP_DEF_H_
