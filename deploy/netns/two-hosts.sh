#!/bin/sh
# Two hostd "hosts" on this machine, each in a network namespace of its own, joined by a bridge
# in the root namespace where Kamailio (deploy/kamailio/dispatcher.cfg) runs in front of them:
#
#   root ns: bridge $P-br  $NET.1/24   (Kamailio, the SIP clients)
#     ├── veth $P-h1v ── ns $P-h1: eth0 $NET.11/24, lo up   (hostd host 1)
#     └── veth $P-h2v ── ns $P-h2: eth0 $NET.12/24, lo up   (hostd host 2)
#
# Usage: two-hosts.sh up|down|status   (root; idempotent: `up` over an existing set-up rebuilds
# it, `down` removes whatever of it exists, including processes still running in the namespaces).
# Settings (environment): PREFIX (default hostd, at most 8 characters: interface names are
# limited to 15), NET (the /24's first three octets, default 10.77.0).
# Run a host's daemon with: ip netns exec $P-h1 hostd daemon --services gateway \
#   --sipserver-host $NET.11 --sipserver-advertised-address $NET.11 ...
set -eu

P=${PREFIX:-hostd}
NET=${NET:-10.77.0}
BR="$P-br"

case "$P" in
  *[!A-Za-z0-9]*|'') echo "PREFIX must be letters and digits" >&2; exit 2 ;;
esac
[ ${#P} -le 8 ] || { echo "PREFIX $P is longer than 8 characters" >&2; exit 2; }
case "$NET" in
  *[!0-9.]*|'') echo "NET must look like 10.77.0" >&2; exit 2 ;;
esac

down() {
  for h in 1 2; do
    ns="$P-h$h"
    if ip netns list | grep -qw "^$ns"; then
      # Processes left in the namespace (a test that failed) go first, or the namespace lingers.
      for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
      ip netns del "$ns"
    fi
    ip link del "$P-h${h}v" 2>/dev/null || true
  done
  ip link del "$BR" 2>/dev/null || true
}

up() {
  down
  ip link add "$BR" type bridge
  ip addr add "$NET.1/24" dev "$BR"
  ip link set "$BR" up
  for h in 1 2; do
    ns="$P-h$h"
    ip netns add "$ns"
    ip link add "$P-h${h}v" type veth peer name eth0 netns "$ns"
    ip link set "$P-h${h}v" master "$BR" up
    ip -n "$ns" addr add "$NET.1$h/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
  done
  # The bridge forwards only between its ports; no routing or NAT to the outside is set up.
}

status() {
  ip -br addr show dev "$BR" 2>/dev/null || echo "$BR: absent"
  for h in 1 2; do
    ns="$P-h$h"
    if ip netns list | grep -qw "^$ns"; then ip -n "$ns" -br addr show dev eth0; else echo "$ns: absent"; fi
  done
}

case "${1:-}" in
  up) up; status ;;
  down) down ;;
  status) status ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
