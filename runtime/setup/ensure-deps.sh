#!/bin/sh
# Install what is missing, idempotently: Debian packages listed in debian-packages.txt and the
# npm packages of package-lock.json. Used by `npm start` and `npm test` on a fresh machine.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cd "$top"

missing=""
for pkg in $(grep -v '^\s*#' "$here/debian-packages.txt" | tr -s ' \n' ' '); do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing="$missing $pkg"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "ensure-deps: missing Debian packages:$missing (run as root to install them)" >&2
    exit 1
  fi
  echo "ensure-deps: installing Debian packages:$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >&2
fi

# npm packages: install when node_modules is absent or older than the lock file. `npm install`
# (not `npm ci`) because npm 11 leaves other platforms' optional packages out of the lock file
# and `npm ci` then refuses it; the versions installed are still the lock file's.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "ensure-deps: installing npm packages" >&2
  npm install --no-audit --no-fund >&2
fi

# ---- Docker swarm for the deployment service's rollout tests (test/deployer/swarm-*) -----------
# dockerd started if it does not answer (CI machines start nothing by hand; no systemd there), then
# a single-node swarm on loopback if it is not one yet. Idempotent; an existing swarm is kept.
if command -v dockerd >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  if ! docker version >/dev/null 2>&1; then
    echo "ensure-deps: starting dockerd" >&2
    nohup dockerd >/var/log/hostd-dockerd.log 2>&1 </dev/null &
    i=0
    until docker version >/dev/null 2>&1; do
      i=$((i + 1))
      if [ "$i" -gt 100 ]; then echo "ensure-deps: dockerd did not start (see /var/log/hostd-dockerd.log)" >&2; exit 1; fi
      sleep 0.2
    done
  fi
  if [ "$(docker info --format '{{.Swarm.LocalNodeState}}' 2>/dev/null)" != active ]; then
    echo "ensure-deps: docker swarm init" >&2
    docker swarm init --advertise-addr 127.0.0.1 >/dev/null 2>&1 || [ "$(docker info --format '{{.Swarm.LocalNodeState}}' 2>/dev/null)" = active ]
  fi
fi
