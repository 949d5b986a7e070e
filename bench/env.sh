# Sourced by the benchmark scripts: what every benchmark server runs with.
# shellcheck shell=bash

# The benchmarks measure Gable, not its per-key rate limits (25 requests/s for a test key).
export GABLE_RATE_LIMIT_TEST=0 GABLE_RATE_LIMIT_LIVE=0
export GABLE_LOG=warn
# PostgreSQL refuses to serve without a master key (SQLite would generate one into its
# data directory); a throwaway one serves both, since the stores are made fresh here.
GABLE_MASTER_KEY=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
export GABLE_MASTER_KEY

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The URL of database $1 on the server of the admin URL $2 (the same user, host and port).
db_url() { python3 -c "import sys,urllib.parse as u; p=u.urlparse(sys.argv[2]); print(p._replace(path='/'+sys.argv[1]).geturl())" "$1" "$2"; }
