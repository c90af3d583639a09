// Graph input/output slots <-> tsr operands/results (see tsr_op_signature.h).
#include "compiler/dialect/tsr_op_signature.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/dialect/tsr_type_conversion.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::tsr {

using ::tsr::ArgDef;

bool NeedsSegmentSizes(const std::vector<ArgDef>& args) {
  int groups = 0;
  for (const ArgDef& a : args) groups += a.kind != ArgDef::Kind::kSingle;
  return groups > 1;
}

absl::StatusOr<::tsr::AttrMap> NodeAttrs(Operation* op, const ::tsr::OpDef& def) {
  ::tsr::AttrMap attrs;
  for (const ::tsr::AttrDef& a : def.attrs) {
    std::optional<Attribute> attr = op->getInherentAttr(a.name);
    if (!attr.has_value() || !*attr) continue;
    absl::StatusOr<::tsr::AttrValue> value = ToAttrValue(*attr, a.type);
    if (!value.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("attribute '", a.name, "' ", value.status().message()));
    }
    attrs.emplace(a.name, *std::move(value));
  }
  return attrs;
}

absl::StatusOr<std::vector<std::optional<Value>>> InputSlots(Operation* op, const ::tsr::OpDef& def) {
  const int n = static_cast<int>(op->getNumOperands());
  std::vector<int32_t> sizes;
  if (NeedsSegmentSizes(def.inputs)) {
    std::optional<Attribute> attr = op->getInherentAttr("operandSegmentSizes");
    auto segments = attr ? llvm::dyn_cast_or_null<DenseI32ArrayAttr>(*attr) : DenseI32ArrayAttr();
    if (!segments || segments.size() != static_cast<int64_t>(def.inputs.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("needs operandSegmentSizes with ", def.inputs.size(), " entries (one per input group)"));
    }
    sizes.assign(segments.asArrayRef().begin(), segments.asArrayRef().end());
  } else {
    int singles = 0;
    for (const ArgDef& a : def.inputs) singles += a.kind == ArgDef::Kind::kSingle;
    for (const ArgDef& a : def.inputs) sizes.push_back(a.kind == ArgDef::Kind::kSingle ? 1 : n - singles);
  }
  std::vector<std::optional<Value>> slots;
  int next = 0;
  for (size_t g = 0; g < def.inputs.size(); ++g) {
    const ArgDef& a = def.inputs[g];
    const int size = sizes[g];
    const bool ok = a.kind == ArgDef::Kind::kSingle     ? size == 1
                    : a.kind == ArgDef::Kind::kOptional ? size == 0 || size == 1
                                                        : size >= a.min_count;
    if (!ok || next + size > n) {
      return absl::InvalidArgumentError(absl::StrCat("has ", n, " operands, which do not fit input '", a.name, "' (",
                                                     size, " operands given to it)"));
    }
    if (a.kind == ArgDef::Kind::kOptional && size == 0) {
      slots.push_back(std::nullopt);
      continue;
    }
    for (int i = 0; i < size; ++i) slots.push_back(op->getOperand(next++));
  }
  if (next != n) return absl::InvalidArgumentError(absl::StrCat("has ", n, " operands but the inputs take ", next));
  // Trailing absent optional inputs are the same as omitted ones in a graph node.
  while (!slots.empty() && !slots.back().has_value()) slots.pop_back();
  return slots;
}

absl::StatusOr<OperandLayout> OperandsFromSlots(const ::tsr::OpDef& def,
                                                const std::vector<std::optional<Value>>& slots) {
  OperandLayout layout;
  size_t k = 0;
  for (const ArgDef& a : def.inputs) {
    switch (a.kind) {
      case ArgDef::Kind::kSingle:
        if (k >= slots.size() || !slots[k].has_value()) {
          return absl::InvalidArgumentError(absl::StrCat("input '", a.name, "' (slot ", k, ") is required"));
        }
        layout.operands.push_back(*slots[k++]);
        layout.segment_sizes.push_back(1);
        break;
      case ArgDef::Kind::kOptional:
        if (k < slots.size() && slots[k].has_value()) {
          layout.operands.push_back(*slots[k]);
          layout.segment_sizes.push_back(1);
        } else {
          layout.segment_sizes.push_back(0);
        }
        ++k;
        break;
      case ArgDef::Kind::kVariadic: {
        int32_t count = 0;
        for (; k < slots.size(); ++k, ++count) {
          if (!slots[k].has_value()) {
            return absl::InvalidArgumentError(
                absl::StrCat("variadic input '", a.name, "' has an absent element at slot ", k));
          }
          layout.operands.push_back(*slots[k]);
        }
        layout.segment_sizes.push_back(count);
        break;
      }
    }
  }
  if (k < slots.size()) {
    return absl::InvalidArgumentError(absl::StrCat(slots.size(), " inputs given but the op takes at most ", k));
  }
  return layout;
}

absl::StatusOr<llvm::SmallVector<int32_t>> ResultSegmentSizes(const ::tsr::OpDef& def, int num_results) {
  int rest = num_results;
  for (const ArgDef& a : def.outputs) rest -= a.kind == ArgDef::Kind::kSingle;
  llvm::SmallVector<int32_t> sizes;
  for (const ArgDef& a : def.outputs) {
    int32_t size = 1;
    if (a.kind == ArgDef::Kind::kOptional) {
      size = rest > 0 ? 1 : 0;
      rest -= size;
    } else if (a.kind == ArgDef::Kind::kVariadic) {
      size = std::max(rest, 0);
      rest -= size;
    }
    sizes.push_back(size);
  }
  if (rest != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(num_results, " results do not fit the op's ", def.outputs.size(), " output groups"));
  }
  return sizes;
}

}  // namespace mlir::tsr
