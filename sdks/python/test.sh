#!/usr/bin/env bash
# The Python kit's suite (unittest, standard library only) against the Gable that
# sdks/run.sh started (GABLE_SANDBOX_URL, GABLE_TEST_KEY).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
ROOT="$(cd ../.. && pwd)"
PY="${GABLE_PYTHON:-$ROOT/.tools/venv/bin/python}"
[ -x "$PY" ] || PY=python3
PYTHONPATH=src exec "$PY" -m unittest discover -s tests -v
