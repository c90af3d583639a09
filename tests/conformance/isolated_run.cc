// RunIsolated: fork, run, collect the status through a pipe, wait with a deadline
// (isolated_run.h).
#include "tests/conformance/isolated_run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tsr::conformance {

namespace {

// Keeps only the tail of a child's stderr: the last line is what a crash reason quotes.
constexpr size_t kMaxCapturedStderr = 16 << 10;

absl::Status SystemError(absl::string_view call) {
  return absl::InternalError(absl::StrCat("crash: ", call, " failed: ", strerror(errno)));
}

void WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// Reads what is available on `fd` into `out`; false at end of file or on error.
bool ReadSome(int fd, std::string& out, size_t max_keep) {
  char buf[4096];
  const ssize_t n = read(fd, buf, sizeof(buf));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  out.append(buf, static_cast<size_t>(n));
  if (out.size() > max_keep) out.erase(0, out.size() - max_keep);
  return true;
}

std::string LastLine(const std::string& text) {
  std::string last;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) last = std::string(line);
  }
  return last;
}

// The child's side: run, send "<code>\n<message>", leave without running destructors
// of state shared with the parent (the parent's stdio buffers, atexit handlers).
[[noreturn]] void RunChild(const std::function<absl::Status()>& body, int result_fd, int stderr_fd) {
  // The case's own prints (stdout too) must not interleave with the runner's output.
  dup2(stderr_fd, STDOUT_FILENO);
  dup2(stderr_fd, STDERR_FILENO);
  close(stderr_fd);
  const absl::Status status = body();
  WriteAll(result_fd, absl::StrCat(static_cast<int>(status.code()), "\n", status.message()));
  close(result_fd);
  _exit(0);
}

}  // namespace

absl::Status RunIsolated(const std::function<absl::Status()>& body, double timeout_seconds) {
  int result_pipe[2], stderr_pipe[2];
  if (pipe2(result_pipe, O_CLOEXEC) != 0) return SystemError("pipe");
  if (pipe2(stderr_pipe, O_CLOEXEC) != 0) {
    close(result_pipe[0]);
    close(result_pipe[1]);
    return SystemError("pipe");
  }
  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {result_pipe[0], result_pipe[1], stderr_pipe[0], stderr_pipe[1]}) close(fd);
    return SystemError("fork");
  }
  if (pid == 0) {
    close(result_pipe[0]);
    close(stderr_pipe[0]);
    RunChild(body, result_pipe[1], stderr_pipe[1]);
  }
  close(result_pipe[1]);
  close(stderr_pipe[1]);

  std::string result, captured;
  bool result_open = true, stderr_open = true, timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  while (result_open || stderr_open) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[2] = {{result_open ? result_pipe[0] : -1, POLLIN, 0}, {stderr_open ? stderr_pipe[0] : -1, POLLIN, 0}};
    const int ready = poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    if (result_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      result_open = ReadSome(result_pipe[0], result, 1 << 20);
    }
    if (stderr_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      stderr_open = ReadSome(stderr_pipe[0], captured, kMaxCapturedStderr);
    }
  }
  close(result_pipe[0]);
  close(stderr_pipe[0]);
  if (timed_out) kill(pid, SIGKILL);
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) return SystemError("waitpid");
  }
  if (timed_out) {
    return absl::DeadlineExceededError(absl::StrCat("timeout: still running after ", timeout_seconds, " s"));
  }

  const std::string last_line = LastLine(captured);
  const std::string said = last_line.empty() ? "" : absl::StrCat("; last stderr line: ", last_line);
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    return absl::InternalError(absl::StrCat("crash: signal ", sig, " (", strsignal(sig), ")", said));
  }
  const size_t newline = result.find('\n');
  if (newline == std::string::npos) {
    return absl::InternalError(
        absl::StrCat("crash: exited with status ", WEXITSTATUS(wait_status), " before reporting a result", said));
  }
  int code = 0;
  if (!absl::SimpleAtoi(absl::string_view(result).substr(0, newline), &code) || code < 0 || code > 16) {
    return absl::InternalError(absl::StrCat("crash: the case process sent a malformed result", said));
  }
  if (code == 0) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(code), result.substr(newline + 1));
}

}  // namespace tsr::conformance
