// The CPU an object file was compiled for (LLVM target triple, CPU name, feature string),
// as recorded next to the machine code, and the check that this process's CPU can run it.
// No LLVM types here: the compiler records a TargetDescription, the runtime checks it.
#ifndef TESSERA_RUNTIME_NATIVE_TARGET_DESCRIPTION_H_
#define TESSERA_RUNTIME_NATIVE_TARGET_DESCRIPTION_H_

#include <string>

#include "absl/status/status.h"

namespace tsr {

struct TargetDescription {
  std::string triple;    // e.g. "x86_64-pc-linux-gnu"
  std::string cpu;       // LLVM CPU name, e.g. "znver4", "x86-64-v3", "generic"
  std::string features;  // LLVM feature string, e.g. "+avx2,+fma,-avx512f"; may be empty

  std::string ToString() const;  // "triple=... cpu=... features=..."
};

// What this process runs on: the process triple, the host CPU name and every ISA feature
// LLVM detects, each as +name or -name.
TargetDescription HostTargetDescription();

// OK when code compiled for `target` can run here: same architecture and object format,
// and every ISA feature `target` enables (through its CPU name or its feature string) is
// present on this host. Otherwise FailedPrecondition naming the first missing feature.
// Tuning-only features (scheduling hints) are ignored.
absl::Status CheckHostSupports(const TargetDescription& target);

// Registers LLVM's native target and its assembly printer, once per process (thread-safe);
// whatever emits, links or inspects machine code for this host calls it first.
void InitializeNativeTargetOnce();

}  // namespace tsr

#endif  // TESSERA_RUNTIME_NATIVE_TARGET_DESCRIPTION_H_
