#!/usr/bin/env bash
# Validates the OpenAPI description a running Gable serves, with an independent validator.
#
#   tests/openapi/validate.sh
#
# Builds the server (`cargo build -p gable`), starts it on two free local ports with a fresh
# data directory, fetches GET /v1/openapi.json from both listeners (production and sandbox),
# stops the server, and runs tests/openapi/validate.py on each document
# (openapi-spec-validator as OpenAPI 3.1, plus Gable's own checks). Exits non-zero on failure.
#
# Environment knobs:
#   GABLE_BIN=path     use this server binary instead of building target/debug/gable
#   GABLE_PYTHON=path  a Python that has openapi-spec-validator (default: .tools/venv/bin/python,
#                      created with `python3 -m venv` + pip if missing)
#   KEEP_OPENAPI=dir   also copy the fetched documents into this directory
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

OPENAPI_SPEC_VALIDATOR_VERSION=0.9.0   # as pinned in .ci/install-tools
VENV_DIR="$ROOT/.tools/venv"

say() { echo "openapi: $*"; }
die() { echo "openapi: FAIL: $*" >&2; exit 1; }

# ---- a Python with openapi-spec-validator --------------------------------------------------
has_validator() { "$1" -c 'import openapi_spec_validator' >/dev/null 2>&1; }
PYTHON="${GABLE_PYTHON:-}"
if [ -z "$PYTHON" ] || ! has_validator "$PYTHON"; then
    PYTHON="$VENV_DIR/bin/python"
    if [ ! -x "$PYTHON" ] || ! has_validator "$PYTHON"; then
        say "installing openapi-spec-validator $OPENAPI_SPEC_VALIDATOR_VERSION into .tools/venv"
        [ -x "$PYTHON" ] || python3 -m venv "$VENV_DIR"
        "$PYTHON" -m pip install --quiet --disable-pip-version-check \
            "openapi-spec-validator==$OPENAPI_SPEC_VALIDATOR_VERSION" \
            || die "could not install openapi-spec-validator"
    fi
fi

# ---- the server binary ---------------------------------------------------------------------
if [ -n "${GABLE_BIN:-}" ]; then
    BIN="$GABLE_BIN"
else
    say "cargo build -p gable"
    cargo build --quiet -p gable || die "cargo build -p gable failed"
    BIN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/gable"
fi
[ -x "$BIN" ] || die "no server binary at $BIN"

# ---- start it on two free ports ------------------------------------------------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/gable-openapi.XXXXXX")"
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

read -r LIVE_PORT SANDBOX_PORT < <(python3 tests/openapi/free_ports.py 2)
LIVE_URL="http://127.0.0.1:$LIVE_PORT"
SANDBOX_URL="http://127.0.0.1:$SANDBOX_PORT"

say "starting $BIN on $LIVE_URL (production) and $SANDBOX_URL (sandbox)"
# stdout holds the first-run demo key: keep it in the temporary directory only.
"$BIN" serve --data-dir "$WORK/data" --addr "127.0.0.1:$LIVE_PORT" --sandbox-addr "127.0.0.1:$SANDBOX_PORT" \
    >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER_PID=$!

ready=""
for _ in $(seq 1 300); do   # up to 60 s (migrations on a slow machine)
    if curl -sf -o /dev/null "$LIVE_URL/v1/openapi.json"; then ready=1; break; fi
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.2
done
if [ -z "$ready" ]; then
    echo "--- server stderr ---" >&2
    tail -n 40 "$WORK/server.err" >&2 || true
    die "the server did not answer GET $LIVE_URL/v1/openapi.json"
fi

fetch() {  # fetch URL FILE: the document, and that it is served as JSON
    local ct
    ct="$(curl -sf -o "$2" -w '%{content_type}' "$1")" || die "GET $1 failed"
    case "$ct" in
        application/json*) ;;
        *) die "GET $1 answered Content-Type '$ct', expected application/json" ;;
    esac
}
fetch "$LIVE_URL/v1/openapi.json" "$WORK/production.json"
fetch "$SANDBOX_URL/v1/openapi.json" "$WORK/sandbox.json"

kill "$SERVER_PID" 2>/dev/null || true
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""

if [ -n "${KEEP_OPENAPI:-}" ]; then
    mkdir -p "$KEEP_OPENAPI"
    cp "$WORK/production.json" "$WORK/sandbox.json" "$KEEP_OPENAPI/"
fi

# ---- validate both --------------------------------------------------------------------------
status=0
"$PYTHON" tests/openapi/validate.py "$WORK/production.json" --server-url "$LIVE_URL" --label production || status=1
"$PYTHON" tests/openapi/validate.py "$WORK/sandbox.json" --server-url "$SANDBOX_URL" --label sandbox || status=1
[ "$status" = 0 ] || die "the OpenAPI description is not valid (see above)"
say "ok"
