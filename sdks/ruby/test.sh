#!/usr/bin/env bash
# The Ruby kit's suite (minitest, from Debian's packages; no bundler: rubygems.org is not
# reachable) against the Gable that sdks/run.sh started (GABLE_SANDBOX_URL, GABLE_TEST_KEY).
# `ruby -w` so that warnings show; minitest's exit status fails the script on any failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
exec ruby -w -Ilib -Itest -e 'Dir["test/**/*_test.rb"].sort.each { |f| require File.expand_path(f) }' -- -v
