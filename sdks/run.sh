#!/usr/bin/env bash
# Runs the starter kits' own test suites against a real Gable: builds the server
# (cargo build -p gable) unless GABLE_BIN is given, starts it on free ports with a fresh
# SQLite store (.ci/fresh-server; deliveries may reach 127.0.0.0/8 for the kits' webhook
# receivers; a low sandbox rate limit so the kits' 429 retries are exercised; the server's
# log is kept when a kit fails), and runs every kit's suite
# at once, each in its own tenant with its own sandbox key (every scope), exported as
# GABLE_SANDBOX_URL and GABLE_TEST_KEY, with GABLE_BIN the server binary's absolute path
# (for the kits' `gable listen` tests). A kit's suite is `sdks/<kit>/test.sh`; it
# installs what its runner needs and exits non-zero when a test fails. The clients that
# standard generators make from the API description are tested the same way
# (`sdks/generated/<generator>/test.sh`, named `generated/<generator>`).
#
#   bash sdks/run.sh [python typescript generated/python …]   (default: all of them)
#   GABLE_SDK_SERIAL=1 bash sdks/run.sh      one kit after another (easier to read)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KITS=("$@")
if [ "${#KITS[@]}" -eq 0 ]; then
    for t in sdks/*/test.sh sdks/generated/*/test.sh; do
        [ -f "$t" ] && KITS+=("$(dirname "${t#sdks/}")")
    done
fi

BIN="${GABLE_BIN:-}"
if [ -z "$BIN" ]; then
    cargo build -p gable
    BIN=target/debug/gable
fi
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
# The fresh store and server: .ci/fresh-server.
FRESH_BIN="$BIN" FRESH_NAME=sdks
# shellcheck source=.ci/fresh-server
source .ci/fresh-server
DATA="$(mktemp -d "${TMPDIR:-/tmp}/gable-sdks-XXXXXX")"
cleanup() {
    local status=$?
    fresh_cleanup "$status"
    rm -rf "$DATA"
}
trap cleanup EXIT

fresh_store sqlite
fresh_serve --webhook-allow-cidrs 127.0.0.0/8 --rate-limit-test 10 \
    || { echo "sdks: the server did not start" >&2; exit 1; }
SANDBOX="$FRESH_SANDBOX_URL/v1"
LOG="$FRESH_LOG"
echo "sdks: Gable at $SANDBOX (log $LOG)"

# A tenant and a sandbox key with every scope, for one kit (its counts and its rate-limit
# bucket are then its own).
key_for() {
    local tenant
    tenant="$(fresh_gable tenant create --name "SDK kit $1" 2>/dev/null | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p' | head -n1)"
    fresh_gable key create --tenant "$tenant" --env test --scopes '*' 2>/dev/null | sed -n 's/.*"secret": *"\([^"]*\)".*/\1/p'
}

# out KIT: where a kit's output goes ($DATA/KIT.out, `/` made `-`).
out() { echo "$DATA/${1//\//-}"; }

# run_kit KIT: the kit's suite, its output in `out KIT`.out, its time in `out KIT`.secs.
run_kit() {
    local kit="$1" t0=$SECONDS key rc=0 o
    o="$(out "$kit")"
    key="$(key_for "$kit")"
    if [ -z "$key" ]; then
        echo "sdks: could not make a sandbox key for $kit" >"$o.out"
        rc=1
    elif [ ! -f "sdks/$kit/test.sh" ]; then
        echo "sdks: no kit named $kit (no sdks/$kit/test.sh)" >"$o.out"
        rc=1
    else
        GABLE_SANDBOX_URL="$SANDBOX" GABLE_TEST_KEY="$key" GABLE_BIN="$BIN" bash "sdks/$kit/test.sh" >"$o.out" 2>&1 || rc=$?
    fi
    echo $((SECONDS - t0)) >"$o.secs"
    return "$rc"
}

declare -A pids=()
failed=()
for kit in "${KITS[@]}"; do
    if [ "${GABLE_SDK_SERIAL:-0}" = 1 ]; then
        run_kit "$kit" || failed+=("$kit")
        echo "==> sdks: $kit ($(cat "$(out "$kit").secs") s)"; cat "$(out "$kit").out"
    else
        run_kit "$kit" &
        pids[$kit]=$!
    fi
done
if [ "${GABLE_SDK_SERIAL:-0}" != 1 ]; then
    for kit in "${KITS[@]}"; do
        wait "${pids[$kit]}" || failed+=("$kit")
        echo "==> sdks: $kit ($(cat "$(out "$kit").secs") s)"
        cat "$(out "$kit").out"
        echo "<== sdks: $kit"
    done
fi
echo "sdks: kit times:"
for kit in "${KITS[@]}"; do printf '  %4s s  %s\n' "$(cat "$(out "$kit").secs")" "$kit"; done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "sdks: FAILED: ${failed[*]}; the server's log:"
    tail -n 40 "$LOG"
    exit 1
fi
echo "sdks: passed (${KITS[*]})"
