// `tessera launch --nproc N [--backend gloo|mpi] [--grace-seconds S] -- PROGRAM [ARGS...]`:
// runs N local workers of one job with runtime/launch's Launch and exits with the job's
// exit code.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "runtime/launch/launcher.h"
#include "tools/command.h"

namespace tsr::cli {
namespace {

constexpr absl::string_view kUsage =
    "tessera launch --nproc N [--backend gloo|mpi] [--grace-seconds S] -- PROGRAM [ARGS...]";
constexpr absl::string_view kDescription =
    "Runs PROGRAM as N worker processes of one job on this host and exits with the job's exit\n"
    "code. Each worker gets the environment contract: TESSERA_RANK, TESSERA_WORLD_SIZE,\n"
    "TESSERA_LOCAL_RANK, TESSERA_LOCAL_WORLD_SIZE, TESSERA_BACKEND, and the job's rendezvous\n"
    "store TESSERA_COORDINATOR=127.0.0.1:PORT with its secret TESSERA_JOB_TOKEN (a connection\n"
    "without the token is refused). Output lines are prefixed with '[rank K] '. SIGINT and\n"
    "SIGTERM are forwarded to every worker. When a worker exits non-zero or is killed, the\n"
    "launcher names it, stops the others (SIGTERM, then SIGKILL after the grace period) and\n"
    "exits with that worker's code (128 + N for signal N). With --backend mpi the job runs\n"
    "under 'mpirun -np N' instead (OpenMPI on PATH), and workers read OMPI_COMM_WORLD_*.\n"
    "Exit codes: the job's; 1 when it could not be started; 2 for a usage error.";

}  // namespace

int RunLaunch(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  // Everything after the first "--" is the program's, flags included.
  auto separator = std::find(args.begin(), args.end(), std::string("--"));
  const std::vector<std::string> launcher_args(args.begin(), separator);
  std::vector<std::string> program;
  if (separator != args.end()) program.assign(separator + 1, args.end());

  FlagParser flags;
  int64_t nproc = 1;
  std::string backend = "gloo", grace_text = "5";
  flags.AddInt("nproc", 'n', "N", &nproc, "worker processes to start (default 1)");
  flags.AddString("backend", '\0', "NAME", &backend, "collectives backend: gloo (default) or mpi (runs mpirun)");
  flags.AddString("grace-seconds", '\0', "S", &grace_text,
                  "time stopped workers get between SIGTERM and SIGKILL (default 5)");
  absl::StatusOr<std::vector<std::string>> positionals = flags.Parse(launcher_args);
  if (!positionals.ok()) return UsageError(err, "launch", positionals.status().message());
  if (flags.help_requested()) {
    PrintHelp(out, kUsage, kDescription, flags);
    return kExitOk;
  }
  if (!positionals->empty()) {
    return UsageError(
        err, "launch",
        absl::StrCat("'", positionals->front(), "' before '--': the program goes after it (-- PROGRAM [ARGS...])"));
  }
  if (program.empty()) return UsageError(err, "launch", "missing -- PROGRAM [ARGS...]");
  if (nproc < 1 || nproc > 1024) return UsageError(err, "launch", "--nproc must be in [1, 1024]");
  if (backend != "gloo" && backend != "mpi") {
    return UsageError(err, "launch", absl::StrCat("--backend must be gloo or mpi, not '", backend, "'"));
  }
  double grace_seconds = 0;
  if (!absl::SimpleAtod(grace_text, &grace_seconds) || !std::isfinite(grace_seconds) || grace_seconds < 0) {
    return UsageError(err, "launch",
                      absl::StrCat("--grace-seconds takes a non-negative number, not '", grace_text, "'"));
  }

  LaunchOptions options;
  options.nproc = static_cast<int>(nproc);
  options.backend = backend;
  options.argv = std::move(program);
  options.grace = absl::Seconds(grace_seconds);
  options.worker_stdout = &out;
  options.worker_stderr = &err;
  absl::StatusOr<int> code = Launch(options, err);
  if (!code.ok()) return Failure(err, "launch", code.status());
  return *code;
}

}  // namespace tsr::cli
