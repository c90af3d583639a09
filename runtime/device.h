// `Device`: where the executor runs a graph — the kernel device key it looks kernels
// up under (with its fall-back), its allocator and its thread pool. `CpuDevice` is the
// host: "cpu" (optimized kernels, reference ones where none exists) or "reference"
// (the oracle kernels only).
#ifndef TESSERA_RUNTIME_DEVICE_H_
#define TESSERA_RUNTIME_DEVICE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kernels/kernel.h"
#include "runtime/allocator.h"
#include "runtime/thread_pool.h"

namespace tsr {

class Device {
 public:
  virtual ~Device() = default;

  virtual const std::string& name() const = 0;
  // The registry device key looked up first ("cpu", "reference").
  virtual absl::string_view kernel_device() const = 0;
  virtual Allocator& allocator() = 0;
  virtual ThreadPool& thread_pool() = 0;
  virtual const KernelRegistry& kernel_registry() const = 0;

  // The kernel for (op, dtype) on this device: NotFound naming the op and dtype when none.
  virtual absl::StatusOr<const KernelFn*> FindKernel(absl::string_view op, DType dtype) const;
};

struct CpuDeviceOptions {
  std::string name = "cpu";  // "cpu" or "reference"
  int num_threads = 0;       // 0: hardware concurrency
  // Kernels come from here (the global registry when null); must outlive the device.
  const KernelRegistry* registry = nullptr;
  AllocatorOptions allocator;
};

class CpuDevice : public Device {
 public:
  // InvalidArgument for a name other than "cpu" or "reference".
  static absl::StatusOr<std::unique_ptr<CpuDevice>> Create(const CpuDeviceOptions& options = {});

  const std::string& name() const override { return name_; }
  absl::string_view kernel_device() const override { return name_ == "reference" ? kReferenceDevice : kCpuDevice; }
  Allocator& allocator() override { return allocator_; }
  ThreadPool& thread_pool() override { return pool_; }
  const KernelRegistry& kernel_registry() const override { return *registry_; }
  absl::StatusOr<const KernelFn*> FindKernel(absl::string_view op, DType dtype) const override;

 private:
  explicit CpuDevice(const CpuDeviceOptions& options);

  std::string name_;
  const KernelRegistry* registry_;
  Allocator allocator_;
  ThreadPool pool_;
};

}  // namespace tsr

#endif  // TESSERA_RUNTIME_DEVICE_H_
