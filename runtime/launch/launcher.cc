// `Launch` (launcher.h): starting the workers, relaying their output, watching them and
// tearing the job down, in one poll loop on the calling thread.
#include "runtime/launch/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "graph/status_macros.h"
#include "runtime/launch/tcp_key_value_store.h"
#include "runtime/launch/world_info.h"

extern char** environ;

namespace tsr {
namespace {

constexpr int kMaxProcesses = 1024;
// A worker line longer than this is relayed in pieces.
constexpr size_t kMaxLineBytes = 64 * 1024;
// How often the loop looks for exited workers when no output wakes it.
constexpr int kPollIntervalMs = 50;

// ---------------------------------------------------------------------------------------
// Signals: the handler only writes the signal's number to a pipe the loop polls.

std::atomic<int> g_signal_pipe{-1};
std::atomic<bool> g_launch_running{false};

void ForwardSignalToLoop(int signo) {
  const int saved_errno = errno;
  const int fd = g_signal_pipe.load();
  if (fd >= 0) {
    const unsigned char byte = static_cast<unsigned char>(signo);
    (void)!write(fd, &byte, 1);
  }
  errno = saved_errno;
}

// Installs the handler for SIGINT and SIGTERM and restores the previous ones on exit.
class SignalRelay {
 public:
  static absl::StatusOr<std::unique_ptr<SignalRelay>> Install() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
      return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
    }
    auto relay = std::unique_ptr<SignalRelay>(new SignalRelay(fds[0], fds[1]));
    g_signal_pipe.store(fds[1]);
    struct sigaction action {};
    action.sa_handler = ForwardSignalToLoop;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, &relay->old_int_);
    sigaction(SIGTERM, &action, &relay->old_term_);
    return relay;
  }
  ~SignalRelay() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    g_signal_pipe.store(-1);
    close(read_fd_);
    close(write_fd_);
  }
  int fd() const { return read_fd_; }
  // The signals received since the last call.
  std::vector<int> Take() {
    std::vector<int> signals;
    unsigned char buffer[64];
    ssize_t n;
    while ((n = read(read_fd_, buffer, sizeof(buffer))) > 0) signals.insert(signals.end(), buffer, buffer + n);
    return signals;
  }

 private:
  SignalRelay(int read_fd, int write_fd) : read_fd_(read_fd), write_fd_(write_fd) {}
  int read_fd_, write_fd_;
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

std::string SignalName(int signo) {
  const char* abbrev = sigabbrev_np(signo);
  return abbrev != nullptr ? absl::StrCat("SIG", abbrev) : absl::StrCat("signal ", signo);
}

// ---------------------------------------------------------------------------------------
// Preparing the processes.

absl::StatusOr<std::string> RandomToken() {
  const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot open /dev/urandom: ", strerror(errno)));
  unsigned char bytes[32];
  size_t done = 0;
  while (done < sizeof(bytes)) {
    const ssize_t n = read(fd, bytes + done, sizeof(bytes) - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      return absl::InternalError("cannot read /dev/urandom");
    }
    done += static_cast<size_t>(n);
  }
  close(fd);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token.push_back(kHex[b >> 4]);
    token.push_back(kHex[b & 15]);
  }
  return token;
}

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// `program` itself when it names a path, else the first executable `program` on PATH.
// Resolved before forking: the child may only make async-signal-safe calls.
absl::StatusOr<std::string> ResolveProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (!IsExecutableFile(program)) {
      return absl::NotFoundError(absl::StrCat("program '", program, "' is not an executable file"));
    }
    return program;
  }
  const char* path = std::getenv("PATH");
  const std::string search = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  for (absl::string_view dir : absl::StrSplit(search, ':')) {
    const std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/", program);
    if (IsExecutableFile(candidate)) return candidate;
  }
  return absl::NotFoundError(absl::StrCat("program '", program, "' not found on PATH (", search, ")"));
}

bool IsContractVariable(absl::string_view entry) {
  const absl::string_view name = entry.substr(0, entry.find('='));
  for (const char* v : {kRankVariable, kWorldSizeVariable, kLocalRankVariable, kLocalWorldSizeVariable,
                        kCoordinatorVariable, kJobTokenVariable, kBackendVariable}) {
    if (name == v) return true;
  }
  return false;
}

// A NULL-terminated char* array over `strings`, which must outlive it.
std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// One started process: a worker, or mpirun.
struct Child {
  std::string label;   // "rank 3" or "mpirun"
  std::string prefix;  // put before each of its output lines
  pid_t pid = -1;
  bool running = false;
  int out_fd = -1, err_fd = -1;
  std::string out_partial, err_partial;
};

// Starts `path` with `argv` and `env` in a process group of its own, stdin from
// /dev/null, stdout and stderr into pipes read by the launcher.
absl::Status Spawn(const std::string& path, std::vector<std::string> argv, std::vector<std::string> env, Child& child) {
  int out[2], err[2], exec_status[2];
  if (pipe2(out, O_CLOEXEC) != 0) return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  if (pipe2(exec_status, O_CLOEXEC) != 0) {
    for (int fd : {out[0], out[1], err[0], err[1]}) close(fd);
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  std::vector<char*> argv_c = CStrings(argv);
  std::vector<char*> env_c = CStrings(env);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // The child: only async-signal-safe calls until execve.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the launcher died before prctl
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int signo : {SIGINT, SIGTERM, SIGPIPE}) sigaction(signo, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    execve(path.c_str(), argv_c.data(), env_c.data());
    const int error = errno;
    (void)!write(exec_status[1], &error, sizeof(error));
    _exit(127);
  }
  const int fork_error = errno;
  close(out[1]);
  close(err[1]);
  close(exec_status[1]);
  if (pid < 0) {
    for (int fd : {out[0], err[0], exec_status[0]}) close(fd);
    return absl::InternalError(absl::StrCat("cannot start ", child.label, ": fork: ", strerror(fork_error)));
  }
  setpgid(pid, pid);  // also here, so that signalling the group works before the child runs
  // Closed by a successful execve (O_CLOEXEC); the child's errno otherwise.
  int exec_error = 0;
  ssize_t n;
  do {
    n = read(exec_status[0], &exec_error, sizeof(exec_error));
  } while (n < 0 && errno == EINTR);
  close(exec_status[0]);
  if (n > 0) {
    waitpid(pid, nullptr, 0);
    close(out[0]);
    close(err[0]);
    return absl::InternalError(
        absl::StrCat("cannot start ", child.label, ": execve '", path, "': ", strerror(exec_error)));
  }
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  child.pid = pid;
  child.running = true;
  child.out_fd = out[0];
  child.err_fd = err[0];
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// The job: its children and the loop that watches them.

class Job {
 public:
  Job(const LaunchOptions& options, std::ostream& log) : options_(options), log_(log) {}
  ~Job() {
    // Only reached with children still running when starting the job failed half-way.
    for (Child& c : children_) {
      if (c.running) {
        kill(-c.pid, SIGKILL);
        waitpid(c.pid, nullptr, 0);
      }
      for (int fd : {c.out_fd, c.err_fd}) {
        if (fd >= 0) close(fd);
      }
    }
  }

  void Log(absl::string_view line) {
    absl::MutexLock lock(&streams_mu_);
    log_ << "tessera launch: " << line << std::endl;
  }

  absl::Status Start(std::string label, std::string prefix, const std::string& path, std::vector<std::string> argv,
                     std::vector<std::string> env) {
    children_.emplace_back();
    Child& child = children_.back();
    child.label = std::move(label);
    child.prefix = std::move(prefix);
    return Spawn(path, std::move(argv), std::move(env), child);
  }

  // Watches the children until all have exited; the job's exit code.
  int Run(SignalRelay& signals);

 private:
  // Relays what `fd` has; closes it at end of file.
  void Drain(Child& c, int& fd, std::string& partial, std::ostream& stream);
  // Relays what is left of one of `c`'s outputs, without waiting for the end of file.
  void Finish(Child& c, int& fd, std::string& partial, std::ostream& stream);
  void Reap();
  // Sends `signo` to every running child's process group.
  void SignalAll(int signo);
  void BeginStop(int signo);
  int Running() const {
    int n = 0;
    for (const Child& c : children_) n += c.running ? 1 : 0;
    return n;
  }

  const LaunchOptions& options_;
  std::ostream& log_;
  absl::Mutex streams_mu_;
  std::vector<Child> children_;
  bool stopping_ = false;
  bool killed_ = false;
  absl::Time kill_at_ = absl::InfiniteFuture();
  // The job's exit code once decided: the first failed child's, or 128 + a signal's.
  std::optional<int> result_;
};

void Job::Drain(Child& c, int& fd, std::string& partial, std::ostream& stream) {
  char buffer[16 * 1024];
  bool eof = false;
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n > 0) {
      partial.append(buffer, static_cast<size_t>(n));
      if (partial.size() > 4 * kMaxLineBytes) break;  // relay this much before reading more
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    eof = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
    break;
  }
  std::string relayed;
  size_t begin = 0;
  while (true) {
    const size_t newline = partial.find('\n', begin);
    const bool cut = newline == std::string::npos && partial.size() - begin >= kMaxLineBytes;
    if (newline == std::string::npos && !cut && !(eof && begin < partial.size())) break;
    const size_t end = newline != std::string::npos ? newline : (cut ? begin + kMaxLineBytes : partial.size());
    absl::StrAppend(&relayed, c.prefix, absl::string_view(partial).substr(begin, end - begin), "\n");
    begin = newline != std::string::npos ? newline + 1 : end;
  }
  partial.erase(0, begin);
  if (!relayed.empty()) {
    absl::MutexLock lock(&streams_mu_);
    stream << relayed;
    stream.flush();
  }
  if (eof) {
    close(fd);
    fd = -1;
  }
}

void Job::Finish(Child& c, int& fd, std::string& partial, std::ostream& stream) {
  if (fd < 0) return;
  Drain(c, fd, partial, stream);
  if (fd < 0) return;
  if (!partial.empty()) {
    absl::MutexLock lock(&streams_mu_);
    stream << c.prefix << partial << "\n";
    stream.flush();
    partial.clear();
  }
  close(fd);
  fd = -1;
}

void Job::SignalAll(int signo) {
  for (Child& c : children_) {
    if (c.running) kill(-c.pid, signo);
  }
}

void Job::BeginStop(int signo) {
  stopping_ = true;
  kill_at_ = absl::Now() + options_.grace;
  SignalAll(signo);
}

void Job::Reap() {
  for (Child& c : children_) {
    if (!c.running) continue;
    int status = 0;
    const pid_t r = waitpid(c.pid, &status, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR)) continue;
    c.running = false;
    if (r < 0) {
      Log(absl::StrCat(c.label, " (pid ", c.pid, "): waitpid failed: ", strerror(errno)));
      status = 0xff00;  // reported as exit code 255
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
    if (stopping_) continue;  // stopped by the launcher, or it failed meanwhile: not the cause
    if (WIFSIGNALED(status)) {
      result_ = 128 + WTERMSIG(status);
      Log(absl::StrCat(c.label, " (pid ", c.pid, ") was killed by signal ", SignalName(WTERMSIG(status))));
    } else {
      result_ = WEXITSTATUS(status);
      Log(absl::StrCat(c.label, " (pid ", c.pid, ") exited with code ", *result_));
    }
    const int others = Running();
    if (others > 0) {
      Log(absl::StrCat("stopping the other ", others, " worker", others == 1 ? "" : "s",
                       " (SIGTERM, then SIGKILL after ", absl::FormatDuration(options_.grace), ")"));
    }
    BeginStop(SIGTERM);
  }
}

int Job::Run(SignalRelay& signals) {
  std::vector<pollfd> fds;
  while (true) {
    fds.clear();
    fds.push_back({signals.fd(), POLLIN, 0});
    for (const Child& c : children_) {
      for (int fd : {c.out_fd, c.err_fd}) {
        if (fd >= 0) fds.push_back({fd, POLLIN, 0});
      }
    }
    int timeout = kPollIntervalMs;
    if (stopping_ && !killed_) {
      const absl::Duration left = kill_at_ - absl::Now();
      if (left < absl::Milliseconds(timeout)) {
        timeout =
            static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1)))));
      }
    }
    poll(fds.data(), fds.size(), timeout);

    for (int signo : signals.Take()) {
      if (!stopping_) {
        const int n = Running();
        Log(absl::StrCat("received ", SignalName(signo), "; forwarding it to ", n, " worker", n == 1 ? "" : "s"));
        result_ = 128 + signo;
        BeginStop(signo);
      } else if (!killed_) {
        Log(absl::StrCat("received ", SignalName(signo), " again; sending SIGKILL"));
        if (!result_.has_value()) result_ = 128 + signo;
        killed_ = true;
        SignalAll(SIGKILL);
      }
    }
    for (Child& c : children_) {
      if (c.out_fd >= 0) Drain(c, c.out_fd, c.out_partial, *options_.worker_stdout);
      if (c.err_fd >= 0) Drain(c, c.err_fd, c.err_partial, *options_.worker_stderr);
    }
    Reap();
    if (stopping_ && !killed_ && absl::Now() >= kill_at_ && Running() > 0) {
      for (const Child& c : children_) {
        if (c.running) {
          Log(absl::StrCat(c.label, " (pid ", c.pid, ") still running ", absl::FormatDuration(options_.grace),
                           " after being stopped; sending SIGKILL"));
        }
      }
      killed_ = true;
      SignalAll(SIGKILL);
    }
    if (Running() == 0) {
      // Output still in the pipes is relayed; a pipe that a worker's own child keeps
      // open does not hold the launcher.
      for (Child& c : children_) {
        Finish(c, c.out_fd, c.out_partial, *options_.worker_stdout);
        Finish(c, c.err_fd, c.err_partial, *options_.worker_stderr);
      }
      return result_.value_or(0);
    }
  }
}

absl::Status Validate(const LaunchOptions& options) {
  if (options.nproc < 1 || options.nproc > kMaxProcesses) {
    return absl::InvalidArgumentError(absl::StrCat("nproc ", options.nproc, " is not in [1, ", kMaxProcesses, "]"));
  }
  if (options.backend != "gloo" && options.backend != "mpi") {
    return absl::InvalidArgumentError(absl::StrCat("unknown backend '", options.backend, "' (expected gloo or mpi)"));
  }
  if (options.argv.empty() || options.argv[0].empty()) return absl::InvalidArgumentError("no program to launch");
  if (options.grace < absl::ZeroDuration()) return absl::InvalidArgumentError("the grace period is negative");
  if (options.worker_stdout == nullptr || options.worker_stderr == nullptr) {
    return absl::InvalidArgumentError("worker_stdout and worker_stderr must be set");
  }
  return absl::OkStatus();
}

// The launcher's environment without the contract's variables.
std::vector<std::string> InheritedEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!IsContractVariable(*e)) env.emplace_back(*e);
  }
  return env;
}

// Open MPI's session files and shared-memory segments for one mpirun job, in folders of
// its own, removed after it: Open MPI names them after mpirun's process id, which repeats
// across PID namespaces (containers, Bazel's sandboxes), and two jobs sharing them
// corrupt each other's shared memory.
struct MpiJobFolders {
  std::string session, shared_memory;

  static absl::StatusOr<MpiJobFolders> Create() {
    const char* tmpdir = std::getenv("TMPDIR");
    MpiJobFolders folders;
    TSR_ASSIGN_OR_RETURN(folders.session,
                         MakeTempFolder(absl::StrCat(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp")));
    // Shared memory stays in /dev/shm (memory, not disk) when it is there.
    absl::StatusOr<std::string> shm = MakeTempFolder("/dev/shm");
    folders.shared_memory = shm.ok() ? *shm : folders.session;
    return folders;
  }
  MpiJobFolders() = default;
  MpiJobFolders(MpiJobFolders&& other) noexcept
      : session(std::exchange(other.session, "")), shared_memory(std::exchange(other.shared_memory, "")) {}
  ~MpiJobFolders() {
    std::error_code ignored;
    if (!shared_memory.empty()) std::filesystem::remove_all(shared_memory, ignored);
    if (!session.empty()) std::filesystem::remove_all(session, ignored);
  }

 private:
  static absl::StatusOr<std::string> MakeTempFolder(const std::string& parent) {
    std::string pattern = absl::StrCat(parent, "/tsr-mpi.XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) {
      return absl::InternalError(absl::StrCat("cannot create a folder in ", parent, " for mpirun: ", strerror(errno)));
    }
    return pattern;
  }
};

absl::StatusOr<int> LaunchLocked(const LaunchOptions& options, std::ostream& log) {
  TSR_RETURN_IF_ERROR(Validate(options));
  const bool mpi = options.backend == "mpi";
  std::string path;
  std::vector<std::string> argv = options.argv;
  if (mpi) {
    absl::StatusOr<std::string> mpirun = ResolveProgram("mpirun");
    if (!mpirun.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--backend mpi runs the job with mpirun (OpenMPI), which is not on PATH: ", mpirun.status().message()));
    }
    path = *mpirun;
  } else {
    TSR_ASSIGN_OR_RETURN(path, ResolveProgram(options.argv[0]));
  }

  // Declared before the store, whose log callback uses it.
  Job job(options, log);
  TSR_ASSIGN_OR_RETURN(std::unique_ptr<SignalRelay> signals, SignalRelay::Install());
  const std::vector<std::string> inherited = InheritedEnvironment();
  if (mpi) {
    TSR_ASSIGN_OR_RETURN(MpiJobFolders folders, MpiJobFolders::Create());
    // Kept on this host and on loopback like the rest of the job: shared memory between
    // the ranks (no TCP transport), mpirun's own channels on the loopback interface. Not
    // bound to a core each (Open MPI's default for small jobs): a rank's data loader and
    // communication threads would share its compute thread's core.
    argv.insert(argv.begin(),
                {"mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,vader",
                 "--mca", "oob_tcp_if_include", "lo", "--mca", "orte_tmpdir_base", folders.session, "--mca",
                 "btl_vader_backing_directory", folders.shared_memory, "-np", absl::StrCat(options.nproc)});
    std::vector<std::string> env = inherited;
    env.push_back(absl::StrCat(kBackendVariable, "=mpi"));
    TSR_RETURN_IF_ERROR(job.Start("mpirun", "", path, argv, std::move(env)));
    return job.Run(*signals);
  }

  TSR_ASSIGN_OR_RETURN(std::string token, RandomToken());
  TcpKeyValueStoreServer::Options store_options;
  store_options.token = token;
  store_options.log = [&job](absl::string_view line) { job.Log(absl::StrCat("store: ", line)); };
  TSR_ASSIGN_OR_RETURN(std::unique_ptr<TcpKeyValueStoreServer> store,
                       TcpKeyValueStoreServer::Start(std::move(store_options)));
  for (int rank = 0; rank < options.nproc; ++rank) {
    std::vector<std::string> env = inherited;
    env.push_back(absl::StrCat(kRankVariable, "=", rank));
    env.push_back(absl::StrCat(kWorldSizeVariable, "=", options.nproc));
    env.push_back(absl::StrCat(kLocalRankVariable, "=", rank));
    env.push_back(absl::StrCat(kLocalWorldSizeVariable, "=", options.nproc));
    env.push_back(absl::StrCat(kCoordinatorVariable, "=", kLoopbackHost, ":", store->port()));
    env.push_back(absl::StrCat(kJobTokenVariable, "=", token));
    env.push_back(absl::StrCat(kBackendVariable, "=", options.backend));
    TSR_RETURN_IF_ERROR(
        job.Start(absl::StrCat("rank ", rank), absl::StrCat("[rank ", rank, "] "), path, argv, std::move(env)));
  }
  return job.Run(*signals);
}

}  // namespace

absl::StatusOr<int> Launch(const LaunchOptions& options, std::ostream& log) {
  bool expected = false;
  if (!g_launch_running.compare_exchange_strong(expected, true)) {
    return absl::FailedPreconditionError("another Launch is running in this process");
  }
  absl::StatusOr<int> code = LaunchLocked(options, log);
  g_launch_running.store(false);
  return code;
}

}  // namespace tsr
