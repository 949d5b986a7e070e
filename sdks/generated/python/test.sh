#!/usr/bin/env bash
# openapi-python-client (pinned in .ci/install-tools, in .tools/venv) generates a client
# from the running Gable's /v1/openapi.json; test_generated.py makes real calls with it.
# GABLE_SANDBOX_URL and GABLE_TEST_KEY come from sdks/run.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
ROOT="$(cd ../../.. && pwd)"
VENV="${GABLE_TOOLS_DIR:-$ROOT/.tools}/venv"
[ -x "$VENV/bin/openapi-python-client" ] || { echo "openapi-python-client missing: run .ci/install-tools" >&2; exit 1; }
# The generator formats its output with ruff, which comes with it into the venv.
export PATH="$VENV/bin:$PATH"
rm -rf build
mkdir -p build
curl -fsS "${GABLE_SANDBOX_URL%/}/openapi.json" -o build/openapi.json
t0=$SECONDS
openapi-python-client generate --path build/openapi.json --output-path build/gable_api_client --meta none
echo "generated $(find build/gable_api_client -name '*.py' | wc -l) modules in $((SECONDS - t0)) s"
PYTHONPATH=build exec "$VENV/bin/python" -m unittest -v test_generated.py
