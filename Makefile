# Gable developer entry points. See docs/development.md.
#   make run   [ARGS="..."]   build the release site and serve it
#   make test                 everything CI runs (.ci/test)
#   make lint                 cargo fmt --check + clippy -D warnings, as CI (.ci/lint)
#   make audit                supply-chain checks: cargo deny + npm audit, as CI (.ci/supply-chain)
#   make generate             rewrite the copies of the collection and event lists from the registry (sdks/generate.py)
#   make bench                bench/run (when it exists)
#   make bench-writes         bench/writes
#   make bench-webhooks       bench/webhooks
#   make bench-payments       BENCH_MODE=payments bench/writes
#   make bench-soak           bench/soak
#   make bench-import         bench/import: 100,000 units with their properties and buildings, imported with `gable import`
#   make bench-quick          bench/quick: the hot paths at small sizes, against bench/baseline.md (< 5 min)
#   make bench-console        bench/console: the console's list page with 100,000 leases (goal: ≤ 50 ms at the median)
#   make bench-floor          bench/floor: Gable's reads beside the same reads with nothing of Gable in them
#   make bench-embed          the flows' browser test alone, one backend after the other, holding
#                             iframe creation to gable:ready to its budget (a quiet machine)

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
.ONESHELL:

ROOT := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
ARGS ?=

.PHONY: help install install-tools install-runtime-tools build release run watch test ci lint audit generate bench bench-quick bench-console bench-floor bench-writes bench-webhooks bench-payments bench-soak bench-import bench-embed lint-scripts

help:
	@echo "make run [ARGS=...]   install runtime tools, .ci/build-site --release, run target/release/gable serve ARGS"
	@echo "make watch            cargo leptos watch (installs cargo-leptos first, ~12 min once): rebuild and reload on save"
	@echo "make install          make release, then copy target/release/gable to ~/.cargo/bin (on the PATH)"
	@echo "make test             .ci/test: tools, PostgreSQL, lint, build, nextest, then side by side browser tests, kits, README, OpenAPI validation and fuzzing"
	@echo "make lint             .ci/lint: cargo fmt --check, cargo clippy -D warnings (workspace + WASM frontend)"
	@echo "make audit            .ci/supply-chain: cargo deny (licenses, bans, sources, advisories), npm audit of the lockfiles"
	@echo "make ci               .ci/run (what CI runs: make test with timing, PostgreSQL mandatory)"
	@echo "make generate         cargo build -p gable, then sdks/generate.py: the kits' collection accessors, the OpenAPI validator's list, the docs' lists of collections and event types, from gable collections"
	@echo "make bench            bench/run (if present)"
	@echo "make bench-console   bench/console: render time of the console's lease list with 100,000 leases, both databases (goal ≤ 50 ms median)"
	@echo "make bench-writes     bench/writes: the write path (test payments created succeeded, then reversed)"
	@echo "make bench-webhooks   bench/webhooks: webhook deliveries/s after an outage, commit-to-receipt latency"
	@echo "make bench-payments   BENCH_MODE=payments bench/writes: idempotent test payments per second"
	@echo "make bench-quick    bench/quick: read, list, deep page, payments, deliveries at small sizes beside hello-world, compared with bench/baseline.md (run before and after a hot-path change)"
	@echo "make bench-floor    bench/floor: Gable's read and list beside the floor (the same reads with nothing of Gable) and hello-world"
	@echo "make bench-soak       bench/soak: ten minutes of mixed load at 80 % of capacity: errors, p99, memory"
	@echo "make build / release  .ci/build-site (debug / --release): the server, the console's WASM, the embeddable flows"
	@echo "make install-tools    .ci/install-tools (full)"
	@echo "make lint-scripts     bash -n + shellcheck on the .ci scripts and the ones that start servers"

install-tools:
	cd "$(ROOT)"
	./.ci/install-tools

install-runtime-tools:
	cd "$(ROOT)"
	./.ci/install-tools --runtime-only

build: install-runtime-tools
	cd "$(ROOT)"
	./.ci/build-site

release: install-runtime-tools
	cd "$(ROOT)"
	./.ci/build-site --release

# Optional: cargo-leptos rebuilds the server and the WASM on every save and reloads the
# page. Not needed for anything else, so only this target installs it.
watch:
	cd "$(ROOT)"
	./.ci/install-tools --runtime-only --with-cargo-leptos
	bash embed/build.sh
	source .ci/env
	cargo leptos watch -- serve $(ARGS)

# The release build on the PATH: rustup puts ~/.cargo/bin there. Run `gable serve` from
# the repository root (the console's files are in target/site) or pass --site-root.
install: release
	cd "$(ROOT)"
	bin="$${CARGO_HOME:-$$HOME/.cargo}/bin"
	install -D -m 0755 target/release/gable "$$bin/gable"
	echo "installed $$bin/gable"

run: release
	cd "$(ROOT)"
	source .ci/env
	export LEPTOS_OUTPUT_NAME=gable LEPTOS_SITE_ROOT=target/site LEPTOS_SITE_PKG_DIR=pkg LEPTOS_ENV=PROD
	exec target/release/gable serve $(ARGS)

test:
	cd "$(ROOT)"
	./.ci/test

ci:
	cd "$(ROOT)"
	./.ci/run

lint:
	cd "$(ROOT)"
	./.ci/lint

audit:
	cd "$(ROOT)"
	./.ci/supply-chain

# The copies of the collection list and the event catalogue (the starter kits' accessors,
# the OpenAPI validator's list, README's lists, docs/workflows.md's events table, the
# browser test's event types) rewritten as `gable collections --format json` prints them;
# CI fails when they are out of date (.ci/generated). GABLE_BIN=path uses that binary, unbuilt.
generate:
	cd "$(ROOT)"
	if [ -z "$${GABLE_BIN:-}" ]; then cargo build -p gable; fi
	python3 sdks/generate.py

bench:
	cd "$(ROOT)"
	if [ -x bench/run ]; then exec bench/run $(ARGS); \
	elif [ -f bench/run ]; then exec bash bench/run $(ARGS); \
	else echo "bench/run not present yet"; fi

# The shell scripts lint-scripts checks: the .ci ones, and those that start servers with
# .ci/fresh-server (shellcheck -x follows what they source: bench/env.sh, bench/read-store.sh).
SCRIPTS := .ci/install-tools .ci/test .ci/lint .ci/run .ci/env .ci/supply-chain .ci/build-site .ci/generated \
	.ci/fresh-server tests/browser/run.sh tests/openapi/fuzz.sh tests/openapi/validate.sh sdks/run.sh \
	bench/run bench/quick bench/floor bench/writes bench/webhooks bench/soak

lint-scripts:
	cd "$(ROOT)"
	for f in $(SCRIPTS); do bash -n "$$f"; done
	if command -v shellcheck >/dev/null; then shellcheck -x $(SCRIPTS); \
	else echo "shellcheck not installed (apt-get install shellcheck); bash -n passed"; fi

bench-writes:
	exec bash bench/writes

bench-webhooks:
	exec bash bench/webhooks

bench-payments:
	BENCH_MODE=payments exec bash bench/writes

bench-soak:
	exec bash bench/soak

bench-import:
	exec bash bench/import

bench-quick:
	exec bash bench/quick

bench-console:
	exec bash bench/console

bench-floor:
	exec bash bench/floor

bench-embed:
	GABLE_EMBED_READY_BUDGET=1 GABLE_BROWSER_FILES=embed exec bash tests/browser/run.sh
