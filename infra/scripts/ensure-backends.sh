#!/usr/bin/env bash
# Makes sure NATS (with JetStream) and Redis answer on loopback, installing them from
# Debian's packages and starting them when they do not. Safe to run again and again.
set -euo pipefail

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

if ! answers 4222; then
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
