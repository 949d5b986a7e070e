#!/usr/bin/env bash
# Gable's browser tests: builds the server, the console's site and the embeddable flows'
# bundle once (.ci/build-site, debug), then for each backend (SQLite, PostgreSQL)
# starts `gable serve` on free ports with a fresh store (.ci/fresh-server) and runs
# `node --test` on the test files (tests/browser/*.test.mjs) against it in Debian's
# Chromium. The server may deliver webhooks to 127.0.0.0/8 (`--webhook-allow-cidrs`): the
# webhooks test's receiver listens there. CI runs the two backends side by side, one
# invocation each (GABLE_BROWSER_BACKENDS=sqlite, =postgres).
#
#   bash tests/browser/run.sh
#
# Environment:
#   GABLE_TEST_DATABASE_URL   admin URL the PostgreSQL database is created from
#                             (default postgres://postgres@127.0.0.1:5432/postgres)
#   GABLE_REQUIRE_POSTGRES=1  fail (not skip) the PostgreSQL run when PostgreSQL is unreachable
#   GABLE_BROWSER_BACKENDS    backends to run (default "sqlite postgres")
#   GABLE_BROWSER_SKIP_BUILD=1  use the existing target/site (embed/ included) and server binary
#   GABLE_BIN                 the server binary (default target/debug/gable); CI passes the one
#                             its build stage made for the tests
#   GABLE_BROWSER_FILES       test files to run, separated by spaces: paths, or names such as
#                             "embed" for tests/browser/embed.test.mjs (default: all *.test.mjs)
#
# Artifacts (tests/artifacts/, git-ignored):
#   screenshots/<backend>/*.png, screenshots/<backend>/phone/*.png, screenshots/<backend>/webhooks/*.png,
#   screenshots/<backend>/sandbox/*.png, screenshots/<backend>/embed/*.png
#   logs/<backend>-server.log (the server's log, GABLE_LOG=debug), logs/<backend>-stdout.log
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
# shellcheck disable=SC1091  # .ci/env: PATH, NODE_PATH, GABLE_CHROMIUM
source .ci/env

BACKENDS="${GABLE_BROWSER_BACKENDS:-sqlite postgres}"
ARTIFACTS="tests/artifacts"
LOGS="$ARTIFACTS/logs"

say() { printf '\n==> [browser %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# ---- fresh stores and servers (.ci/fresh-server); cleanup when we exit -----------------
FRESH_LOGS="$LOGS"
# shellcheck source=.ci/fresh-server
source .ci/fresh-server
TMP_DIRS=()
BIN=""
cleanup() {
    local status=$? d
    fresh_cleanup "$status"
    for d in "${TMP_DIRS[@]}"; do rm -rf "$d"; done
    TMP_DIRS=()
}
trap cleanup EXIT

# ---- build ---------------------------------------------------------------------------
START=$(date +%s)
if [ "${GABLE_BROWSER_SKIP_BUILD:-0}" = 1 ]; then
    say "using the existing build (GABLE_BROWSER_SKIP_BUILD=1)"
else
    say ".ci/build-site (debug: the server, the console's WASM, the embeddable flows)"
    ./.ci/build-site
fi
SOURCE_BIN="${GABLE_BIN:-target/debug/gable}"
for f in "$SOURCE_BIN" target/site/pkg/gable.js target/site/pkg/gable.wasm \
         target/site/embed/boot.js target/site/embed/gable_embed.js target/site/embed/gable_embed_bg.wasm target/site/embed/embed.css; do
    [ -e "$f" ] || { echo "browser tests: $f is missing after the build" >&2; exit 1; }
done
[ -x "${GABLE_CHROMIUM:-/usr/bin/chromium}" ] || { echo "browser tests: no Chromium at ${GABLE_CHROMIUM:-/usr/bin/chromium} (.ci/install-tools installs it)" >&2; exit 1; }
node -e "require('playwright-core')" 2>/dev/null \
    || { echo "browser tests: playwright-core not found on NODE_PATH=$NODE_PATH (.ci/install-tools installs it)" >&2; exit 1; }

# The test files: GABLE_BROWSER_FILES (paths or names), or every *.test.mjs.
TEST_FILES=()
if [ -n "${GABLE_BROWSER_FILES:-}" ]; then
    for want in $GABLE_BROWSER_FILES; do
        found=""
        for candidate in "$want" "tests/browser/$want" "tests/browser/$want.test.mjs"; do
            if [ -f "$candidate" ]; then found="$candidate"; break; fi
        done
        [ -n "$found" ] || { echo "browser tests: GABLE_BROWSER_FILES names $want, which is no test file (tests/browser/*.test.mjs)" >&2; exit 1; }
        TEST_FILES+=("$found")
    done
else
    TEST_FILES=(tests/browser/*.test.mjs)
fi
for f in "${TEST_FILES[@]}"; do
    case "$f" in
        *embed.test.mjs)
            node -e "require('axe-core')" 2>/dev/null \
                || { echo "browser tests: axe-core not found on NODE_PATH=$NODE_PATH (.ci/install-tools installs it)" >&2; exit 1; }
            ;;
    esac
done
BUILD_SECS=$(( $(date +%s) - START ))

# Pin the binary: a later `cargo build` elsewhere in the workspace may replace the file
# while the tests run. A hard link keeps this one whatever happens to the original.
pin_dir="$(mktemp -d "$ROOT/target/browser-tests.XXXXXX")"
TMP_DIRS+=("$pin_dir")
if ln "$SOURCE_BIN" "$pin_dir/gable" 2>/dev/null; then
    BIN="$pin_dir/gable"
else
    echo "browser tests: could not hard-link $SOURCE_BIN; using it in place" >&2
    BIN="$SOURCE_BIN"
fi

mkdir -p "$LOGS"

# ---- one backend ----------------------------------------------------------------------
# run_backend NAME: starts the server on the fresh store (fresh_store before), runs the tests.
run_backend() {
    local backend="$1"
    local shots="$ARTIFACTS/screenshots/$backend"
    rm -rf "$shots"; mkdir -p "$shots"
    FRESH_BIN="$BIN" FRESH_NAME="$backend"
    : >"$LOGS/$backend-stdout.log"; : >"$LOGS/$backend-server.log"

    GABLE_LOG=debug LEPTOS_SITE_ROOT=target/site LEPTOS_OUTPUT_NAME=gable \
        fresh_serve --webhook-allow-cidrs 127.0.0.0/8 || return 1
    local console="$FRESH_LIVE_URL" sandbox="$FRESH_SANDBOX_URL/v1" log="$FRESH_LOG"
    echo "server ($backend): console $console, sandbox API $sandbox, log $log"

    local rc=0
    GABLE_CONSOLE_URL="$console" \
    GABLE_SANDBOX_URL="$sandbox" \
    GABLE_LIVE_API_URL="$console/v1" \
    GABLE_BACKEND="$backend" \
    GABLE_SERVER_LOG="$ROOT/$log" \
    GABLE_SCREENSHOTS="$shots" \
        node --test --test-reporter=spec "${TEST_FILES[@]}" || rc=$?

    fresh_stop
    return "$rc"
}

failed=()
timings=()

for backend in $BACKENDS; do
    t0=$(date +%s)
    case "$backend" in
        sqlite)
            say "SQLite"
            fresh_store sqlite && run_backend sqlite || failed+=("sqlite")
            ;;
        postgres)
            say "PostgreSQL"
            if ! fresh_postgres_reachable; then
                if [ "${GABLE_REQUIRE_POSTGRES:-0}" = 1 ]; then
                    echo "browser tests: PostgreSQL is unreachable at $FRESH_ADMIN_URL and GABLE_REQUIRE_POSTGRES=1" >&2
                    failed+=("postgres (unreachable)")
                else
                    echo "browser tests: PostgreSQL is unreachable at $FRESH_ADMIN_URL; skipping the PostgreSQL run (set GABLE_REQUIRE_POSTGRES=1 to fail instead)" >&2
                fi
                continue
            fi
            # PostgreSQL needs a configured master key (webhook secrets are sealed under
            # it): fresh_store makes one; SQLite generates one into its data directory.
            FRESH_NAME=browser fresh_store postgres && run_backend postgres || failed+=("postgres")
            fresh_drop
            ;;
        *)
            echo "browser tests: unknown backend $backend" >&2
            failed+=("$backend (unknown)")
            ;;
    esac
    timings+=("$backend $(( $(date +%s) - t0 )) s")
done

echo
echo "browser tests: build ${BUILD_SECS} s; ${timings[*]:-no runs}; screenshots in $ARTIFACTS/screenshots/, server logs in $LOGS/"
if [ "${#failed[@]}" -gt 0 ]; then
    echo "browser tests: FAILED: ${failed[*]}"
    exit 1
fi
echo "browser tests: passed (${BACKENDS}; ${TEST_FILES[*]})"
