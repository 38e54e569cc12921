#!/usr/bin/env bash
# The test bed itself: both rxe devices exist, are ACTIVE, have a RoCE v2
# IPv4 GID and the expected MTU.
set -euo pipefail
dev0=${FABENCH_RXE_DEV0:-rxe0} dev1=${FABENCH_RXE_DEV1:-rxe1}
out=$(ibv_devices)
echo "$out"
for d in "$dev0" "$dev1"; do
  grep -qw "$d" <<<"$out" || { echo "FAIL: ibv_devices does not list $d"; exit 1; }
  info=$(ibv_devinfo -d "$d")
  grep -q 'state:.*PORT_ACTIVE' <<<"$info" || { echo "FAIL: $d port not ACTIVE"; echo "$info"; exit 1; }
  grep -q 'active_mtu:.*4096' <<<"$info" || { echo "FAIL: $d active MTU is not 4096"; echo "$info"; exit 1; }
  t=$(cat /sys/class/infiniband/$d/ports/1/gid_attrs/types/1)
  [[ $t == "RoCE v2" ]] || { echo "FAIL: $d GID 1 is '$t', not RoCE v2"; exit 1; }
done
echo "OK: $dev0 and $dev1 active, MTU 4096, RoCE v2 GIDs"
