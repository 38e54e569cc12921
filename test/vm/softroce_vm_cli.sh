#!/usr/bin/env bash
# tools/softroce-vm's own contract, on the host: exit status follows the
# command, bad use ends with one clear message and a non-zero status, and a
# hung guest is killed at its timeout (no hang).
set -euo pipefail
src=${1:?usage: $0 SOURCE_DIR}
vm=$src/tools/softroce-vm
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

# expect RC PATTERN CMD...: CMD exits with RC and says PATTERN on stderr.
expect() {
  local want=$1 pattern=$2; shift 2
  local rc=0
  "$@" >"$work/out" 2>"$work/err" || rc=$?
  [[ $rc == "$want" ]] || { cat "$work/out" "$work/err"; fail "'$*' exited $rc, expected $want"; }
  grep -Eq -- "$pattern" "$work/err" || { cat "$work/err"; fail "'$*': stderr lacks /$pattern/"; }
  ok "$* -> $rc: $(grep -Em1 -- "$pattern" "$work/err" | head -c 140)"
}

expect 2 "no command given" "$vm"
expect 2 "unknown option '--bogus'" "$vm" --bogus -- true
expect 2 "--timeout: 'soon'" "$vm" --timeout soon -- true
expect 2 "--env: 'novalue'" "$vm" --env novalue -- true
expect 2 "--kernel-arg: 'a b' is not one kernel argument" "$vm" --kernel-arg "a b" -- true
# The switch's options (issue 12), refused before any boot.
expect 2 "--devices: '1' is not a device count from 2 to 16" "$vm" --devices 1 -- true
expect 2 "--devices: '17' is not" "$vm" --devices 17 -- true
expect 2 "--devices needs a value before --" "$vm" --devices -- true
expect 2 "--netem-port: port '4' is not a device number 0..3" "$vm" --devices 4 --netem-port 4 "loss 1%" -- true
expect 2 "--netem-port: port '2' is not a device number 0..1" "$vm" --netem-port 2 "loss 1%" -- true
expect 2 "--netem-port needs a port and a value before --" "$vm" --devices 3 --netem-port 1 -- true
expect 2 "--netem-port 1: 'los 1%' is not a netem spec" "$vm" --devices 3 --netem-port 1 "los 1%" -- true
expect 2 "--netem-port 1 given twice" "$vm" --devices 3 --netem-port 1 "loss 1%" --netem-port 1 "delay 1ms" -- true
expect 2 "--rate-port 1: 'fast' is not a rate" "$vm" --devices 3 --rate-port 1 fast -- true
expect 2 "--netem \(every port\) and --netem-port cannot be combined" "$vm" --devices 3 --netem "loss 1%" --netem-port 1 "delay 1ms" -- true

# No qemu on PATH: a clear message naming the package.
mkdir -p "$work/bin"
for t in bash awk grep sed mktemp cat dirname nproc env rdma ip tc file; do
  p=$(command -v "$t") && ln -sf "$p" "$work/bin/$t"
done
expect 2 "qemu-system-x86_64 not found.*qemu-system-x86" env PATH="$work/bin" "$vm" -- true

# No kernel package reachable: apt-get download fails, clearly.
expect 2 "apt-get download linux-image-0.0.0-nonexistent failed" \
  env FABENCH_CACHE="$work/cache" FABENCH_KERNEL_PKG=linux-image-0.0.0-nonexistent "$vm" -- true

# The command's exit status and both output streams come back, and arguments
# with spaces, quotes and dollars arrive exactly; the guest's clock is the TSC
# (tsc=reliable under TCG; kvm-clock under KVM). One guest for all.
rc=0
# shellcheck disable=SC2016  # $@ and $HOME are for the guest's sh, unexpanded here
out=$("$vm" -- sh -c 'printf "<%s>" "$@"; echo; cat /sys/devices/system/clocksource/clocksource0/current_clocksource
  cat /sys/class/net/veth1/queues/rx-0/rps_cpus; echo to-stderr >&2; exit 7' sh "a b" "c'd" '$HOME' 2>"$work/err") || rc=$?
[[ $rc == 7 ]] || fail "exit status $rc, expected the command's 7"
[[ ${out%%$'\n'*} == "<a b><c'd><\$HOME>" ]] || fail "stdout was '$out'"
grep -q to-stderr "$work/err" || fail "stderr did not come back"
ok "exit status 7, both output streams and the arguments quoted exactly came back"
clock=${out#*$'\n'} rps=${clock#*$'\n'} clock=${clock%%$'\n'*}
[[ $clock == tsc || $clock == kvm-clock ]] || fail "the guest's clocksource is '$clock', not the TSC"
ok "the guest's clocksource: $clock"
# Receive Packet Steering on the veths keeps each flow in order (docs/testbed.md).
[[ $rps =~ ^[0-9a-f,]+$ && $rps =~ [1-9a-f] ]] || fail "veth1's rps_cpus is '$rps', not a CPU mask"
ok "veth1 steers each flow to one CPU (rps_cpus $rps)"

# A netem spec that only tc can judge: refused from inside the guest, still
# one "softroce-vm: error:" line and exit status 2.
expect 2 "^softroce-vm: error: --netem-port 1: tc rejected netem 'loss abc' on veth1" "$vm" --devices 3 --netem-port 1 "loss abc" -- true

# A hung guest command is killed at the timeout with a message.
start=$SECONDS
expect 124 "did not finish within 20 s" "$vm" --timeout 20 -- sleep 600
((SECONDS - start < 60)) || fail "timeout took $((SECONDS - start)) s"
