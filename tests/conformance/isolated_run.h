// Running one conformance case in a forked child process, so that a case which crashes
// (a failed assertion, a segfault in a kernel under development) or hangs becomes that
// case's failure instead of ending the whole run.
//
// The child runs `body` and sends its status back through a pipe; its stdout and stderr
// are captured (not shown) so a crash's reason can quote the last line it printed (e.g.
// the failed assertion).
// The parent must not have started threads (fork copies only the calling thread).
#ifndef TESSERA_TESTS_CONFORMANCE_ISOLATED_RUN_H_
#define TESSERA_TESTS_CONFORMANCE_ISOLATED_RUN_H_

#include <functional>

#include "absl/status/status.h"

namespace tsr::conformance {

// `body`'s status; or "crash: ..." when the child died from a signal or exited without
// a result; or "timeout: ..." when it ran longer than `timeout_seconds` (then it is
// killed). An error of the fork/pipe machinery itself is reported as "crash: ...",
// too, naming the system call.
absl::Status RunIsolated(const std::function<absl::Status()>& body, double timeout_seconds);

}  // namespace tsr::conformance

#endif  // TESSERA_TESTS_CONFORMANCE_ISOLATED_RUN_H_
