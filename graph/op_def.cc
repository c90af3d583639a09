// OpDef, OpDefBuilder, InferenceContext and the generic checks that run before an
// op's own shape function.
#include "graph/op_def.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tsr {

const AttrDef* OpDef::FindAttr(absl::string_view attr_name) const {
  for (const AttrDef& a : attrs) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

const TypeConstraintDef* OpDef::FindTypeConstraint(absl::string_view type_var) const {
  for (const TypeConstraintDef& c : type_constraints) {
    if (c.type_var == type_var) return &c;
  }
  return nullptr;
}

namespace {

int MinCount(const std::vector<ArgDef>& args) {
  int n = 0;
  for (const ArgDef& a : args) {
    if (a.kind == ArgDef::Kind::kSingle) ++n;
    if (a.kind == ArgDef::Kind::kVariadic) n += a.min_count;
  }
  return n;
}

int MaxCount(const std::vector<ArgDef>& args) {
  for (const ArgDef& a : args) {
    if (a.kind == ArgDef::Kind::kVariadic) return -1;
  }
  return static_cast<int>(args.size());
}

// The ArgDef describing slot i (the variadic arg covers all trailing slots).
const ArgDef* ArgForSlot(const std::vector<ArgDef>& args, int i) {
  if (args.empty()) return nullptr;
  if (i < static_cast<int>(args.size())) {
    // A variadic arg before slot i still covers it.
    for (int k = 0; k <= i; ++k) {
      if (args[k].kind == ArgDef::Kind::kVariadic) return &args[k];
    }
    return &args[i];
  }
  return args.back().kind == ArgDef::Kind::kVariadic ? &args.back() : nullptr;
}

std::string DTypeList(absl::Span<const DType> types) {
  return absl::StrJoin(types, ", ", [](std::string* out, DType t) { absl::StrAppend(out, DTypeName(t)); });
}

}  // namespace

int OpDef::min_inputs() const { return MinCount(inputs); }
int OpDef::max_inputs() const { return MaxCount(inputs); }
int OpDef::min_outputs() const { return MinCount(outputs); }
int OpDef::max_outputs() const { return MaxCount(outputs); }

OpDefBuilder::OpDefBuilder(std::string name) { def_.name = std::move(name); }

OpDefBuilder& OpDefBuilder::Summary(std::string summary) {
  def_.summary = std::move(summary);
  return *this;
}
OpDefBuilder& OpDefBuilder::Input(std::string name, std::string type_var) {
  def_.inputs.push_back({std::move(name), std::move(type_var), ArgDef::Kind::kSingle, 1});
  return *this;
}
OpDefBuilder& OpDefBuilder::OptionalInput(std::string name, std::string type_var) {
  def_.inputs.push_back({std::move(name), std::move(type_var), ArgDef::Kind::kOptional, 0});
  return *this;
}
OpDefBuilder& OpDefBuilder::VariadicInput(std::string name, std::string type_var, int min_count) {
  def_.inputs.push_back({std::move(name), std::move(type_var), ArgDef::Kind::kVariadic, min_count});
  return *this;
}
OpDefBuilder& OpDefBuilder::Output(std::string name, std::string type_var) {
  def_.outputs.push_back({std::move(name), std::move(type_var), ArgDef::Kind::kSingle, 1});
  return *this;
}
OpDefBuilder& OpDefBuilder::OptionalOutput(std::string name, std::string type_var) {
  def_.outputs.push_back({std::move(name), std::move(type_var), ArgDef::Kind::kOptional, 0});
  return *this;
}
OpDefBuilder& OpDefBuilder::VariadicOutput(std::string name, std::string type_var, int min_count) {
  def_.outputs.push_back({std::move(name), std::move(type_var), ArgDef::Kind::kVariadic, min_count});
  return *this;
}
OpDefBuilder& OpDefBuilder::TypeConstraint(std::string type_var, absl::Span<const DType> allowed) {
  def_.type_constraints.push_back({std::move(type_var), std::vector<DType>(allowed.begin(), allowed.end())});
  return *this;
}
OpDefBuilder& OpDefBuilder::Attr(std::string name, AttrType type, AttrValue default_value) {
  def_.attrs.push_back({std::move(name), type, std::move(default_value), false});
  return *this;
}
OpDefBuilder& OpDefBuilder::RequiredAttr(std::string name, AttrType type) {
  def_.attrs.push_back({std::move(name), type, std::nullopt, true});
  return *this;
}
OpDefBuilder& OpDefBuilder::OptionalAttr(std::string name, AttrType type) {
  def_.attrs.push_back({std::move(name), type, std::nullopt, false});
  return *this;
}
OpDefBuilder& OpDefBuilder::Infer(ShapeFn fn) {
  def_.infer = std::move(fn);
  return *this;
}
OpDefBuilder& OpDefBuilder::Flops(FlopsFn fn) {
  def_.flops = std::move(fn);
  return *this;
}
OpDefBuilder& OpDefBuilder::Stateful() {
  def_.stateful = true;
  return *this;
}

OpDefBuilder& OpDefBuilder::Collective() {
  def_.stateful = true;
  def_.collective = true;
  return *this;
}

OpDefBuilder& OpDefBuilder::UpdatesVariable(int input) {
  def_.variable_updates.push_back(input);
  def_.stateful = true;
  return *this;
}

InferenceContext::InferenceContext(const OpDef& def, absl::string_view node_name, const AttrMap& attrs,
                                   std::vector<std::optional<TensorType>> input_types,
                                   std::vector<const Tensor*> input_values)
    : AttrReader(def, attrs),
      def_(def),
      node_name_(node_name),
      inputs_(std::move(input_types)),
      values_(std::move(input_values)) {}

void InferenceContext::set_output(int i, TensorType type) {
  if (i < 0 || i >= kMaxNodeOutputs) {
    too_many_outputs_ = true;
    return;
  }
  if (i >= static_cast<int>(outputs_.size())) outputs_.resize(i + 1);
  outputs_[i] = std::move(type);
}

absl::Status InferenceContext::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat("node '", node_name_, "' (", def_.name, "): ", message));
}

namespace {

absl::Status CheckAttrs(const OpDef& def, const InferenceContext& ctx, const AttrMap& given) {
  for (const auto& [name, value] : given) {
    const AttrDef* a = def.FindAttr(name);
    if (a == nullptr) {
      std::vector<std::string> known;
      for (const AttrDef& d : def.attrs) known.push_back(d.name);
      return ctx.Error(absl::StrCat("unknown attribute '", name, "'",
                                    known.empty() ? std::string(" (the op takes none)")
                                                  : absl::StrCat(" (known: ", absl::StrJoin(known, ", "), ")")));
    }
    if (value.type() != a->type) {
      return ctx.Error(absl::StrCat("attribute '", name, "' has type ", AttrTypeName(value.type()), " but ",
                                    AttrTypeName(a->type), " is required"));
    }
  }
  for (const AttrDef& a : def.attrs) {
    if (a.required && given.find(a.name) == given.end()) {
      return ctx.Error(absl::StrCat("required attribute '", a.name, "' (", AttrTypeName(a.type), ") is missing"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckInputs(const OpDef& def, const InferenceContext& ctx) {
  const int n = ctx.num_inputs();
  const int min = def.min_inputs();
  const int max = def.max_inputs();
  if (n < min || (max >= 0 && n > max)) {
    std::string expected = max < 0      ? absl::StrCat("at least ", min)
                           : min == max ? absl::StrCat(min)
                                        : absl::StrCat(min, " to ", max);
    return ctx.Error(absl::StrCat("has ", n, " inputs but ", expected, " expected"));
  }
  std::map<std::string, std::pair<DType, int>, std::less<>> bound;  // type var -> (dtype, first slot)
  for (int i = 0; i < n; ++i) {
    const ArgDef* arg = ArgForSlot(def.inputs, i);
    if (!ctx.has_input(i)) {
      if (arg->kind != ArgDef::Kind::kOptional) {
        return ctx.Error(absl::StrCat("input ", i, " ('", arg->name, "') is required but absent"));
      }
      continue;
    }
    const TensorType& t = ctx.input(i);
    if (!IsValidDType(t.dtype)) {
      return ctx.Error(absl::StrCat("input ", i, " ('", arg->name, "') has no valid type"));
    }
    if (absl::Status s = t.shape.Validate(); !s.ok()) {
      return ctx.Error(absl::StrCat("input ", i, " ('", arg->name, "'): ", s.message()));
    }
    if (const TypeConstraintDef* c = def.FindTypeConstraint(arg->type_var)) {
      if (!Contains(c->allowed, t.dtype)) {
        return ctx.Error(absl::StrCat("input ", i, " ('", arg->name, "') has dtype ", DTypeName(t.dtype),
                                      " but one of {", DTypeList(c->allowed), "} is required"));
      }
    }
    auto [it, inserted] = bound.try_emplace(arg->type_var, t.dtype, i);
    if (!inserted && it->second.first != t.dtype) {
      return ctx.Error(absl::StrCat("input ", i, " ('", arg->name, "') has dtype ", DTypeName(t.dtype), " but input ",
                                    it->second.second, " has ", DTypeName(it->second.first), "; they must match (type ",
                                    arg->type_var, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckOutputs(const OpDef& def, const InferenceContext& ctx) {
  const int n = ctx.num_outputs();
  const int min = def.min_outputs();
  const int max = def.max_outputs();
  if (n < std::max(min, 1) || (max >= 0 && n > max)) {
    return absl::InternalError(absl::StrCat("node '", ctx.node_name(), "' (", def.name, "): shape inference produced ",
                                            n, " outputs (expected ", min, " to ", max, ")"));
  }
  for (int i = 0; i < n; ++i) {
    const TensorType& t = ctx.output(i);
    if (!IsValidDType(t.dtype)) {
      return absl::InternalError(absl::StrCat("node '", ctx.node_name(), "' (", def.name,
                                              "): shape inference left output ", i, " without a dtype"));
    }
    if (absl::Status s = t.shape.Validate(); !s.ok()) {
      return ctx.Error(absl::StrCat("output ", i, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<TensorType>> InferOutputTypes(const OpDef& def, absl::string_view node_name,
                                                         const AttrMap& attrs,
                                                         std::vector<std::optional<TensorType>> input_types,
                                                         std::vector<const Tensor*> input_values) {
  InferenceContext ctx(def, node_name, attrs, std::move(input_types), std::move(input_values));
  if (absl::Status s = CheckAttrs(def, ctx, attrs); !s.ok()) return s;
  if (absl::Status s = CheckInputs(def, ctx); !s.ok()) return s;
  if (!def.infer) return absl::InternalError(absl::StrCat("op ", def.name, " has no shape function"));
  if (absl::Status s = def.infer(ctx); !s.ok()) return s;
  if (ctx.too_many_outputs_) {
    return ctx.Error(absl::StrCat("would have more than ", kMaxNodeOutputs, " outputs (the limit of one node)"));
  }
  if (absl::Status s = CheckOutputs(def, ctx); !s.ok()) return s;
  return ctx.outputs();
}

int64_t EstimateFlops(const OpDef& def, absl::string_view node_name, const AttrMap& attrs,
                      std::vector<std::optional<TensorType>> input_types, std::vector<const Tensor*> input_values,
                      const std::vector<TensorType>& output_types) {
  if (!def.flops) return 0;
  for (auto& t : input_types) {
    if (t.has_value()) t->shape = t->shape.BindBatch(1);
  }
  InferenceContext ctx(def, node_name, attrs, std::move(input_types), std::move(input_values));
  for (size_t i = 0; i < output_types.size(); ++i) {
    ctx.set_output(static_cast<int>(i), TensorType(output_types[i].dtype, output_types[i].shape.BindBatch(1)));
  }
  return def.flops(ctx);
}

}  // namespace tsr
