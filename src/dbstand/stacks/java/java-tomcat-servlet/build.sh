#!/bin/sh
# Compiles the servlets with javac against Tomcat 10's Jakarta servlet API and lays out
# the exploded web application in the build dir (no Maven: the only library, Jackson,
# comes from Debian and is copied into WEB-INF/lib).
set -eu
cd "$(dirname "$0")"
out="$DBSTAND_BUILD_DIR/webapp"
jars=/usr/share/java
mkdir -p "$out/WEB-INF/classes" "$out/WEB-INF/lib"
cp -R webapp/. "$out/"
javac -J-XX:-UsePerfData --release 17 -encoding UTF-8 -Xlint:all,-serial -Werror \
    -cp "/usr/share/tomcat10/lib/servlet-api.jar:$jars/jackson-databind.jar:$jars/jackson-core.jar:$jars/jackson-annotations.jar" \
    -d "$out/WEB-INF/classes" src/dbstand/webtech/*.java
cp -L "$jars/jackson-databind.jar" "$jars/jackson-core.jar" "$jars/jackson-annotations.jar" \
    "$out/WEB-INF/lib/"
