#!/usr/bin/env bash
# openapi-typescript turns the running Gable's /v1/openapi.json into types; the test
# (generated.test.ts, type-checked against them with tsc) makes real calls with
# openapi-fetch. GABLE_SANDBOX_URL and GABLE_TEST_KEY come from sdks/run.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
    npm ci --no-audit --no-fund
fi
rm -rf generated build
mkdir -p generated
t0=$SECONDS
# --default-non-nullable=false: openapi-typescript 7 otherwise makes every property with a
# `default` required, in request bodies too (a property's `timezone` would have to be sent).
npx openapi-typescript "${GABLE_SANDBOX_URL%/}/openapi.json" --default-non-nullable=false -o generated/gable.ts
echo "generated/gable.ts: $(wc -c <generated/gable.ts) bytes, $((SECONDS - t0)) s"
npx tsc -p .
node --test --test-reporter=spec build/js/generated.test.js
