// DiagnosticCollector: gathers the MLIR diagnostics emitted while it lives (parse and verifier
// errors) so that they can be returned as an absl::Status instead of printed.
#ifndef TESSERA_COMPILER_CONVERSION_MLIR_DIAGNOSTICS_H_
#define TESSERA_COMPILER_CONVERSION_MLIR_DIAGNOSTICS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

namespace tsr {

class DiagnosticCollector {
 public:
  explicit DiagnosticCollector(mlir::MLIRContext& context)
      : handler_(&context, [this](mlir::Diagnostic& d) {
          llvm::raw_string_ostream os(text_);
          os << "\n  " << d.getLocation() << ": " << d;
          for (const mlir::Diagnostic& note : d.getNotes()) os << "\n    " << note.getLocation() << ": " << note;
          return mlir::success();
        }) {}

  // InvalidArgument: `what`, then every diagnostic with its location.
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(what, ":", text_));
  }

 private:
  std::string text_;
  mlir::ScopedDiagnosticHandler handler_;
};

}  // namespace tsr

#endif  // TESSERA_COMPILER_CONVERSION_MLIR_DIAGNOSTICS_H_
