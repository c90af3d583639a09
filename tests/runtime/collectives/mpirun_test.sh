#!/usr/bin/env bash
# Runs a test binary as the ranks of an MPI job on this machine: mpirun_test.sh NP BINARY
# [ARGS...]. The ranks talk through shared memory (no TCP transport) and mpirun advertises
# only the loopback interface. Bazel's sh_test for //tests:runtime_collectives_mpi_collectives_test_np*.
#
# With EXPECT_JOB_FAILURE set (an extended regular expression), the job must fail and
# its output match it: a test of how a job ends (//tests:..._stall_aborts).
#
# Each job gets session and shared-memory folders of its own: Open MPI names its files
# after mpirun's process id, which repeats across the PID namespaces of Bazel's sandboxes,
# and two jobs sharing them corrupt each other's shared memory.
set -uo pipefail
np="$1"
binary="$2"
shift 2
session="$(mktemp -d /tmp/tsr-mpi.XXXXXX)"
trap 'rm -rf "$session"' EXIT
run() {
  mpirun --allow-run-as-root --oversubscribe --mca btl self,vader --mca oob_tcp_if_include lo \
    --mca orte_tmpdir_base "$session" --mca btl_vader_backing_directory "$session" -np "$np" "$binary" "$@"
}
if [[ -z "${EXPECT_JOB_FAILURE:-}" ]]; then
  run "$@"
  exit $?
fi
output="$session/output.txt"
run "$@" 2>&1 | tee "$output"
status="${PIPESTATUS[0]}"
if [[ "$status" == 0 ]]; then
  echo "mpirun_test.sh: the job succeeded; it should have failed" >&2
  exit 1
fi
if ! grep -Eq -- "$EXPECT_JOB_FAILURE" "$output"; then
  echo "mpirun_test.sh: the job failed (exit $status) without the expected message: $EXPECT_JOB_FAILURE" >&2
  exit 1
fi
echo "mpirun_test.sh: the job failed (exit $status) as expected"
