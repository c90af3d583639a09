// Device's default kernel lookup and CpuDevice.
#include "runtime/device.h"

#include "absl/strings/str_cat.h"

namespace tsr {

absl::StatusOr<const KernelFn*> Device::FindKernel(absl::string_view op, DType dtype) const {
  return kernel_registry().Lookup(op, kernel_device(), dtype);
}

absl::StatusOr<std::unique_ptr<CpuDevice>> CpuDevice::Create(const CpuDeviceOptions& options) {
  if (options.name != "cpu" && options.name != "reference") {
    return absl::InvalidArgumentError(absl::StrCat("unknown device '", options.name, "' (known: cpu, reference)"));
  }
  return std::unique_ptr<CpuDevice>(new CpuDevice(options));
}

CpuDevice::CpuDevice(const CpuDeviceOptions& options)
    : name_(options.name),
      registry_(options.registry != nullptr ? options.registry : &KernelRegistry::Global()),
      allocator_(options.allocator),
      pool_(options.num_threads) {}

absl::StatusOr<const KernelFn*> CpuDevice::FindKernel(absl::string_view op, DType dtype) const {
  if (const KernelFn* fn = registry_->Find(op, kernel_device(), dtype)) return fn;
  // The cpu device runs the oracle where no optimized kernel exists.
  if (const KernelFn* fn = registry_->Find(op, kReferenceDevice, dtype)) return fn;
  return registry_->Lookup(op, kernel_device(), dtype);
}

}  // namespace tsr
