# Sourced by bench/quick and bench/floor, after bench/env.sh: the read store they share and
# the helpers they measure with. Expects GABLE (the binary), OUT (results directory),
# DURATION (wrk seconds), SIZE (units seeded) and ADMIN (PostgreSQL admin URL).
# shellcheck shell=bash

# wrk → requests/s; any answer but 2xx fails the run (a benchmark of errors measures nothing).
wrk_rps() {
    local url=$1 key=$2
    wrk -t1 -c64 -d"${DURATION}s" -H "Authorization: Bearer $key" "$url" >"$OUT/quick-wrk.txt"
    if grep -q 'Non-2xx' "$OUT/quick-wrk.txt"; then echo "non-2xx answers from $url:" >&2; cat "$OUT/quick-wrk.txt" >&2; exit 1; fi
    awk '/Requests\/sec:/ { printf "%.0f", $2 }' "$OUT/quick-wrk.txt"
}

rss_mb() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }

json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)[sys.argv[1]])" "$1"; }

serve() { # store args… → starts gable serve (.ci/fresh-server); sets $pid and $sandbox
    # shellcheck disable=SC2034  # read by fresh_serve
    FRESH_STORE=("$@")
    FRESH_LOGS=$OUT FRESH_NAME=quick-serve fresh_serve || exit 1
    pid=$FRESH_PID
    sandbox=$FRESH_SANDBOX_URL
}

# Runs the server on the new read store until its scheduler finished a round: the first one
# bills every seeded lease, and a benchmark that ran beside it would measure that instead.
# On PostgreSQL the round writes three times as many rows as the seed, so statistics are
# kept current as autovacuum would (every 10 s); without, it took 3 to 9 times as long.
settle_store() {
    local metrics analyzer=""
    FRESH_METRICS=1 serve "${store[@]}"
    if [ "${store[0]}" = --database-url ]; then stand_in_for_autovacuum "${store[1]}" 10; fi
    metrics="$FRESH_METRICS_URL/metrics"
    for _ in $(seq 1 600); do
        if curl -sf "$metrics" | grep -q '^gable_scheduler_round_duration_seconds_count [1-9]'; then
            if [ -n "$analyzer" ]; then kill "$analyzer" 2>/dev/null || true; fi
            fresh_stop
            return
        fi
        sleep 0.5
    done
    if [ -n "$analyzer" ]; then kill "$analyzer" 2>/dev/null || true; fi
    echo "the scheduler's first round on the new read store did not finish in 5 minutes" >&2; exit 1
}

# The read store of backend $1 (sqlite or postgres), seeded with SIZE units on first use and
# kept in OUT between runs → sets store (gable's arguments for it), tenant, and url (on
# PostgreSQL).
read_store() {
    local backend=$1 marker t
    case $backend in
        sqlite) store=(--data-dir "$OUT/quick-sqlite-$SIZE") ;;
        postgres)
            if [ -f "$OUT/quick-postgres-$SIZE.tenant" ]; then
                url=$(db_url gable_bench_quick "$ADMIN")
            else
                fresh_store postgres gable_bench_quick
                url=$FRESH_DB_URL
            fi
            store=(--database-url "$url") ;;
        *) echo "unknown backend $backend"; exit 2 ;;
    esac
    marker="$OUT/quick-$backend-$SIZE.tenant"
    if [ ! -f "$marker" ]; then
        echo "seeding the $backend read store with $SIZE units" >&2
        "$GABLE" "${store[@]}" migrate >/dev/null
        t=$("$GABLE" "${store[@]}" tenant create --name "Quick" | json_field id)
        "$GABLE" "${store[@]}" seed --tenant "$t" --env test --size "$SIZE" >/dev/null
        settle_store
        echo "$t" >"$marker"
    fi
    tenant=$(cat "$marker")
    # This machine kind's PostgreSQL runs without autovacuum: plan with current statistics.
    if [ "$backend" = postgres ]; then psql "$url" -XAtqc 'ANALYZE' >/dev/null; fi
}
