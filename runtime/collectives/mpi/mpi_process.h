// Process-wide internals of the MPI backend, shared by its files: the serialization of
// MPI calls (when the library is not MPI_THREAD_MULTIPLE), error conversion, and the
// count of live communicators that FinalizeMpi checks (mpi_process.cc).
#ifndef TESSERA_RUNTIME_COLLECTIVES_MPI_MPI_PROCESS_H_
#define TESSERA_RUNTIME_COLLECTIVES_MPI_MPI_PROCESS_H_

#include <mpi.h>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace tsr {
namespace mpi_internal {

// Whether MPI calls may be made concurrently (MPI_THREAD_MULTIPLE); set once by
// InitializeMpi before any communicator exists.
bool ThreadMultiple();

// The lock every MPI call of the process takes when it is not thread-multiple.
absl::Mutex& SerialLock();

// Holds SerialLock for its lifetime when MPI calls are serialized; a no-op otherwise.
class ABSL_SCOPED_LOCKABLE ScopedMpiCall {
 public:
  ScopedMpiCall() ABSL_EXCLUSIVE_LOCK_FUNCTION() : locked_(!ThreadMultiple()) {
    if (locked_) SerialLock().Lock();
  }
  ~ScopedMpiCall() ABSL_UNLOCK_FUNCTION() {
    if (locked_) SerialLock().Unlock();
  }
  ScopedMpiCall(const ScopedMpiCall&) = delete;
  ScopedMpiCall& operator=(const ScopedMpiCall&) = delete;

 private:
  const bool locked_;
};

// OK for MPI_SUCCESS; otherwise Internal: "<what> failed: <MPI's error string>".
absl::Status MpiStatus(int code, absl::string_view what);

// Communicators alive (FinalizeMpi refuses while any is).
void AddLiveCommunicator();
void RemoveLiveCommunicator();

}  // namespace mpi_internal
}  // namespace tsr

#endif  // TESSERA_RUNTIME_COLLECTIVES_MPI_MPI_PROCESS_H_
