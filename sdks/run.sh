#!/usr/bin/env bash
# Runs the starter kits' own test suites against a real Gable: builds the server
# (cargo build -p gable) unless GABLE_BIN is given, starts it on free ports with a fresh
# SQLite store (deliveries may reach 127.0.0.0/8 for the kits' webhook receivers; a low
# sandbox rate limit so the kits' 429 retries are exercised), makes a tenant and a sandbox
# key with every scope, and runs each kit's suite with GABLE_SANDBOX_URL and GABLE_TEST_KEY.
#
#   bash sdks/run.sh [python …]      (default: every kit present)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KITS=("$@")
[ "${#KITS[@]}" -gt 0 ] || KITS=(python)

BIN="${GABLE_BIN:-}"
if [ -z "$BIN" ]; then
    cargo build -p gable
    BIN=target/debug/gable
fi
DATA="$(mktemp -d "${TMPDIR:-/tmp}/gable-sdks-XXXXXX")"
LOG="$DATA/server.log"
PID=""
cleanup() {
    [ -n "$PID" ] && { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; }
    rm -rf "$DATA"
}
trap cleanup EXIT

env -u DATABASE_URL -u GABLE_DATA_DIR "$BIN" --data-dir "$DATA" serve --addr 127.0.0.1:0 --sandbox-addr 127.0.0.1:0 \
    --webhook-allow-cidrs 127.0.0.0/8 --rate-limit-test 10 >"$DATA/stdout" 2>"$LOG" &
PID=$!
SANDBOX=""
for _ in $(seq 1 120); do
    SANDBOX="$(sed -n 's/^ *Sandbox API: *\(http[^ ]*\).*/\1/p' "$DATA/stdout" | head -n1)"
    [ -n "$SANDBOX" ] && break
    kill -0 "$PID" 2>/dev/null || { echo "sdks: the server exited; its log:" >&2; tail -n 30 "$LOG" >&2; exit 1; }
    sleep 0.5
done
[ -n "$SANDBOX" ] || { echo "sdks: the server did not start" >&2; exit 1; }
TENANT="$("$BIN" --data-dir "$DATA" tenant create --name "SDK kits" 2>/dev/null | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' | head -n1)"
KEY="$("$BIN" --data-dir "$DATA" key create --tenant "$TENANT" --env test --scopes '*' 2>/dev/null | sed -n 's/.*"secret": *"\([^"]*\)".*/\1/p')"
[ -n "$KEY" ] || { echo "sdks: could not make a sandbox key" >&2; exit 1; }
export GABLE_SANDBOX_URL="$SANDBOX" GABLE_TEST_KEY="$KEY"
echo "sdks: Gable at $SANDBOX (log $LOG)"

failed=()
for kit in "${KITS[@]}"; do
    t0=$SECONDS
    echo "==> sdks: $kit"
    case "$kit" in
        python)
            PY="${GABLE_PYTHON:-$ROOT/.tools/venv/bin/python}"
            [ -x "$PY" ] || PY=python3
            (cd sdks/python && PYTHONPATH=src "$PY" -m unittest discover -s tests -v) || failed+=("$kit")
            ;;
        *) echo "sdks: no kit named $kit" >&2; failed+=("$kit") ;;
    esac
    echo "<== sdks: $kit: $((SECONDS - t0)) s"
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "sdks: FAILED: ${failed[*]}; the server's log:"
    tail -n 40 "$LOG"
    exit 1
fi
echo "sdks: passed (${KITS[*]})"
