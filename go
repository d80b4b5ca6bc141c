#!/usr/bin/env bash
# One entry point that sets everything up on a fresh machine, then runs what you asked for.
#   ./go check [ARGS]   the main job (today: the reference tour; `kfc check` once the suite lands)
#   ./go test  [ARGS]   the project's tests (what CI runs)
#   ./go kfc   [ARGS]   any kfc command inside the project's environment
#   ./go bench          the benchmarks
set -euo pipefail
cd "$(dirname "$0")"
VENV="${KFC_VENV:-.venv}"
PY="${PYTHON:-python3}"
stamp="$VENV/.kfc-setup"
want="$(cat pyproject.toml go | sha256sum | cut -c1-16)"

setup() {
  if [ -x "$VENV/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then return; fi
  echo "[go] setting up $VENV (Python packages from PyPI) ..." >&2
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[dev]' >&2
  echo "$want" > "$stamp"
}

cmd="${1:-check}"; shift || true
setup
case "$cmd" in
  check) exec "$VENV/bin/kfc" tour "$@" ;;
  test)  exec "$VENV/bin/python" -m pytest "$@" ;;
  kfc)   exec "$VENV/bin/kfc" "$@" ;;
  bench) exec "$VENV/bin/python" -m benchmarks.reference "$@" ;;
  *) echo "usage: ./go check|test|kfc|bench [ARGS]" >&2; exit 2 ;;
esac
