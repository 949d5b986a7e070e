#!/usr/bin/env bash
# Validates the OpenAPI description a running Gable serves, with an independent validator.
#
#   tests/openapi/validate.sh
#
# Builds the server (`cargo build -p gable`), starts it on two free local ports with a fresh
# data directory (.ci/fresh-server), fetches GET /v1/openapi.json from both listeners (production and sandbox),
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

# ---- start it on free ports with a fresh data directory (.ci/fresh-server) -----------------
FRESH_BIN="$BIN" FRESH_NAME=openapi
# shellcheck source=.ci/fresh-server
source .ci/fresh-server
WORK="$(mktemp -d "${TMPDIR:-/tmp}/gable-openapi.XXXXXX")"
cleanup() {
    local status=$?
    fresh_cleanup "$status"
    rm -rf "$WORK"
}
trap cleanup EXIT

fresh_store sqlite
say "starting $BIN on free ports (production and sandbox) with a fresh data directory"
# stdout holds the first-run demo key: it stays in the fresh server's temporary directory.
fresh_serve || die "the server did not start"
LIVE_URL="$FRESH_LIVE_URL"
SANDBOX_URL="$FRESH_SANDBOX_URL"
say "production $LIVE_URL, sandbox $SANDBOX_URL"

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

fresh_stop

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
