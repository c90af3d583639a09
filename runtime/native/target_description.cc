// HostTargetDescription and CheckHostSupports: LLVM's view of this host's CPU, compared
// feature by feature with the CPU an object was compiled for.
#include "runtime/native/target_description.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace tsr {

std::string TargetDescription::ToString() const {
  return absl::StrCat("triple=", triple, " cpu=", cpu, " features=", features.empty() ? "(none)" : features);
}

TargetDescription HostTargetDescription() {
  TargetDescription host;
  host.triple = llvm::sys::getProcessTriple();
  host.cpu = llvm::sys::getHostCPUName().str();
  std::vector<std::string> features;
  for (const auto& feature : llvm::sys::getHostCPUFeatures()) {
    features.push_back(absl::StrCat(feature.getValue() ? "+" : "-", feature.getKey().str()));
  }
  std::sort(features.begin(), features.end());
  host.features = absl::StrJoin(features, ",");
  return host;
}

absl::Status CheckHostSupports(const TargetDescription& target) {
  InitializeNativeTargetOnce();
  const TargetDescription host = HostTargetDescription();
  const llvm::Triple object_triple(target.triple);
  const llvm::Triple host_triple(host.triple);
  if (object_triple.getArch() != host_triple.getArch() || object_triple.getOS() != host_triple.getOS() ||
      object_triple.getObjectFormat() != host_triple.getObjectFormat()) {
    return absl::FailedPreconditionError(absl::StrCat("object compiled for target triple '", target.triple,
                                                      "' cannot run on this host ('", host.triple, "')"));
  }
  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (llvm_target == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("target triple '", target.triple, "' is not supported by this runtime: ", error));
  }
  // The object's features: those of its CPU name plus its explicit feature string.
  std::unique_ptr<llvm::MCSubtargetInfo> object_sti(
      llvm_target->createMCSubtargetInfo(target.triple, target.cpu, target.features));
  if (object_sti == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("cannot describe the CPU of ", target.ToString()));
  }
  if (!target.cpu.empty() && !object_sti->isCPUStringValid(target.cpu)) {
    return absl::FailedPreconditionError(
        absl::StrCat("object compiled for CPU '", target.cpu, "', which this LLVM does not know"));
  }
  // getHostCPUFeatures names exactly the ISA features (not tuning flags): each one the
  // host lacks must be off in the object.
  std::vector<std::string> missing;
  for (const auto& feature : llvm::sys::getHostCPUFeatures()) {
    if (feature.getValue()) continue;
    const std::string name = feature.getKey().str();
    if (object_sti->checkFeatures(absl::StrCat("+", name))) missing.push_back(name);
  }
  if (!missing.empty()) {
    std::sort(missing.begin(), missing.end());
    return absl::FailedPreconditionError(absl::StrCat("object compiled for ", target.ToString(),
                                                      " needs CPU features this host (cpu=", host.cpu,
                                                      ") lacks: ", absl::StrJoin(missing, ", ")));
  }
  return absl::OkStatus();
}

void InitializeNativeTargetOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

}  // namespace tsr
