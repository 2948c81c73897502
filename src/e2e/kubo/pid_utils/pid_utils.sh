# shellcheck shell=bash
# A stand-in for kubo-release's pid_utils package, whose script is not among the sources here: the two
# functions kubo's flanneld_ctl calls, doing what their names say.

# pid_guard PIDFILE NAME: refuses to start a second NAME while the pidfile names a live process; removes a
# stale pidfile.
pid_guard() {
  local pidfile=$1 name=$2
  if [ -f "$pidfile" ]; then
    local pid
    pid=$(head -1 "$pidfile")
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      echo "$name is already running (pid $pid)" >&2
      exit 1
    fi
    rm -f "$pidfile"
  fi
}

# kill_and_wait PIDFILE [SECONDS]: TERM to the pidfile's process, KILL after SECONDS (25), then removes the
# pidfile.
kill_and_wait() {
  local pidfile=$1 timeout=${2:-25}
  [ -f "$pidfile" ] || return 0
  local pid
  pid=$(head -1 "$pidfile")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    local waited=0
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt $((timeout * 10)) ]; do
      sleep 0.1
      waited=$((waited + 1))
    done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}
