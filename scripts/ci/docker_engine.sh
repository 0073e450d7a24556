# shellcheck shell=bash
# Start and stop a private Docker engine for CI and for image tests on a plain machine.
# Source this file, then: docker_engine_install; docker_engine_start; trap docker_engine_stop EXIT
#
# The engine gets its own socket, data-root, exec-root, pidfile and log under VERL_DOCKER_STATE, so it never
# touches (or is confused with) a system engine. Debian's docker.io is used on purpose: its client drives the
# engine's built-in BuildKit with DOCKER_BUILDKIT=1 (RUN --mount=type=cache works) without a buildx plugin,
# which the newer /usr/local/bin/docker client would demand.

VERL_DOCKER_STATE="${VERL_DOCKER_STATE:-/run/verl-ci-docker}"
VERL_DOCKER_DATA_ROOT="${VERL_DOCKER_DATA_ROOT:-/var/lib/verl-ci-docker}"
VERL_DOCKER_START_TIMEOUT="${VERL_DOCKER_START_TIMEOUT:-60}"
VERL_DOCKER_CLIENT_DIR="${VERL_DOCKER_STATE}/bin"   # put first on PATH: `docker` = Debian's client

_engine_log() { echo "[docker-engine] $*" >&2; }

# Install Debian's engine and debootstrap (for the base image) unless both are already there.
docker_engine_install() {
  if [ -x /usr/sbin/dockerd ] && [ -x /usr/bin/docker ] && command -v debootstrap >/dev/null; then
    return 0
  fi
  _engine_log "installing docker.io and debootstrap with apt-get"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends docker.io debootstrap >/dev/null
}

# Start dockerd in the background and wait until it answers. Exports DOCKER_HOST, DOCKER_BUILDKIT and a PATH
# whose `docker` is Debian's client. Fails (non-zero) with the engine's log tail if it does not come up.
docker_engine_start() {
  mkdir -p "$VERL_DOCKER_STATE" "$VERL_DOCKER_CLIENT_DIR" "$VERL_DOCKER_DATA_ROOT"
  export DOCKER_HOST="unix://${VERL_DOCKER_STATE}/docker.sock"
  export DOCKER_BUILDKIT=1
  ln -sf /usr/bin/docker "$VERL_DOCKER_CLIENT_DIR/docker"
  case ":$PATH:" in *":$VERL_DOCKER_CLIENT_DIR:"*) ;; *) export PATH="$VERL_DOCKER_CLIENT_DIR:$PATH" ;; esac

  if docker_engine_running; then
    _engine_log "engine already answering at $DOCKER_HOST"
    return 0
  fi
  _engine_log "starting dockerd (log: $VERL_DOCKER_STATE/dockerd.log)"
  # setsid: the engine must not receive the terminal's signals meant for the test run.
  setsid /usr/sbin/dockerd \
    --host "$DOCKER_HOST" \
    --data-root "$VERL_DOCKER_DATA_ROOT" \
    --exec-root "$VERL_DOCKER_STATE/exec" \
    --pidfile "$VERL_DOCKER_STATE/dockerd.pid" \
    >"$VERL_DOCKER_STATE/dockerd.log" 2>&1 </dev/null &
  _VERL_DOCKERD_PID=$!   # this shell's engine: docker_engine_stop stops this one and nothing else

  local waited=0
  until docker_engine_running; do
    if [ "$waited" -ge "$VERL_DOCKER_START_TIMEOUT" ] || ! kill -0 "$_VERL_DOCKERD_PID" 2>/dev/null; then
      _engine_log "dockerd did not answer within ${waited}s; last lines of its log:"
      tail -n 20 "$VERL_DOCKER_STATE/dockerd.log" >&2
      return 1
    fi
    sleep 1
    waited=$((waited + 1))
  done
  _engine_log "engine ready after ${waited}s: $(docker version --format '{{.Server.Version}}')"
}

docker_engine_running() {
  DOCKER_HOST="unix://${VERL_DOCKER_STATE}/docker.sock" /usr/bin/docker version --format '{{.Server.Version}}' >/dev/null 2>&1
}

# Stop the engine this shell started (and only that one: an engine that was already running stays up);
# waits for it to exit so its mounts and socket are released.
docker_engine_stop() {
  local pid="${_VERL_DOCKERD_PID:-}"
  _VERL_DOCKERD_PID=
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  _engine_log "stopping dockerd (pid $pid)"
  kill -TERM "$pid"
  local waited=0
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 30 ]; do sleep 1; waited=$((waited + 1)); done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  return 0
}
