#!/usr/bin/env bash
# Bootstrap of 8 ranks started by Open MPI's mpirun (rank and size from
# OMPI_COMM_WORLD_*, no MPI library in fabench): every rank gets every rank's
# endpoints right and passes the barriers.
source "$(dirname "$0")/bootstrap_common.bash"
command -v mpirun >/dev/null || fail "mpirun not installed (Debian: openmpi-bin)"
port=$(free_port)
rc=0
timeout 120 mpirun --allow-run-as-root --oversubscribe -np 8 -x MASTER_PORT=$port \
  "$probe" --timeout 30 --barriers 5 >"$work/mpi.out" 2>"$work/mpi.err" || rc=$?
cat "$work/mpi.out"
((rc == 0)) || { cat "$work/mpi.err"; fail "mpirun exited $rc"; }
for r in 0 1 2 3 4 5 6 7; do
  n=$(grep -c "^rank $r/8 (.*): rendezvous, allgather of 8 ranks' endpoints and 5 barriers ok .*\[Open MPI" "$work/mpi.out" || true)
  [[ $n == 1 ]] || fail "rank $r reported success $n times (want 1)"
done
echo "OK: 8 ranks under mpirun bootstrapped from OMPI_COMM_WORLD_RANK/SIZE"
