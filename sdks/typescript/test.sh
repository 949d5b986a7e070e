#!/usr/bin/env bash
# The TypeScript kit's suite (node --test, compiled by tsc) against the Gable that
# sdks/run.sh started (GABLE_SANDBOX_URL, GABLE_TEST_KEY).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
# Install the compiler from the committed lock file only when it changed (or never ran).
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
    npm ci --no-audit --no-fund
    touch node_modules
fi
npx tsc -p .                    # the package: src/ → dist/
npx tsc -p tsconfig.test.json   # the tests, checked against dist/'s declarations
exec node --test --test-reporter=spec build/test/*.test.js
