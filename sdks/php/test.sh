#!/usr/bin/env bash
# The PHP kit's suite (PHPUnit 9, Debian's /usr/bin/phpunit: Packagist is out of reach, and
# the kit itself needs only PHP's standard library) against the Gable that sdks/run.sh
# started (GABLE_SANDBOX_URL, GABLE_TEST_KEY).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
PHP="${GABLE_PHP:-php}"
PHPUNIT="${GABLE_PHPUNIT:-$(command -v phpunit || true)}"
[ -x vendor/bin/phpunit ] && PHPUNIT=vendor/bin/phpunit
[ -n "$PHPUNIT" ] || { echo "php kit: phpunit not found (apt-get install phpunit)" >&2; exit 1; }

# Every file parses (also the ones no test loads).
linted=0
while IFS= read -r -d '' f; do
    out="$("$PHP" -l "$f" 2>&1)" || { echo "$out" >&2; exit 1; }
    linted=$((linted + 1))
done < <(find autoload.php src tests -name '*.php' -print0)
echo "php -l: $linted files parse"

exec "$PHPUNIT" --testdox
