// `tessera`: the command-line entry point. Dispatches to the subcommands of
// tools/command.h; `tessera help CMD` and `tessera CMD --help` print a command's help.
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "tools/command.h"

namespace tsr::cli {
namespace {

constexpr Command kCommands[] = {
    {"inspect", "print a model's totals (parameters, FLOPs), signature and nodes", RunInspect},
    {"convert", "convert a GraphDef between binary (.pb) and text (.pbtxt)", RunConvert},
    {"example", "build an example model (mlp, lenet) and save it as a GraphDef", RunExample},
    {"run", "run a model on inputs from .npy files; print, save and profile its outputs", RunRun},
    {"train", "train a model on Fashion-MNIST (or any MNIST-format data); checkpoints, TensorBoard", RunTrain},
    {"compile", "compile a model ahead of time into a .tsrx executable (MLIR: fusion, code generation)", RunCompile},
    {"export", "write a model as ONNX (checked by ONNX's checker) for other runtimes", RunExport},
    {"launch", "run a program as N worker processes of one job (rendezvous, signals, teardown)", RunLaunch},
    {"bench-collectives", "time a collective over N ranks (nccl-tests table; --peer: the raw library)",
     RunBenchCollectives},
};

const Command* FindCommand(absl::string_view name) {
  for (const Command& c : kCommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

void PrintMainHelp(std::ostream& out) {
  out << "usage: tessera COMMAND [ARGS...]\n\n"
         "Tessera: a static-graph ML compiler. Commands:\n";
  for (const Command& c : kCommands) {
    const size_t length = std::string(c.name).size();
    out << "  " << c.name << std::string(length < 10 ? 10 - length : 1, ' ') << c.summary << "\n";
  }
  out << "  help      show help for a command: tessera help COMMAND\n\n"
         "Run 'tessera COMMAND --help' for a command's arguments and flags.\n"
         "Exit codes: 0 success, 1 failure (bad file or model), 2 usage error.\n";
}

int UnknownCommand(std::ostream& err, absl::string_view name) {
  err << "tessera: unknown command '" << name << "' (commands: ";
  for (const Command& c : kCommands) err << c.name << ", ";
  err << "help)\nRun 'tessera --help' for usage.\n";
  return kExitUsage;
}

int Main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty()) {
    PrintMainHelp(err);
    return kExitUsage;
  }
  const std::string& first = args[0];
  if (first == "--help" || first == "-h") {
    PrintMainHelp(out);
    return kExitOk;
  }
  if (first == "help") {
    if (args.size() == 1) {
      PrintMainHelp(out);
      return kExitOk;
    }
    if (args.size() > 2) {
      err << "tessera help: expected one COMMAND, got " << args.size() - 1 << " arguments\n";
      return kExitUsage;
    }
    const Command* c = FindCommand(args[1]);
    return c == nullptr ? UnknownCommand(err, args[1]) : c->run({"--help"}, out, err);
  }
  if (!first.empty() && first[0] == '-') {
    err << "tessera: unknown flag '" << first << "' (flags go after the command)\nRun 'tessera --help' for usage.\n";
    return kExitUsage;
  }
  const Command* c = FindCommand(first);
  if (c == nullptr) return UnknownCommand(err, first);
  return c->run(std::vector<std::string>(args.begin() + 1, args.end()), out, err);
}

}  // namespace
}  // namespace tsr::cli

int main(int argc, char** argv) {
#ifdef NDEBUG
  // Debian's Abseil is built with its mutex deadlock detection on: every lock and every
  // mutex's destruction then updates a global lock-order graph (a few percent of a small
  // all-reduce). The tests keep it; the released command does what a release build of
  // Abseil does.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
  return tsr::cli::Main(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
