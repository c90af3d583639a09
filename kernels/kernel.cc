// KernelContext and KernelRegistry.
#include "kernels/kernel.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "kernels/register_kernels.h"

namespace tsr {

KernelContext::KernelContext(const OpDef& def, absl::string_view node_name, const AttrMap& attrs,
                             std::vector<const Tensor*> inputs, std::vector<Tensor*> outputs)
    : AttrReader(def, attrs),
      def_(def),
      node_name_(node_name),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)) {}

void RunParallelFor(const ParallelForFn& parallel_for, int64_t n, int64_t cost_per_item,
                    const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (parallel_for) {
    parallel_for(n, cost_per_item, fn);
  } else {
    fn(0, n);
  }
}

void KernelContext::ParallelFor(int64_t n, int64_t cost_per_item,
                                const std::function<void(int64_t, int64_t)>& fn) const {
  RunParallelFor(parallel_for_, n, cost_per_item, fn);
}

absl::Status KernelContext::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat("node '", node_name_, "' (", def_.name, "): ", message));
}

namespace {
std::string Key(absl::string_view op, absl::string_view device, DType dtype) {
  return absl::StrCat(op, "|", device, "|", DTypeName(dtype));
}
}  // namespace

KernelRegistry& KernelRegistry::Global() {
  static KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    absl::Status s = RegisterBuiltinKernels(*r);
    if (!s.ok()) {
      // A malformed built-in kernel set is a programming error caught by every test run.
      std::fprintf(stderr, "tessera: built-in kernel registration failed: %s\n", std::string(s.message()).c_str());
      std::abort();
    }
    return r;
  }();
  return *registry;
}

absl::Status KernelRegistry::Register(absl::string_view op, absl::string_view device, DType dtype, KernelFn fn) {
  auto [it, inserted] = kernels_.try_emplace(Key(op, device, dtype), std::move(fn));
  if (!inserted) {
    return absl::AlreadyExistsError(absl::StrCat("a ", device, " kernel for op '", op, "' with dtype ",
                                                 DTypeName(dtype), " is already registered"));
  }
  return absl::OkStatus();
}

absl::Status KernelRegistry::Register(absl::string_view op, absl::string_view device, absl::Span<const DType> dtypes,
                                      KernelFn fn) {
  for (DType d : dtypes) {
    if (absl::Status s = Register(op, device, d, fn); !s.ok()) return s;
  }
  return absl::OkStatus();
}

const KernelFn* KernelRegistry::Find(absl::string_view op, absl::string_view device, DType dtype) const {
  auto it = kernels_.find(Key(op, device, dtype));
  return it == kernels_.end() ? nullptr : &it->second;
}

absl::StatusOr<const KernelFn*> KernelRegistry::Lookup(absl::string_view op, absl::string_view device,
                                                       DType dtype) const {
  if (const KernelFn* fn = Find(op, device, dtype)) return fn;
  std::string have;
  for (DType d : DTypesFor(op, device)) absl::StrAppend(&have, have.empty() ? "" : ", ", DTypeName(d));
  return absl::NotFoundError(absl::StrCat("no ", device, " kernel for op '", op, "' with dtype ", DTypeName(dtype),
                                          have.empty() ? "" : absl::StrCat(" (available: ", have, ")")));
}

std::vector<DType> KernelRegistry::DTypesFor(absl::string_view op, absl::string_view device) const {
  std::vector<DType> out;
  for (DType d : kAllDTypes) {
    if (Find(op, device, d) != nullptr) out.push_back(d);
  }
  return out;
}

DType KernelDType(const std::vector<const Tensor*>& inputs, const std::vector<Tensor*>& outputs) {
  if (!inputs.empty() && inputs[0] != nullptr) return inputs[0]->dtype();
  if (!outputs.empty() && outputs[0] != nullptr) return outputs[0]->dtype();
  return DType::kInvalid;
}

}  // namespace tsr
