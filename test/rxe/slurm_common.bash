# A real single-node Slurm (slurm-wlm 22.05 + munge) for test scripts that run
# inside the Soft-RoCE VM (tools/softroce-vm). Sourced, not run (the test glob
# takes *.sh). Provides:
#   slurm_up    idempotent: munge key, munged, slurm.conf + cgroup.conf for
#               this guest (its hostname, CPUs=$(nproc)), slurmctld, slurmd;
#               returns once `sinfo` shows the node idle (at most
#               $SLURM_UP_TIMEOUT_S, default 60 s), else prints why and the
#               daemons' logs and returns 1.
#   slurm_down  stops what slurm_up started (jobs, slurmd, slurmctld, munged).
# Everything it writes (/etc/munge, /etc/slurm, /var/spool, /var/log, /run)
# lands in the guest's throw-away tmpfs overlay; outside the VM it refuses,
# because it would rewrite the host's Slurm configuration.
# More tasks than the guest's CPUs need `srun --overcommit`.
# The packages come from tools/install-deps on the host (slurm-wlm, munge).

SLURM_CONF_DIR=/etc/slurm
SLURM_LOG_DIR=/var/log/slurm
SLURM_UP_TIMEOUT_S=${SLURM_UP_TIMEOUT_S:-60}

_slurm_say() { echo "slurm_common: $*" >&2; }

# _slurm_pid PIDFILE: the pid the file names, or nothing (a daemon removes its
# pid file as it exits, so the file may vanish between any test and a read).
# Not $(<FILE): under set -e, bash exits the whole script, silently and even
# inside an || list, when $(<FILE) cannot open FILE.
_slurm_pid() { cat "$1" 2>/dev/null || true; }

# _slurm_alive PIDFILE: the process the pid file names is running.
_slurm_alive() {
  local pid
  pid=$(_slurm_pid "$1")
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null
}

_slurm_logs() {
  local f
  for f in /var/log/munge/munged.log "$SLURM_LOG_DIR/slurmctld.log" "$SLURM_LOG_DIR/slurmd.log"; do
    [[ -s $f ]] || { echo "--- $f: absent or empty" >&2; continue; }
    echo "--- last 40 lines of $f" >&2
    tail -n 40 "$f" >&2
  done
}

_slurm_fail() {
  _slurm_say "FAIL: $*"
  _slurm_logs
  return 1
}

_slurm_munge_up() {
  local i
  install -d -o munge -g munge -m 0700 /etc/munge /var/log/munge
  install -d -o munge -g munge -m 0711 /var/lib/munge
  install -d -o munge -g munge -m 0755 /run/munge
  if [[ ! -s /etc/munge/munge.key ]]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  fi
  chown munge:munge /etc/munge/munge.key
  chmod 0400 /etc/munge/munge.key
  if ! _slurm_alive /run/munge/munged.pid; then
    # --force: a stale socket from an earlier, killed munged is not an error.
    runuser -u munge -- /usr/sbin/munged --force ||
      { _slurm_fail "munged did not start"; return 1; }
  fi
  for ((i = 0; i < 100; i++)); do
    munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  _slurm_fail "munge -n | unmunge still fails 10 s after munged started"
}

# cgroups: slurmd 22.05 always loads a cgroup plugin (there is no
# CgroupPlugin=disabled yet); cgroup v2 with IgnoreSystemd needs the
# hierarchy mounted and a system.slice to put slurmstepd's scope in.
_slurm_cgroup_up() {
  if ! grep -qs ' /sys/fs/cgroup cgroup2 ' /proc/mounts; then
    mkdir -p /sys/fs/cgroup
    mount -t cgroup2 none /sys/fs/cgroup || { _slurm_fail "cannot mount cgroup2 at /sys/fs/cgroup"; return 1; }
  fi
  mkdir -p /sys/fs/cgroup/system.slice
}

_slurm_write_conf() {
  local host=$1 cpus mem_mb
  cpus=$(nproc)
  # The node must not claim more than it has, else it registers as "inval".
  mem_mb=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.8 }' /proc/meminfo)
  install -d -m 0755 "$SLURM_CONF_DIR" "$SLURM_LOG_DIR" /var/spool/slurmctld /var/spool/slurmd
  cat >"$SLURM_CONF_DIR/slurm.conf" <<EOF
# Written by test/rxe/slurm_common.bash (fabench test bed); single node.
ClusterName=fabench
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
SlurmctldPort=6817
SlurmdPort=6818
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=$SLURM_LOG_DIR/slurmctld.log
SlurmdLogFile=$SLURM_LOG_DIR/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  cat >"$SLURM_CONF_DIR/cgroup.conf" <<EOF
# Written by test/rxe/slurm_common.bash: see _slurm_cgroup_up.
CgroupPlugin=cgroup/v2
IgnoreSystemd=yes
ConstrainCores=no
ConstrainRAMSpace=no
ConstrainDevices=no
EOF
}

slurm_up() {
  if [[ ${FABENCH_IN_VM:-0} != 1 ]]; then
    _slurm_say "FAIL: refusing to configure and start Slurm outside the Soft-RoCE VM" \
      "(FABENCH_IN_VM is not 1); run through tools/softroce-vm"
    return 1
  fi
  local host i state=
  for cmd in munged slurmctld slurmd sinfo srun; do
    command -v "$cmd" >/dev/null ||
      { _slurm_say "FAIL: $cmd not installed (on the host: tools/install-deps adds slurm-wlm and munge)"; return 1; }
  done
  host=$(hostname)
  if [[ -z $host || $host == "(none)" ]]; then
    host=fabench-vm
    hostname "$host"
  fi
  # slurmctld resolves its own name: keep it resolvable.
  getent hosts "$host" >/dev/null || echo "127.0.1.1 $host" >>/etc/hosts

  _slurm_munge_up || return 1
  _slurm_cgroup_up || return 1
  if ! _slurm_alive /run/slurmctld.pid || ! _slurm_alive /run/slurmd.pid; then
    _slurm_write_conf "$host"
  fi
  if ! _slurm_alive /run/slurmctld.pid; then
    # -c: start from an empty state (the overlay is fresh anyway); -i: ignore
    # state files that do not parse.
    slurmctld -c -i || { _slurm_fail "slurmctld did not start"; return 1; }
  fi
  if ! _slurm_alive /run/slurmd.pid; then
    slurmd || { _slurm_fail "slurmd did not start"; return 1; }
  fi
  for ((i = 0; i < SLURM_UP_TIMEOUT_S * 2; i++)); do
    state=$(sinfo -h -N -n "$host" -o '%T' 2>/dev/null | head -n 1 || true)
    [[ $state == idle || $state == mixed || $state == allocated ]] && {
      _slurm_say "node $host $state (CPUs=$(nproc)) after $((i / 2)) s"
      return 0
    }
    sleep 0.5
  done
  _slurm_fail "node $host not idle after ${SLURM_UP_TIMEOUT_S} s (sinfo says '${state:-nothing}';" \
    "slurmctld $(_slurm_alive /run/slurmctld.pid && echo running || echo dead)," \
    "slurmd $(_slurm_alive /run/slurmd.pid && echo running || echo dead))"
}

slurm_down() {
  local f i pid
  scancel --full --quiet --user=root 2>/dev/null || true
  for f in /run/slurmd.pid /run/slurmctld.pid /run/munge/munged.pid; do
    pid=$(_slurm_pid "$f")
    if [[ -z $pid ]] || ! kill -0 "$pid" 2>/dev/null; then continue; fi
    kill "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
    rm -f "$f"
  done
  return 0
}
