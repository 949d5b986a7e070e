#!/usr/bin/env bash
# Gable's browser tests: builds the server, the console's site and the embeddable flows'
# bundle once (.ci/build-site, debug), then for each backend (SQLite, PostgreSQL)
# starts `gable serve` on free ports with a fresh store and runs `node --test` on the test
# files (tests/browser/*.test.mjs) against it in Debian's Chromium. The server may deliver
# webhooks to 127.0.0.0/8 (`--webhook-allow-cidrs`): the webhooks test's receiver listens there.
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

ADMIN_URL="${GABLE_TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
BACKENDS="${GABLE_BROWSER_BACKENDS:-sqlite postgres}"
ARTIFACTS="tests/artifacts"
LOGS="$ARTIFACTS/logs"

say() { printf '\n==> [browser %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# ---- cleanup: whatever is running or created when we exit -----------------------------
SERVER_PID=""
PG_DB=""
MASTER_KEY=""
TMP_DIRS=()
BIN=""
# end_run: stops the server and drops the PostgreSQL database of the current run.
end_run() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=""
    fi
    if [ -n "$PG_DB" ]; then
        psql "$ADMIN_URL" -XAtqc "DROP DATABASE IF EXISTS \"$PG_DB\" WITH (FORCE)" >/dev/null 2>&1 \
            || echo "browser tests: could not drop database $PG_DB" >&2
        PG_DB=""
    fi
}
cleanup() {
    end_run
    local d
    for d in "${TMP_DIRS[@]}"; do rm -rf "$d"; done
    TMP_DIRS=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM

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
# run_backend NAME STORE-ARGS...: starts the server on a fresh store, runs the tests.
run_backend() {
    local backend="$1"; shift
    local stdout="$LOGS/$backend-stdout.log" log="$LOGS/$backend-server.log"
    local shots="$ARTIFACTS/screenshots/$backend"
    rm -rf "$shots"; mkdir -p "$shots"
    : >"$stdout"; : >"$log"

    # The server reads GABLE_*/DATABASE_URL from the environment too; only our flags count.
    env -u DATABASE_URL -u GABLE_DATA_DIR -u GABLE_ADDR -u GABLE_SANDBOX_ADDR \
        -u GABLE_PUBLIC_URL -u GABLE_SANDBOX_PUBLIC_URL -u GABLE_LOG_FORMAT -u GABLE_WEBHOOK_ALLOW_CIDRS -u GABLE_MASTER_KEY \
        ${MASTER_KEY:+"GABLE_MASTER_KEY=$MASTER_KEY"} \
        GABLE_LOG=debug LEPTOS_SITE_ROOT=target/site LEPTOS_OUTPUT_NAME=gable \
        "$BIN" "$@" serve --addr 127.0.0.1:0 --sandbox-addr 127.0.0.1:0 --webhook-allow-cidrs 127.0.0.0/8 \
        >"$stdout" 2>"$log" &
    SERVER_PID=$!

    local console="" sandbox=""
    for _ in $(seq 1 120); do
        console="$(sed -n 's/^ *Console: *\(http[^ ]*\).*/\1/p' "$stdout" | head -n1)"
        sandbox="$(sed -n 's/^ *Sandbox API: *\(http[^ ]*\).*/\1/p' "$stdout" | head -n1)"
        [ -n "$console" ] && [ -n "$sandbox" ] && break
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            echo "browser tests ($backend): the server exited during start-up; its log:" >&2
            tail -n 40 "$log" >&2
            SERVER_PID=""
            return 1
        fi
        sleep 0.5
    done
    if [ -z "$console" ] || [ -z "$sandbox" ]; then
        echo "browser tests ($backend): the server did not print its addresses within 60 s; stdout and log:" >&2
        tail -n 20 "$stdout" >&2; tail -n 40 "$log" >&2
        return 1
    fi
    console="${console%/}"
    echo "server ($backend): console $console, sandbox API $sandbox, log $log"

    local rc=0
    GABLE_CONSOLE_URL="$console" \
    GABLE_SANDBOX_URL="${sandbox%/}" \
    GABLE_LIVE_API_URL="$console/v1" \
    GABLE_BACKEND="$backend" \
    GABLE_SERVER_LOG="$ROOT/$log" \
    GABLE_SCREENSHOTS="$shots" \
        node --test --test-reporter=spec "${TEST_FILES[@]}" || rc=$?

    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    return "$rc"
}

failed=()
timings=()

for backend in $BACKENDS; do
    t0=$(date +%s)
    case "$backend" in
        sqlite)
            say "SQLite"
            data_dir="$(mktemp -d "${TMPDIR:-/tmp}/gable-browser-XXXXXX")"
            TMP_DIRS+=("$data_dir")
            run_backend sqlite --data-dir "$data_dir" || failed+=("sqlite")
            ;;
        postgres)
            say "PostgreSQL"
            if ! psql "$ADMIN_URL" -XAtqc 'select 1' >/dev/null 2>&1; then
                if [ "${GABLE_REQUIRE_POSTGRES:-0}" = 1 ]; then
                    echo "browser tests: PostgreSQL is unreachable at $ADMIN_URL and GABLE_REQUIRE_POSTGRES=1" >&2
                    failed+=("postgres (unreachable)")
                else
                    echo "browser tests: PostgreSQL is unreachable at $ADMIN_URL; skipping the PostgreSQL run (set GABLE_REQUIRE_POSTGRES=1 to fail instead)" >&2
                fi
                continue
            fi
            # PostgreSQL needs a configured master key (webhook secrets are sealed under
            # it); SQLite generates one into its data directory.
            MASTER_KEY="$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"
            PG_DB="gable_browser_$(date +%s)_$RANDOM"
            psql "$ADMIN_URL" -XAtqc "CREATE DATABASE \"$PG_DB\"" >/dev/null
            # The admin URL with its database replaced (…/postgres -> …/$PG_DB, query kept).
            base="${ADMIN_URL%%\?*}"; query="${ADMIN_URL#"$base"}"
            run_backend postgres --database-url "${base%/*}/$PG_DB$query" || failed+=("postgres")
            MASTER_KEY=""
            end_run
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
