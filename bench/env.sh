# Sourced by the benchmark scripts: what every benchmark server runs with.
# shellcheck shell=bash

# The benchmarks measure Gable, not its per-key rate limits (25 requests/s for a test key).
export GABLE_RATE_LIMIT_TEST=0 GABLE_RATE_LIMIT_LIVE=0
export GABLE_LOG=warn
# PostgreSQL refuses to serve without a master key (SQLite would generate one into its
# data directory); a throwaway one serves both, since the stores are made fresh here.
GABLE_MASTER_KEY=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
export GABLE_MASTER_KEY


# Fresh stores, free ports and `gable serve` on them: .ci/fresh-server, with the binary of
# the script that sources this ($GABLE) and the master key above for every store.
FRESH_BIN=$GABLE
FRESH_FIXED_MASTER_KEY=$GABLE_MASTER_KEY
FRESH_ADMIN_URL=$ADMIN
# shellcheck source=.ci/fresh-server
source "$ROOT/.ci/fresh-server"
# A store the benchmark keeps between runs (the PostgreSQL read store) is served without
# `fresh_store` being called for it first: it serves with this key too.
FRESH_MASTER_KEY=$GABLE_MASTER_KEY
free_port() { fresh_ports 1; }

# PostgreSQL's autovacuum keeps the planner's statistics current as tables grow; this
# project's machines run PostgreSQL with it off (for the tests' speed). Then the plans made
# while the tables were small stay, including the ones PostgreSQL caches per connection for
# foreign-key checks, which says nothing about a production database. So where
# `autovacuum` is off, stand_in_for_autovacuum URL SECONDS runs `ANALYZE` on that database
# every SECONDS in the background, as autovacuum's analyze would, and sets $analyzer to its
# pid (empty when autovacuum is on); stop it with `kill $analyzer`. It also stops by itself
# once the script that started it has exited ($$ is that script in the subshell too).
stand_in_for_autovacuum() {
    analyzer=""
    if [ "$(psql "$1" -XAtqc 'SHOW autovacuum')" = off ]; then
        echo "PostgreSQL's autovacuum is off here: running ANALYZE every $2 s in its place" >&2
        (while sleep "$2" && kill -0 $$ 2>/dev/null; do psql "$1" -XAtqc ANALYZE >/dev/null 2>&1 || true; done) &
        analyzer=$!
    fi
}

# The URL of database $1 on the server of the admin URL $2 (the same user, host and port).
db_url() { python3 -c "import sys,urllib.parse as u; p=u.urlparse(sys.argv[2]); print(p._replace(path='/'+sys.argv[1]).geturl())" "$1" "$2"; }
