// `Launch`: runs one job of N local worker processes, what `tessera launch` does.
//
// Backend "gloo" (the default): generates a random job token (/dev/urandom), starts a
// TcpKeyValueStoreServer on 127.0.0.1 (ephemeral port) for the workers' rendezvous, and
// starts PROGRAM N times with the environment contract of world_info.h set for each
// (TESSERA_RANK, TESSERA_WORLD_SIZE, TESSERA_LOCAL_RANK, TESSERA_LOCAL_WORLD_SIZE,
// TESSERA_COORDINATOR=127.0.0.1:PORT, TESSERA_JOB_TOKEN, TESSERA_BACKEND) on top of the
// launcher's own environment.
//
// Backend "mpi": no store and no token; the launcher runs one child, OpenMPI's mpirun
// (found on PATH): `mpirun --allow-run-as-root --oversubscribe --mca btl self,vader
// --mca oob_tcp_if_include lo ... -np N PROGRAM ARGS`, which keeps the ranks on shared
// memory and mpirun's own channels on loopback, and gives the job session and
// shared-memory folders of its own (Open MPI 4's MCA names). TESSERA_BACKEND=mpi is set
// and the other TESSERA_ variables removed, so the workers read OpenMPI's
// OMPI_COMM_WORLD_* variables. mpirun starts, watches and tears down the ranks itself;
// the launcher forwards signals to it and returns its exit code. (Setting OMPI_
// variables by hand instead would not make MPI_Init work: it needs mpirun's runtime.)
//
// Either way the launcher:
//  - prefixes every line a worker writes with "[rank K] " (stdout to `worker_stdout`,
//    stderr to `worker_stderr`); mpirun's output passes through unprefixed;
//  - gives workers /dev/null as stdin and a process group each (a worker's own children
//    are signalled with it), and makes the kernel kill them if the launcher dies;
//  - forwards SIGINT and SIGTERM to every worker, sends SIGKILL to those still running
//    `grace` later (or at a second signal), and returns 128 + that signal's number;
//  - when a worker exits non-zero or is killed by a signal, reports it on `log`
//    ("tessera launch: rank 1 (pid 123) was killed by signal SIGKILL"), sends SIGTERM to
//    the others, SIGKILL to those still running `grace` later, and returns the failed
//    worker's exit code (128 + the signal's number for a signal death);
//  - returns 0 when every worker exits with 0.
// Launch installs process-wide SIGINT/SIGTERM handlers while it runs and restores the
// previous ones; only one Launch may run in a process at a time.
#ifndef TESSERA_RUNTIME_LAUNCH_LAUNCHER_H_
#define TESSERA_RUNTIME_LAUNCH_LAUNCHER_H_

#include <iostream>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tsr {

struct LaunchOptions {
  int nproc = 1;
  std::string backend = "gloo";  // "gloo" or "mpi"
  // PROGRAM and its arguments; PROGRAM is searched on PATH unless it contains a '/'.
  std::vector<std::string> argv;
  // How long stopped workers get between SIGTERM and SIGKILL.
  absl::Duration grace = absl::Seconds(5);
  // Where the workers' prefixed output lines go.
  std::ostream* worker_stdout = &std::cout;
  std::ostream* worker_stderr = &std::cerr;
};

// Runs the job; the job's exit code as described above. An error status (naming what
// failed) when the job could not be started: bad options, PROGRAM or mpirun not found,
// the store or a process could not be created, another Launch running.
absl::StatusOr<int> Launch(const LaunchOptions& options, std::ostream& log);

}  // namespace tsr

#endif  // TESSERA_RUNTIME_LAUNCH_LAUNCHER_H_
