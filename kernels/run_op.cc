// RunOp: single-op execution on concrete tensors.
#include "kernels/run_op.h"

#include "absl/strings/str_cat.h"
#include "graph/op_registry.h"
#include "graph/status_macros.h"
#include "kernels/poison.h"

namespace tsr {

absl::StatusOr<std::vector<Tensor>> RunOp(absl::string_view op, const std::vector<std::optional<Tensor>>& inputs,
                                          const AttrMap& attrs, const RunOpOptions& options) {
  TSR_ASSIGN_OR_RETURN(const OpDef* def, OpRegistry::Global().Lookup(op));
  std::vector<std::optional<TensorType>> types;
  std::vector<const Tensor*> values;
  std::vector<const Tensor*> kernel_inputs;
  for (const std::optional<Tensor>& t : inputs) {
    types.push_back(t.has_value() ? std::optional<TensorType>(t->type()) : std::nullopt);
    values.push_back(t.has_value() ? &*t : nullptr);
    kernel_inputs.push_back(t.has_value() ? &*t : nullptr);
  }
  const std::string node_name = absl::StrCat(op);
  TSR_ASSIGN_OR_RETURN(std::vector<TensorType> out_types, InferOutputTypes(*def, node_name, attrs, types, values));
  if (options.outputs.has_value()) {
    if (*options.outputs < 1 || static_cast<size_t>(*options.outputs) > out_types.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("RunOp: ", op, " has ", out_types.size(), " outputs; ", *options.outputs, " were asked for"));
    }
    out_types.resize(static_cast<size_t>(*options.outputs));
  }
  std::vector<Tensor> outputs;
  outputs.reserve(out_types.size());
  for (const TensorType& t : out_types) {
    TSR_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(t.dtype, t.shape));
    FillWithPoison(out);
    outputs.push_back(std::move(out));
  }
  std::vector<Tensor*> out_ptrs;
  for (Tensor& t : outputs) out_ptrs.push_back(&t);

  const DType dtype = KernelDType(kernel_inputs, out_ptrs);
  const KernelRegistry& registry = KernelRegistry::Global();
  const KernelFn* fn = registry.Find(op, options.device, dtype);
  if (fn == nullptr && options.fall_back_to_reference) fn = registry.Find(op, kReferenceDevice, dtype);
  if (fn == nullptr) {
    TSR_ASSIGN_OR_RETURN(fn, registry.Lookup(op, options.device, dtype));
  }
  KernelContext ctx(*def, node_name, attrs, std::move(kernel_inputs), std::move(out_ptrs));
  ctx.set_parallel_for(options.parallel_for);
  ctx.set_rng_key(options.seed, options.step);
  TSR_RETURN_IF_ERROR((*fn)(ctx));
  return outputs;
}

}  // namespace tsr
