// Error printing and help layout shared by the subcommands.
#include "tools/command.h"

namespace tsr::cli {

int UsageError(std::ostream& err, absl::string_view command, absl::string_view message) {
  err << "tessera " << command << ": " << message << "\n"
      << "Run 'tessera help " << command << "' for usage.\n";
  return kExitUsage;
}

int Failure(std::ostream& err, absl::string_view command, const absl::Status& status) {
  err << "tessera " << command << ": " << status.message() << "\n";
  return kExitFailure;
}

void PrintHelp(std::ostream& out, absl::string_view usage, absl::string_view description, const FlagParser& flags) {
  out << "usage: " << usage << "\n\n" << description << "\n\nflags:\n" << flags.Help();
}

}  // namespace tsr::cli
