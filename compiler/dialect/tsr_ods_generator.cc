// GenerateTsrOds: the ODS (TableGen) definition of one `tsr` dialect op per op in
// OpRegistry::Global(), except the ops written by hand in TsrOps.td. Its output is checked
// in as compiler/dialect/TsrGeneratedOps.td (as TensorFlow checks in tf_generated_ops.td);
// tests/compiler/dialect/generated_ops_test.cc fails when the registry has drifted from it.
//
//   build/bin/tsr-ods-gen > compiler/dialect/TsrGeneratedOps.td
//
// Only the op signature comes from here: operands (single, Optional<>, Variadic<>), results,
// attributes with their defaults, and Pure for ops the registry does not mark stateful.
// Shapes and the same-dtype rule of type variables are checked by the shared verifier
// (RegistryVerified trait), which runs the registry's shape function.
#include "compiler/dialect/tsr_ods_generator.h"

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "graph/op_registry.h"

namespace tsr {
namespace {

// Ops declared in TsrOps.td instead (Constant holds an ElementsAttr and is ConstantLike).
const std::set<std::string>& HandWrittenOps() {
  static const auto* ops = new std::set<std::string>{"Constant"};
  return *ops;
}

// Ops whose folder (fold()) or canonicalization patterns live in tsr_folders.cc.
const std::map<std::string, std::vector<std::string>>& ExtraOdsLines() {
  static const auto* lines = new std::map<std::string, std::vector<std::string>>{
      {"Identity", {"let hasFolder = 1;"}},
      {"Add", {"let hasFolder = 1;"}},
      {"Mul", {"let hasFolder = 1;"}},
      {"Transpose", {"let hasFolder = 1;", "let hasCanonicalizer = 1;"}},
      {"Reshape", {"let hasFolder = 1;", "let hasCanonicalizer = 1;"}},
  };
  return *lines;
}

std::string ElementTypeName(DType d) {
  switch (d) {
    case DType::kF32:
      return "F32";
    case DType::kF64:
      return "F64";
    case DType::kF16:
      return "F16";
    case DType::kBF16:
      return "BF16";
    case DType::kI8:
      return "I8";
    case DType::kU8:
      return "UI8";
    case DType::kI32:
      return "I32";
    case DType::kI64:
      return "I64";
    case DType::kBool:
      return "I1";
    case DType::kInvalid:
      break;
  }
  return "";
}

std::string TensorConstraint(const OpDef& def, const ArgDef& arg) {
  const TypeConstraintDef* tc = def.FindTypeConstraint(arg.type_var);
  if (tc == nullptr) return "Tsr_Tensor";
  std::vector<std::string> types;
  for (DType d : tc->allowed) types.push_back(ElementTypeName(d));
  return absl::StrCat("RankedTensorOf<[", absl::StrJoin(types, ", "), "]>");
}

std::string ArgConstraint(const OpDef& def, const ArgDef& arg) {
  const std::string t = TensorConstraint(def, arg);
  switch (arg.kind) {
    case ArgDef::Kind::kSingle:
      return t;
    case ArgDef::Kind::kOptional:
      return absl::StrCat("Optional<", t, ">");
    case ArgDef::Kind::kVariadic:
      return absl::StrCat("Variadic<", t, ">");
  }
  return t;
}

// ODS default values are C++ expressions handed to the attribute's builder.
std::string DefaultExpr(const AttrValue& v) {
  switch (v.type()) {
    case AttrType::kInt:
      return absl::StrCat(v.i());
    case AttrType::kFloat:
      if (std::isinf(v.f())) return v.f() > 0 ? "INFINITY" : "-INFINITY";
      return absl::StrFormat("%.17g", v.f());
    case AttrType::kString:
      return absl::StrCat("\\\"", absl::CEscape(v.s()), "\\\"");
    case AttrType::kBool:
      return v.b() ? "true" : "false";
    case AttrType::kInts:
      return absl::StrCat("{", absl::StrJoin(v.ints(), ", "), "}");
    case AttrType::kFloats: {
      std::vector<std::string> parts;
      for (double f : v.floats()) parts.push_back(absl::StrFormat("%.17g", f));
      return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
    }
    default:
      return "";
  }
}

std::string AttrStorage(AttrType type) {
  switch (type) {
    case AttrType::kInt:
      return "I64Attr";
    case AttrType::kFloat:
      return "F64Attr";
    case AttrType::kString:
      return "StrAttr";
    case AttrType::kBool:
      return "BoolAttr";
    case AttrType::kInts:
      return "DenseI64ArrayAttr";
    case AttrType::kFloats:
      return "DenseF64ArrayAttr";
    case AttrType::kStrings:
      return "StrArrayAttr";
    case AttrType::kTensor:
      return "ElementsAttr";
    case AttrType::kType:
      return "TypeAttr";
    case AttrType::kShape:
      return "Tsr_ShapeAttr";
  }
  return "";
}

std::string AttrDecl(const AttrDef& a) {
  const std::string storage = AttrStorage(a.type);
  std::string decl;
  if (a.required) {
    decl = storage;
  } else if (a.default_value.has_value() && !DefaultExpr(*a.default_value).empty()) {
    decl = absl::StrCat("DefaultValuedAttr<", storage, ", \"", DefaultExpr(*a.default_value), "\">");
  } else {
    // No default, or one ODS cannot spell (tensor, dtype, shape): the registry applies it.
    decl = absl::StrCat("OptionalAttr<", storage, ">");
  }
  return absl::StrCat(decl, ":$", a.name);
}

// ODS derives accessor names (getFooBar) from operand, result and attribute names; two names
// that map to the same accessor would not compile. Attribute names are kept (the conversion
// matches them by name); colliding operand/result names get a suffix (they are positional).
std::string AccessorKey(const std::string& name) {
  return absl::AsciiStrToLower(absl::StrReplaceAll(name, {{"_", ""}}));
}

std::string UniqueName(const std::string& name, const char* suffix, std::set<std::string>& used) {
  std::string n = name;
  while (used.count(AccessorKey(n)) > 0) n += suffix;
  used.insert(AccessorKey(n));
  return n;
}

int CountNonSingle(const std::vector<ArgDef>& args) {
  int n = 0;
  for (const ArgDef& a : args) n += a.kind != ArgDef::Kind::kSingle;
  return n;
}

std::string TdString(absl::string_view s) { return absl::StrCat("\"", absl::CEscape(s), "\""); }

void AppendOp(const OpDef& def, std::string& out) {
  std::vector<std::string> traits = {"Tsr_RegistryVerified"};
  if (!def.stateful) traits.push_back("Pure");
  const bool operand_segments = CountNonSingle(def.inputs) > 1;
  const bool result_segments = CountNonSingle(def.outputs) > 1;
  if (operand_segments) traits.push_back("AttrSizedOperandSegments");
  if (result_segments) traits.push_back("AttrSizedResultSegments");

  std::set<std::string> used;
  // Reserved by ODS-generated members of every op.
  for (const char* r : {"operands", "results", "attributes", "properties", "odsoperands", "odsresults", "type",
                        "operation", "context", "loc", "name"}) {
    used.insert(r);
  }
  std::vector<std::string> args;
  for (const AttrDef& a : def.attrs) {
    used.insert(AccessorKey(a.name));
    used.insert(AccessorKey(a.name + "Attr"));
  }
  for (const ArgDef& in : def.inputs) {
    args.push_back(absl::StrCat(ArgConstraint(def, in), ":$", UniqueName(in.name, "_in", used)));
  }
  for (const AttrDef& a : def.attrs) args.push_back(AttrDecl(a));
  std::vector<std::string> results;
  for (const ArgDef& out : def.outputs) {
    results.push_back(absl::StrCat(ArgConstraint(def, out), ":$", UniqueName(out.name, "_out", used)));
  }

  absl::StrAppend(&out, "def Tsr_", def.name, "Op : Tsr_Op<\"", def.name, "\", [", absl::StrJoin(traits, ", "),
                  "]> {\n");
  absl::StrAppend(&out, "  let summary = ", TdString(def.summary), ";\n");
  absl::StrAppend(&out, "  let arguments = (ins", args.empty() ? "" : "\n    ", absl::StrJoin(args, ",\n    "), ");\n");
  absl::StrAppend(&out, "  let results = (outs", results.empty() ? "" : "\n    ", absl::StrJoin(results, ",\n    "),
                  ");\n");
  // The short form needs operand/result groups that the `operands` directive can split;
  // ops with segment-size attributes keep the generic form.
  if (!operand_segments && !result_segments) {
    absl::StrAppend(&out, "  let assemblyFormat = \"operands attr-dict `:` functional-type(operands, results)\";\n");
  }
  auto extra = ExtraOdsLines().find(def.name);
  if (extra != ExtraOdsLines().end()) {
    for (const std::string& line : extra->second) absl::StrAppend(&out, "  ", line, "\n");
  }
  absl::StrAppend(&out, "}\n\n");
}

}  // namespace

std::string GenerateTsrOds(const OpRegistry& registry) {
  std::string out =
      "// GENERATED by tsr-ods-gen (compiler/dialect/tsr_ods_generator.cc) from OpRegistry::Global():\n"
      "// one tsr op per registered graph op not written by hand in TsrOps.td. Do not edit;\n"
      "// regenerate with the command printed by tests/compiler/dialect/generated_ops_test.cc.\n\n"
      "#ifndef TSR_GENERATED_OPS\n#define TSR_GENERATED_OPS\n\n"
      "include \"compiler/dialect/TsrBase.td\"\n\n";
  for (const std::string& name : registry.OpNames()) {
    if (HandWrittenOps().count(name) > 0) continue;
    AppendOp(*registry.Find(name), out);
  }
  absl::StrAppend(&out, "#endif  // TSR_GENERATED_OPS\n");
  return out;
}

}  // namespace tsr
