#!/usr/bin/env bash
# Makes sure NATS (with JetStream) and Redis answer on loopback, installing them from
# Debian's packages and starting them when they do not. Safe to run again and again.
#
# PSS_SECURE_NATS=1: NATS is started with accounts that keep device gateways apart from
# the service (infra/nats/secure-server.conf.template), on NATS_URL's port, with nkeys
# under DATA_DIR/nats (see infra/scripts/secure-nats.ts); the service then connects
# with DATA_DIR/nats/service.nk. A NATS without users already on that port is an error.
set -euo pipefail
cd "$(dirname "$0")/../.."

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

need_pkg() {
  if ! command -v "$1" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$1" ] && [ ! -x "/usr/bin/$1" ]; then
    echo "installing $2 from Debian packages"
    if [ "$(id -u)" -eq 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
    else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null; fi
  fi
}

wait_for() {
  for _ in $(seq 1 50); do answers "$1" && return 0; sleep 0.2; done
  echo "$2 did not start on 127.0.0.1:$1" >&2
  return 1
}

# Whether the NATS server on the port asks clients for credentials (its INFO line says).
requires_auth() {
  local info
  exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
  IFS= read -r -t 2 info <&3 || true
  exec 3>&-
  [[ "$info" == *'"auth_required":true'* ]]
}

start_secure_nats() {
  local out conf port dir bin
  # Compiled: `npm install` and `npm start` build dist/ before this runs.
  out=$(node dist/infra/scripts/secure-nats.js)
  read -r conf port <<<"$out"
  dir=$(dirname "$conf")
  if answers "$port"; then
    if requires_auth "$port"; then
      # Ours: it reloads the configuration just written (gateway keys added or revoked).
      local pid
      pid=$(cat "$dir/nats-server.pid" 2>/dev/null || true)
      if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = nats-server ]; then kill -HUP "$pid"; fi
      return 0
    fi
    echo "PSS_SECURE_NATS=1, but the NATS on 127.0.0.1:$port takes clients without credentials:" >&2
    echo "stop it, or set NATS_URL to another port (e.g. nats://127.0.0.1:4223) for the secured one" >&2
    return 1
  fi
  need_pkg nats-server nats-server
  bin=$(command -v nats-server || echo /usr/sbin/nats-server)
  echo "starting nats-server with accounts for the service and device gateways ($conf)"
  setsid nohup "$bin" -c "$conf" -P "$dir/nats-server.pid" -l "$dir/nats-server.log" </dev/null >/dev/null 2>&1 &
  wait_for "$port" nats-server
}

if [ "${PSS_SECURE_NATS:-0}" = "1" ]; then
  start_secure_nats
elif ! answers 4222; then
  need_pkg nats-server nats-server
  bin=$(command -v nats-server || echo /usr/sbin/nats-server)
  store=${NATS_STORE_DIR:-/var/lib/nats-server}
  mkdir -p "$store" 2>/dev/null || store=$(mktemp -d)
  echo "starting nats-server with JetStream (store $store)"
  start-stop-daemon --start --oknodo --background --exec "$bin" -- -a 127.0.0.1 -p 4222 -js -sd "$store" -l /tmp/nats-server.log \
    || nohup "$bin" -a 127.0.0.1 -p 4222 -js -sd "$store" >/tmp/nats-server.log 2>&1 &
  wait_for 4222 nats-server
fi

if ! answers 6379; then
  need_pkg redis-server redis-server
  echo "starting redis-server"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no --dir /tmp --logfile /tmp/redis-ci.log
  wait_for 6379 redis-server
fi
echo "backends: nats and redis answer on 127.0.0.1"
