#!/usr/bin/env bash
# The Go kit's suite (go test, standard library only) against the Gable that sdks/run.sh
# started (GABLE_SANDBOX_URL, GABLE_TEST_KEY); fails on unformatted code or go vet findings.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
# No dependencies, and no Go proxy reachable here: never try one.
export GOPROXY=off GOFLAGS=
# Go's default caches, or kit-local ones when the machine has no home to keep them in.
case "$(go env GOCACHE 2>/dev/null || true)" in "" | off) export GOCACHE="$PWD/.cache/go-build" ;; esac
[ -n "$(go env GOPATH 2>/dev/null || true)" ] || export GOPATH="$PWD/.cache/go"
unformatted="$(gofmt -l .)"
if [ -n "$unformatted" ]; then
    echo "gofmt: these files are not formatted:" >&2
    echo "$unformatted" >&2
    exit 1
fi
go vet ./...
# -count=1: the results depend on the server, never on Go's test cache.
exec go test -count=1 -timeout 5m -v ./...
