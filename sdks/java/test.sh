#!/usr/bin/env bash
# The Java kit's suite (JUnit 5) against the Gable that sdks/run.sh started
# (GABLE_SANDBOX_URL, GABLE_TEST_KEY). No Maven here (no Maven Central): javac and the
# JUnit console launcher, against Debian's jars.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
J=/usr/share/java
LIBS="$J/jackson-databind.jar:$J/jackson-core.jar:$J/jackson-annotations.jar"
JUNIT="$J/junit-platform-console-standalone.jar" # the launcher with JUnit Jupiter's API and engine
JAVAC=(javac --release 17 -encoding UTF-8 -proc:none -Xlint:all -Werror)

rm -rf build
"${JAVAC[@]}" -d build/classes -cp "$LIBS" $(find src/main/java -name '*.java')
"${JAVAC[@]}" -d build/test-classes -cp "build/classes:$LIBS:$JUNIT" $(find src/test/java -name '*.java')
exec java -jar "$JUNIT" --disable-banner --disable-ansi-colors --details=tree --fail-if-no-tests --include-engine=junit-jupiter \
    --class-path "build/classes:build/test-classes:$LIBS" --scan-class-path build/test-classes
