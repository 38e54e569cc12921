#!/usr/bin/env bash
# A real single-node Slurm in the VM (slurm_common.bash): `srun -n 4
# --overcommit` starts 4 bootstrap probes (2 vCPUs), which take rank and size
# from SLURM_PROCID/SLURM_NTASKS (no MPI, no fabench-launch) and meet at
# MASTER_ADDR; every rank must report the rendezvous, the endpoint allgather
# and the barriers, and say that its rank came from Slurm.
# ctest-timeout: 300
set -euo pipefail
build=${1:?usage: $0 BUILD_DIR SOURCE_DIR}
src=${2:?usage: $0 BUILD_DIR SOURCE_DIR}
probe=$build/test/helpers/fabench_bootstrap_probe
ntasks=4 barriers=5
source "$src/test/rxe/slurm_common.bash"

work=$(mktemp -d /tmp/fabench-slurm.XXXXXX)
trap 'slurm_down; rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*"
  for f in "$work"/*.err; do [[ -s $f ]] && sed "s|^|  $(basename "$f" .err): |" "$f"; done
  exit 1
}
[[ -x $probe ]] || fail "$probe not built (target fabench_bootstrap_probe)"

slurm_up || fail "slurm_up (above: what failed and the daemons' logs)"
sinfo -N -l

# Debian's interpreter: a pyenv shim in PATH costs ~20 s per start under emulation.
port=$("$(command -v /usr/bin/python3 || command -v python3)" -c \
  'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# The probe prefers RANK/WORLD_SIZE, Open MPI and PMI variables over Slurm's:
# make sure none leaks in from the caller, so the ranks can only come from Slurm.
rc=0
env -u RANK -u WORLD_SIZE -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE -u PMI_RANK -u PMI_SIZE \
  MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
  timeout 180 srun -n "$ntasks" --overcommit --kill-on-bad-exit=1 --time=3 --export=ALL \
  "$probe" --timeout 60 --barriers "$barriers" >"$work/srun.out" 2>"$work/srun.err" || rc=$?
cat "$work/srun.out"
((rc == 0)) || fail "srun -n $ntasks exited $rc"
host=$(hostname)
for ((r = 0; r < ntasks; r++)); do
  n=$(grep -c "^rank $r/$ntasks ($host): rendezvous, allgather of $ntasks ranks' endpoints and $barriers barriers ok .*\[Slurm (SLURM_PROCID/SLURM_NTASKS)\]" \
    "$work/srun.out" || true)
  [[ $n == 1 ]] || fail "rank $r reported success $n times (want 1)"
done
echo "OK: $ntasks ranks under srun --overcommit bootstrapped from SLURM_PROCID/SLURM_NTASKS"
