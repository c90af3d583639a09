// Collects MLIR diagnostics emitted while it lives, so that a failed parse or pass turns
// into an absl::Status carrying MLIR's messages instead of text on stderr.
#ifndef TESSERA_COMPILER_CODEGEN_DIAGNOSTIC_COLLECTOR_H_
#define TESSERA_COMPILER_CODEGEN_DIAGNOSTIC_COLLECTOR_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

namespace tsr::codegen {

class DiagnosticCollector {
 public:
  explicit DiagnosticCollector(mlir::MLIRContext* context)
      : handler_(context, [this](mlir::Diagnostic& diagnostic) {
          if (diagnostic.getSeverity() != mlir::DiagnosticSeverity::Error) return mlir::success();
          llvm::raw_string_ostream os(messages_);
          os << "\n  " << diagnostic.getLocation() << ": " << diagnostic;
          for (const mlir::Diagnostic& note : diagnostic.getNotes()) os << "\n    note: " << note;
          return mlir::success();
        }) {}

  // `what` failed: the status names it and carries the collected errors.
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(what, messages_.empty() ? " (no diagnostic)" : ":", messages_));
  }

 private:
  std::string messages_;
  mlir::ScopedDiagnosticHandler handler_;
};

}  // namespace tsr::codegen

#endif  // TESSERA_COMPILER_CODEGEN_DIAGNOSTIC_COLLECTOR_H_
