// Process-wide MPI state: InitializeMpi and FinalizeMpi, the serialization of MPI calls
// when the library is not thread-multiple, and the count of live communicators.
#include "runtime/collectives/mpi/mpi_process.h"

#include <atomic>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "graph/status_macros.h"
#include "runtime/collectives/mpi/mpi_collectives.h"

namespace tsr {
namespace mpi_internal {
namespace {

struct ProcessState {
  absl::Mutex mu;
  bool known ABSL_GUARDED_BY(mu) = false;  // InitializeMpi has run
  bool initialized_by_us ABSL_GUARDED_BY(mu) = false;
  MpiProcessInfo info ABSL_GUARDED_BY(mu);
  int live_communicators ABSL_GUARDED_BY(mu) = 0;
};

ProcessState& Process() {
  static ProcessState* state = new ProcessState;
  return *state;
}

std::atomic<bool> thread_multiple{true};

void FinalizeAtExit() {
  ProcessState& p = Process();
  absl::MutexLock lock(&p.mu);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (p.initialized_by_us && !finalized && p.live_communicators == 0) MPI_Finalize();
}

}  // namespace

bool ThreadMultiple() { return thread_multiple.load(std::memory_order_relaxed); }

absl::Mutex& SerialLock() {
  static absl::Mutex* mu = new absl::Mutex;
  return *mu;
}

absl::Status MpiStatus(int code, absl::string_view what) {
  if (code == MPI_SUCCESS) return absl::OkStatus();
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return absl::InternalError(absl::StrCat(what, " failed: ", absl::string_view(text, length)));
}

void AddLiveCommunicator() {
  absl::MutexLock lock(&Process().mu);
  ++Process().live_communicators;
}

void RemoveLiveCommunicator() {
  absl::MutexLock lock(&Process().mu);
  --Process().live_communicators;
}

}  // namespace mpi_internal

using mpi_internal::MpiStatus;
using mpi_internal::ScopedMpiCall;

absl::StatusOr<MpiProcessInfo> InitializeMpi(MpiThreading threading) {
  mpi_internal::ProcessState& p = mpi_internal::Process();
  absl::MutexLock lock(&p.mu);
  if (p.known) return p.info;
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized) return absl::FailedPreconditionError("MPI was already finalized in this process");
  int provided = MPI_THREAD_SINGLE;
  if (initialized) {
    MPI_Query_thread(&provided);
  } else {
    const int wanted = threading == MpiThreading::kMultiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED;
    TSR_RETURN_IF_ERROR(MpiStatus(MPI_Init_thread(nullptr, nullptr, wanted, &provided), "MPI_Init_thread"));
    p.initialized_by_us = true;
    std::atexit(mpi_internal::FinalizeAtExit);
  }
  if (provided < MPI_THREAD_SERIALIZED) {
    return absl::FailedPreconditionError(
        absl::StrCat("MPI provides thread level ", provided, "; the collectives need MPI_THREAD_SERIALIZED at least"));
  }
  const bool multiple = provided >= MPI_THREAD_MULTIPLE && threading == MpiThreading::kMultiple;
  mpi_internal::thread_multiple.store(multiple);
  MPI_Comm_rank(MPI_COMM_WORLD, &p.info.world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p.info.world_size);
  p.info.thread_multiple = multiple;
  p.known = true;
  return p.info;
}

absl::Status FinalizeMpi() {
  mpi_internal::ProcessState& p = mpi_internal::Process();
  absl::MutexLock lock(&p.mu);
  if (p.live_communicators > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("FinalizeMpi: ", p.live_communicators,
                     " MPI communicator(s) still exist (or hold an MPI call stuck by a timeout; end the process "
                     "with MPI_Abort then)"));
  }
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!p.initialized_by_us || finalized) return absl::OkStatus();
  return MpiStatus(MPI_Finalize(), "MPI_Finalize");
}

}  // namespace tsr
