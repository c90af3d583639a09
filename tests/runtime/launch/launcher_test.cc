// Launch (runtime/launch/launcher.h) and `tessera launch` (tools/launch_command.cc),
// with real processes: the workers are this test binary run again as
// `launcher_test --launch-test-worker MODE [DIR]`, which makes it the small worker program
// below instead of the test suite (so no separate executable has to be built and found).
// The worker reads its WorldInfo, rendezvouses through the launcher's store with the job
// token, and then behaves as MODE says: exchanges keys, dies of SIGKILL, exits 3, ...
#include "runtime/launch/launcher.h"

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/launch/tcp_key_value_store.h"
#include "runtime/launch/world_info.h"
#include "tools/command.h"

namespace tsr {
namespace {

// ---------------------------------------------------------------------------------------
// The worker.

constexpr char kWorkerFlag[] = "--launch-test-worker";

void WorkerSaysGotSignal(int) {
  static const char kMessage[] = "got SIGINT\n";
  (void)!write(STDOUT_FILENO, kMessage, sizeof(kMessage) - 1);
  _exit(0);
}

// Blocks until killed: waits for a key nobody sets.
[[noreturn]] void WaitForever(KeyValueStore& store) {
  while (true) (void)store.Get("never/set", absl::Seconds(600));
}

int RunWorker(const std::string& mode, const std::string& dir) {
  absl::StatusOr<WorldInfo> info = WorldInfoFromEnvironment();
  if (!info.ok()) {
    std::cerr << "worker: " << info.status() << std::endl;
    return 2;
  }
  const int rank = info->rank;
  std::cout << "rank " << rank << " of " << info->world_size << ", local " << info->local_rank << " of "
            << info->local_world_size << ", backend " << info->backend << ", under_mpirun " << info->under_mpirun
            << std::endl;
  if (mode == "mpi") {
    const char* session = std::getenv("OMPI_MCA_orte_tmpdir_base");
    std::cout << "session folder " << (session != nullptr ? session : "(unset)") << std::endl;
    return 0;
  }
  if (mode == "mpi-kill-rank-1") {
    // Rank 1 dies mid-run; the others would run (here: sleep) for ten minutes.
    if (rank == 1) {
      absl::SleepFor(absl::Milliseconds(300));
      raise(SIGKILL);
    }
    absl::SleepFor(absl::Seconds(600));
    return 0;
  }
  if (mode == "output") {
    std::cout << "first line\nsecond line without newline" << std::flush;
    std::cerr << "an error line" << std::endl;
    return 0;
  }
  if (!info->has_coordinator()) {
    std::cerr << "worker: no TESSERA_COORDINATOR" << std::endl;
    return 2;
  }
  std::cout << "coordinator " << info->coordinator_host << ":" << info->coordinator_port << ", token of "
            << info->token.size() << " bytes" << std::endl;
  absl::StatusOr<std::unique_ptr<TcpKeyValueStore>> store =
      TcpKeyValueStore::Connect(info->coordinator_host, info->coordinator_port, info->token, absl::Seconds(30));
  if (!store.ok()) {
    std::cerr << "worker: " << store.status() << std::endl;
    return 2;
  }
  if (mode == "stray" && rank == 0) {
    absl::StatusOr<std::unique_ptr<TcpKeyValueStore>> stray = TcpKeyValueStore::Connect(
        info->coordinator_host, info->coordinator_port, info->token + "-guess", absl::Seconds(5));
    std::cout << "stray client: " << (stray.ok() ? "accepted" : stray.status().ToString()) << std::endl;
    return stray.ok() ? 1 : 0;
  }
  // Set-up before the rendezvous, so that it is in place once every rank has seen this
  // rank's key.
  if (mode == "rank-0-ignores-sigterm" && rank == 0) signal(SIGTERM, SIG_IGN);
  if (mode == "wait-for-sigint") signal(SIGINT, WorkerSaysGotSignal);
  // The rendezvous: publish this rank's key, read every rank's.
  if (absl::Status set = (*store)->Set(absl::StrCat("worker/", rank), absl::StrCat("hello from ", rank)); !set.ok()) {
    std::cerr << "worker: " << set << std::endl;
    return 2;
  }
  for (int r = 0; r < info->world_size; ++r) {
    absl::StatusOr<std::string> value = (*store)->Get(absl::StrCat("worker/", r), absl::Seconds(30));
    if (!value.ok()) {
      std::cerr << "worker: " << value.status() << std::endl;
      return 2;
    }
    std::cout << "rank " << rank << " got worker/" << r << " = " << *value << std::endl;
  }
  // Every rank says it has read (and printed) every key; a rank about to fail waits for rank
  // 0's, so that the tests can expect rank 0's lines whichever process the scheduler runs first.
  if (absl::Status set = (*store)->Set(absl::StrCat("read/", rank), "yes"); !set.ok()) {
    std::cerr << "worker: " << set << std::endl;
    return 2;
  }
  const bool rank_1_fails = mode == "kill-rank-1" || mode == "exit-3-rank-1" || mode == "rank-0-ignores-sigterm";
  if (rank_1_fails && rank == 1) {
    if (absl::StatusOr<std::string> read = (*store)->Get("read/0", absl::Seconds(30)); !read.ok()) {
      std::cerr << "worker: " << read.status() << std::endl;
      return 2;
    }
  }
  // Mid-run: rank 1 fails while the others wait.
  if (mode == "exchange") return 0;
  if (mode == "kill-rank-1" && rank == 1) raise(SIGKILL);
  if ((mode == "exit-3-rank-1" || mode == "rank-0-ignores-sigterm") && rank == 1) return 3;
  if (mode == "wait-for-sigint") std::ofstream(absl::StrCat(dir, "/ready.", rank)) << "ready\n";
  WaitForever(**store);
}

// ---------------------------------------------------------------------------------------
// The tests.

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::string SelfPath() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

struct Outcome {
  absl::StatusOr<int> code;
  std::string out, err, log;
  absl::Duration elapsed;
};

Outcome RunJob(int nproc, const std::string& mode, absl::Duration grace = absl::Seconds(5),
               const std::string& backend = "gloo", const std::string& dir = "") {
  std::ostringstream out, err, log;
  LaunchOptions options;
  options.nproc = nproc;
  options.backend = backend;
  options.argv = {SelfPath(), kWorkerFlag, mode};
  if (!dir.empty()) options.argv.push_back(dir);
  options.grace = grace;
  options.worker_stdout = &out;
  options.worker_stderr = &err;
  const absl::Time start = absl::Now();
  Outcome outcome{Launch(options, log), "", "", "", absl::ZeroDuration()};
  outcome.elapsed = absl::Now() - start;
  outcome.out = out.str();
  outcome.err = err.str();
  outcome.log = log.str();
  return outcome;
}

std::string Describe(const Outcome& o) {
  return absl::StrCat("code: ", o.code.ok() ? absl::StrCat(*o.code) : o.code.status().ToString(), "\nlog:\n", o.log,
                      "stdout:\n", o.out, "stderr:\n", o.err);
}

TEST(LauncherTest, EveryRankSeesEveryOthersKey) {
  constexpr int kRanks = 4;
  Outcome o = RunJob(kRanks, "exchange");
  ASSERT_TRUE(o.code.ok()) << Describe(o);
  EXPECT_EQ(*o.code, 0) << Describe(o);
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_THAT(o.out, HasSubstr(absl::StrCat("[rank ", rank, "] rank ", rank, " of 4, local ", rank,
                                              " of 4, backend gloo, under_mpirun 0\n")));
    EXPECT_THAT(o.out, HasSubstr(absl::StrCat("[rank ", rank, "] coordinator 127.0.0.1:")));
    EXPECT_THAT(o.out, HasSubstr(absl::StrCat("[rank ", rank, "] coordinator 127.0.0.1:")));
    for (int other = 0; other < kRanks; ++other) {
      EXPECT_THAT(o.out, HasSubstr(absl::StrCat("[rank ", rank, "] rank ", rank, " got worker/", other,
                                                " = hello from ", other, "\n")));
    }
  }
  // A 32-byte random token, in hex.
  EXPECT_THAT(o.out, HasSubstr("token of 64 bytes"));
  EXPECT_EQ(o.log, "");
}

TEST(LauncherTest, AKilledWorkerStopsTheJobAndIsNamed) {
  Outcome o = RunJob(3, "kill-rank-1");
  ASSERT_TRUE(o.code.ok()) << Describe(o);
  EXPECT_EQ(*o.code, 128 + SIGKILL) << Describe(o);
  // A functional bound (the others wait up to 600 s for a key): the job is torn down
  // instead of hanging.
  EXPECT_LT(o.elapsed, absl::Seconds(30)) << Describe(o);
  EXPECT_THAT(o.log, AllOf(HasSubstr("tessera launch: rank 1 (pid "), HasSubstr(") was killed by signal SIGKILL"),
                           HasSubstr("stopping the other 2 workers")))
      << Describe(o);
  EXPECT_THAT(o.log, Not(HasSubstr("rank 0 (pid"))) << "only the cause is reported\n" << Describe(o);
}

TEST(LauncherTest, AWorkersExitCodeIsTheJobs) {
  Outcome o = RunJob(2, "exit-3-rank-1");
  ASSERT_TRUE(o.code.ok()) << Describe(o);
  EXPECT_EQ(*o.code, 3) << Describe(o);
  EXPECT_LT(o.elapsed, absl::Seconds(30)) << Describe(o);
  EXPECT_THAT(o.log, HasSubstr("tessera launch: rank 1 (pid ")) << Describe(o);
  EXPECT_THAT(o.log, HasSubstr(") exited with code 3")) << Describe(o);
}

TEST(LauncherTest, WorkersIgnoringSigtermAreKilledAfterTheGracePeriod) {
  Outcome o = RunJob(2, "rank-0-ignores-sigterm", absl::Milliseconds(500));
  ASSERT_TRUE(o.code.ok()) << Describe(o);
  EXPECT_EQ(*o.code, 3) << Describe(o);
  EXPECT_THAT(o.log, AllOf(HasSubstr("rank 1 (pid "), HasSubstr("exited with code 3"), HasSubstr("rank 0 (pid "),
                           HasSubstr("sending SIGKILL")))
      << Describe(o);
  EXPECT_GE(o.elapsed, absl::Milliseconds(500)) << Describe(o);
  EXPECT_LT(o.elapsed, absl::Seconds(30)) << Describe(o);
}

TEST(LauncherTest, AStrayClientWithTheWrongTokenIsRefused) {
  Outcome o = RunJob(1, "stray");
  ASSERT_TRUE(o.code.ok()) << Describe(o);
  EXPECT_EQ(*o.code, 0) << Describe(o);
  EXPECT_THAT(o.out, AllOf(HasSubstr("[rank 0] stray client: PERMISSION_DENIED"), HasSubstr("wrong job token")))
      << Describe(o);
  EXPECT_THAT(o.log, AllOf(HasSubstr("tessera launch: store: refused a connection from 127.0.0.1:"),
                           HasSubstr("wrong job token")))
      << Describe(o);
}

TEST(LauncherTest, OutputLinesArePrefixedWithTheRank) {
  Outcome o = RunJob(2, "output");
  ASSERT_TRUE(o.code.ok()) << Describe(o);
  EXPECT_EQ(*o.code, 0) << Describe(o);
  // The ranks' lines interleave, but each arrives whole, with its rank's prefix; a last
  // line without a newline is relayed when the worker exits.
  for (int rank = 0; rank < 2; ++rank) {
    const std::string prefix = absl::StrCat("[rank ", rank, "] ");
    EXPECT_THAT(o.out, HasSubstr(absl::StrCat(prefix, "first line\n")));
    EXPECT_THAT(o.out, HasSubstr(absl::StrCat(prefix, "second line without newline\n")));
    EXPECT_THAT(o.err, HasSubstr(absl::StrCat(prefix, "an error line\n")));
  }
  for (const std::string& stream : {o.out, o.err}) {
    for (absl::string_view line : absl::StrSplit(stream, '\n', absl::SkipEmpty())) {
      EXPECT_THAT(std::string(line), ::testing::StartsWith("[rank ")) << Describe(o);
    }
  }
  EXPECT_THAT(o.out, Not(HasSubstr("error line")));
}

TEST(LauncherTest, SigintIsForwardedToTheWorkers) {
  const std::string dir = absl::StrCat(testing::TempDir(), "/launcher_sigint_", getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  constexpr int kRanks = 2;
  std::thread interrupter([&] {
    // Once every worker has its handler, interrupt this process (the launcher).
    // Without them (the workers failed), no signal: it would end the test binary.
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (absl::Now() < deadline) {
      int ready = 0;
      for (int r = 0; r < kRanks; ++r) ready += std::filesystem::exists(absl::StrCat(dir, "/ready.", r)) ? 1 : 0;
      if (ready == kRanks) {
        kill(getpid(), SIGINT);
        return;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  });
  Outcome o = RunJob(kRanks, "wait-for-sigint", absl::Seconds(5), "gloo", dir);
  interrupter.join();
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(o.code.ok()) << Describe(o);
  EXPECT_EQ(*o.code, 128 + SIGINT) << Describe(o);
  EXPECT_THAT(o.log, HasSubstr("tessera launch: received SIGINT; forwarding it to 2 workers")) << Describe(o);
  for (int rank = 0; rank < kRanks; ++rank) {
    EXPECT_THAT(o.out, HasSubstr(absl::StrCat("[rank ", rank, "] got SIGINT\n"))) << Describe(o);
  }
}

TEST(LauncherTest, MpiBackendRunsUnderMpirun) {
  if (system("command -v mpirun >/dev/null 2>&1") != 0) GTEST_SKIP() << "mpirun is not on PATH";
  Outcome o = RunJob(2, "mpi", absl::Seconds(5), "mpi");
  ASSERT_TRUE(o.code.ok()) << Describe(o);
  EXPECT_EQ(*o.code, 0) << Describe(o);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_THAT(o.out,
                HasSubstr(absl::StrCat("rank ", rank, " of 2, local ", rank, " of 2, backend mpi, under_mpirun 1")))
        << Describe(o);
  }
  // The job had session files of its own, removed after it.
  const size_t at = o.out.find("session folder ");
  ASSERT_NE(at, std::string::npos) << Describe(o);
  const std::string session = o.out.substr(at + 15, o.out.find('\n', at) - at - 15);
  EXPECT_THAT(session, HasSubstr("/tsr-mpi.")) << Describe(o);
  EXPECT_FALSE(std::filesystem::exists(session)) << session;
}

// Under mpirun, a killed rank ends the job too: mpirun stops the others and names it.
TEST(LauncherTest, AKilledMpiWorkerStopsTheJobAndIsNamed) {
  if (system("command -v mpirun >/dev/null 2>&1") != 0) GTEST_SKIP() << "mpirun is not on PATH";
  Outcome o = RunJob(3, "mpi-kill-rank-1", absl::Seconds(5), "mpi");
  ASSERT_TRUE(o.code.ok()) << Describe(o);
  EXPECT_EQ(*o.code, 128 + SIGKILL) << Describe(o);
  // The others sleep for ten minutes: the job is torn down instead.
  EXPECT_LT(o.elapsed, absl::Seconds(30)) << Describe(o);
  // Open MPI's words: "mpirun noticed that process rank 1 with PID ... exited on signal 9 (Killed)."
  EXPECT_THAT(o.err, AllOf(HasSubstr("process rank 1 "), HasSubstr("signal 9"))) << Describe(o);
  EXPECT_THAT(o.log, HasSubstr("tessera launch: mpirun (pid ")) << Describe(o);
}

TEST(LauncherTest, StartErrorsNameWhatIsMissing) {
  std::ostringstream log;
  LaunchOptions options;
  options.argv = {"no-such-program-for-tessera-launch"};
  absl::StatusOr<int> code = Launch(options, log);
  EXPECT_EQ(code.status().code(), absl::StatusCode::kNotFound) << code.status();
  EXPECT_THAT(code.status().message(), HasSubstr("'no-such-program-for-tessera-launch' not found on PATH"));

  // A file without execute permission; one with it that execve refuses.
  const std::string file = absl::StrCat(testing::TempDir(), "/launcher_not_a_program_", getpid());
  std::ofstream(file) << "\x01\x02 not a program\n";
  std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  options.argv = {file};
  EXPECT_THAT(Launch(options, log).status().message(),
              HasSubstr(absl::StrCat("'", file, "' is not an executable file")));
  std::filesystem::permissions(file, std::filesystem::perms::owner_all);
  EXPECT_THAT(Launch(options, log).status().message(),
              AllOf(HasSubstr(absl::StrCat("cannot start rank 0: execve '", file, "': ")), HasSubstr("format")));
  std::filesystem::remove(file);

  options.argv = {SelfPath()};
  options.nproc = 0;
  EXPECT_EQ(Launch(options, log).status().code(), absl::StatusCode::kInvalidArgument);
  options.nproc = 1;
  options.backend = "nccl";
  EXPECT_THAT(Launch(options, log).status().message(), HasSubstr("unknown backend 'nccl'"));
  options.backend = "gloo";
  options.argv.clear();
  EXPECT_EQ(Launch(options, log).status().code(), absl::StatusCode::kInvalidArgument);

  // --backend mpi without mpirun on PATH.
  const char* path = std::getenv("PATH");
  const std::string saved_path = path != nullptr ? path : "";
  setenv("PATH", "/nonexistent", 1);
  options.backend = "mpi";
  options.argv = {SelfPath()};
  code = Launch(options, log);
  setenv("PATH", saved_path.c_str(), 1);
  EXPECT_EQ(code.status().code(), absl::StatusCode::kFailedPrecondition) << code.status();
  EXPECT_THAT(code.status().message(), HasSubstr("mpirun"));
}

// `tessera launch` through cli::RunLaunch, as tools/tessera_main.cc calls it.
int RunCli(const std::vector<std::string>& args, std::ostringstream& out, std::ostringstream& err) {
  out.str("");
  err.str("");
  return cli::RunLaunch(args, out, err);
}

TEST(LaunchCommandTest, RunsAJobAndReturnsItsExitCode) {
  std::ostringstream out, err;
  EXPECT_EQ(RunCli({"--nproc", "2", "--", SelfPath(), kWorkerFlag, "exchange"}, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), AllOf(HasSubstr("[rank 0] rank 0 got worker/1 = hello from 1"),
                               HasSubstr("[rank 1] rank 1 got worker/0 = hello from 0")));

  EXPECT_EQ(RunCli({"--nproc=2", "--grace-seconds", "1", "--", SelfPath(), kWorkerFlag, "exit-3-rank-1"}, out, err), 3)
      << err.str();
  EXPECT_THAT(err.str(), HasSubstr("tessera launch: rank 1 (pid "));
}

TEST(LaunchCommandTest, HelpAndUsageErrors) {
  std::ostringstream out, err;
  EXPECT_EQ(RunCli({"--help"}, out, err), cli::kExitOk);
  EXPECT_THAT(out.str(), AllOf(HasSubstr("usage: tessera launch --nproc N"), HasSubstr("TESSERA_RANK"),
                               HasSubstr("--backend"), HasSubstr("--grace-seconds")));

  EXPECT_EQ(RunCli({}, out, err), cli::kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("tessera launch: "));
  EXPECT_EQ(RunCli({"--nproc", "2"}, out, err), cli::kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("-- PROGRAM"));
  EXPECT_EQ(RunCli({"--nproc", "2", "--"}, out, err), cli::kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("-- PROGRAM"));
  EXPECT_EQ(RunCli({"--nproc", "2", "prog"}, out, err), cli::kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("-- PROGRAM"));
  EXPECT_EQ(RunCli({"--nproc", "0", "--", "true"}, out, err), cli::kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("--nproc"));
  EXPECT_EQ(RunCli({"--nproc", "x", "--", "true"}, out, err), cli::kExitUsage);
  EXPECT_EQ(RunCli({"--backend", "nccl", "--", "true"}, out, err), cli::kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("--backend"));
  EXPECT_EQ(RunCli({"--grace-seconds", "-1", "--", "true"}, out, err), cli::kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("--grace-seconds"));
  EXPECT_EQ(RunCli({"--frobnicate", "--", "true"}, out, err), cli::kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("--frobnicate"));
  // A program that cannot be started is a failure, not a usage error.
  EXPECT_EQ(RunCli({"--", "no-such-program-for-tessera-launch"}, out, err), cli::kExitFailure);
  EXPECT_THAT(err.str(), HasSubstr("tessera launch: program 'no-such-program-for-tessera-launch' not found"));
}

// The `tessera` binary itself (tools/tessera_main.cc's command table): found in the
// build folder CTest names; skipped elsewhere (Bazel runs the command through RunLaunch).
TEST(LaunchCommandTest, TheTesseraBinaryLaunchesAJob) {
  const char* binary_dir = std::getenv("TESSERA_BINARY_DIR");
  const std::string tessera = absl::StrCat(binary_dir != nullptr ? binary_dir : "", "/tools/tessera");
  if (binary_dir == nullptr || access(tessera.c_str(), X_OK) != 0) {
    GTEST_SKIP() << "no tessera binary (TESSERA_BINARY_DIR is set by CTest; build the 'tessera' target)";
  }
  const std::string command = absl::StrCat("'", tessera, "' launch --nproc 2 --grace-seconds 2 -- '", SelfPath(), "' ",
                                           kWorkerFlag, " exit-3-rank-1 2>&1; echo \"exit code $?\"");
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  pclose(pipe);
  EXPECT_THAT(output, AllOf(HasSubstr("[rank 0] rank 0 got worker/1 = hello from 1\n"),
                            HasSubstr("tessera launch: rank 1 (pid "), HasSubstr(") exited with code 3\n"),
                            HasSubstr("exit code 3\n")))
      << output;
}

}  // namespace
}  // namespace tsr

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == tsr::kWorkerFlag) {
    return tsr::RunWorker(argv[2], argc >= 4 ? argv[3] : "");
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
