#!/usr/bin/env bash
# One entry point that sets everything up on a fresh machine, then runs what you asked for.
#   ./go check [ARGS]   the main job: `kfc check ARGS` (the suite against the embedded reference by
#                       default), then `kfc report` (HTML) of that run if it completed; exits with
#                       kfc check's status
#   ./go test  [ARGS]   the project's tests (what CI runs)
#   ./go kfc   [ARGS]   any kfc command inside the project's environment
#   ./go tox   [ARGS]   tox (the matrices of tox.ini) from the project's environment
#   ./go tour           the bundled walk-through
#   ./go bench          the benchmarks
# `check`, `kfc` and `tour` run where you call ./go from, so relative paths in ARGS (--report DIR,
# --expectations FILE, --out ...) are yours; `test`, `tox` and `bench` run in the repository (their
# paths are the project's). The Python environment lives in the repository: .venv/ (or KFC_VENV,
# relative to the repository).  `check` ends with `kfc report`, which installs the pinned Allure CLI
# on first use into the per-user cache (KFC_CACHE_DIR, else ~/.cache/kafka-feature-conformance);
# this needs Node.js >= 20 with npm.
#   KFC_NO_NPM=1        no HTML report after `check` (no Node.js here)
#   KFC_NO_JAVA_INSTALL=1  never apt-get Java 17 (by default it is installed when java is missing;
#                       `./go check --no-spark` does not need Java)
set -euo pipefail
CALLER="$PWD"
ROOT="$(cd "$(dirname "$0")" && pwd)"
cd "$ROOT"
VENV="${KFC_VENV:-.venv}"
case "$VENV" in /*) ;; *) VENV="$ROOT/$VENV" ;; esac
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

# Spark needs a JVM: install Debian's OpenJDK 17 when no java is on PATH (root, or sudo).
ensure_java() {
  if command -v java >/dev/null 2>&1 || [ -n "${JAVA_HOME:-}" ]; then return; fi
  if [ "${KFC_NO_JAVA_INSTALL:-}" = 1 ]; then
    echo "[go] error: java not found (Spark needs Java 17); KFC_NO_JAVA_INSTALL=1 forbids installing it" >&2
    exit 1
  fi
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "[go] installing Java 17 for Spark (Debian openjdk-17-jre-headless) ..." >&2
  $sudo apt-get update -qq >&2 && $sudo apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless >&2 || {
    echo "[go] error: could not install Java 17; install a JDK/JRE 17 and re-run" >&2; exit 1; }
}

cmd="${1:-check}"; shift || true
setup
# So that targets like "subprocess:kfc target serve" find the project's kfc.
export PATH="$VENV/bin:$PATH"
no_spark=""
for a in "$@"; do [ "$a" = --no-spark ] && no_spark=1; done
case "$cmd" in check) [ -n "$no_spark" ] || ensure_java ;; test) ensure_java ;; esac
case "$cmd" in
  check) cd "$CALLER"
         report=reports/latest; prev=""
         for a in "$@"; do
           case "$a" in --report=*) report="${a#--report=}" ;; esac
           [ "$prev" = --report ] && report="$a"; prev="$a"
         done
         # The run's start: kfc check writes DIR/verdict only at the end of a run that completed, so
         # a verdict newer than this marker is this run's. An aborted run, a bad argument or a run
         # that never started leaves none (or an older one): no report then, and never an old one.
         started="$(mktemp "${TMPDIR:-/tmp}/kfc-go-check.XXXXXX")"
         trap 'rm -f "$started"' EXIT
         set +e
         # Ctrl-C is kfc check's to handle (one line, exit 130): wait for it, then exit with its status
         # (without a trap, bash may also kill itself with SIGINT when kfc check returns).
         trap ':' INT
         "$VENV/bin/kfc" check "$@"; rc=$?
         trap - INT
         if [ "${KFC_NO_NPM:-}" != 1 ] && [ -f "$report/verdict" ] && [ "$report/verdict" -nt "$started" ]; then
           "$VENV/bin/kfc" report "$report" || rc=1
         fi
         exit $rc ;;
  test)  exec "$VENV/bin/python" -m pytest "$@" ;;
  tox)   exec "$VENV/bin/tox" "$@" ;;
  kfc)   cd "$CALLER"
         exec "$VENV/bin/kfc" "$@" ;;
  tour)  cd "$CALLER"
         exec "$VENV/bin/kfc" tour "$@" ;;
  bench) exec "$VENV/bin/python" -m benchmarks.reference "$@" ;;
  *) echo "usage: ./go check|test|kfc|tox|tour|bench [ARGS]" >&2; exit 2 ;;
esac
