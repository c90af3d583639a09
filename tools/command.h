// The subcommands of `tessera` and what they share: exit codes, error printing and
// help layout. A subcommand is a function from its arguments (those after its name)
// to an exit code; it writes results to `out` and diagnostics to `err`.
#ifndef TESSERA_TOOLS_COMMAND_H_
#define TESSERA_TOOLS_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "tools/flag_parser.h"

namespace tsr::cli {

inline constexpr int kExitOk = 0;
// The command ran and failed: missing file, invalid model, write error.
inline constexpr int kExitFailure = 1;
// The command line is wrong: unknown command or flag, missing or extra arguments.
inline constexpr int kExitUsage = 2;

using CommandFn = int (*)(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

struct Command {
  const char* name;
  const char* summary;  // one line, for `tessera --help`
  CommandFn run;
};

int RunInspect(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int RunConvert(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int RunExample(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int RunRun(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int RunTrain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int RunCompile(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int RunExport(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int RunLaunch(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int RunBenchCollectives(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// Prints "tessera CMD: message" and where to find help; returns kExitUsage.
int UsageError(std::ostream& err, absl::string_view command, absl::string_view message);
// Prints "tessera CMD: <status message>"; returns kExitFailure.
int Failure(std::ostream& err, absl::string_view command, const absl::Status& status);
// "usage: <usage>", the description, then the flags.
void PrintHelp(std::ostream& out, absl::string_view usage, absl::string_view description, const FlagParser& flags);

}  // namespace tsr::cli

#endif  // TESSERA_TOOLS_COMMAND_H_
