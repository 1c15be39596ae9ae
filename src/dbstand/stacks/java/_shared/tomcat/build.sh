#!/bin/sh
# Usage: build.sh [--jsp] [SOURCES] (SOURCES: the folder whose webapp/ is laid out,
# default the stack's own; java-apache-tomcat-ajp gives ../java-tomcat-servlet, whose
# application it serves through Apache).
# Lays out the stack's exploded web application in the build dir (java-tomcat-servlet,
# java-tomcat-jsp, java-apache-tomcat-ajp): SOURCES' webapp/ folder as it is, the shared
# JSP pages (java/_shared/jsp) under WEB-INF/jsp with --jsp (Tomcat's Jasper compiles
# them when the context starts), and the shared classes (java/_shared/pages, written
# for javax.servlet and rewritten here for Tomcat 10's Jakarta API, and this folder's
# WorldPool) compiled with javac. No Maven: the only library, Jackson, comes from
# Debian and is copied into WEB-INF/lib.
set -eu
# shellcheck source=../pages/webapp.sh
. "$(dirname "$0")/../pages/webapp.sh"
jsp=""
if [ "${1:-}" = "--jsp" ]; then jsp=1; shift; fi
tomcat="$(cd "$(dirname "$0")" && pwd)"   # WorldPool.java: the pool Tomcat publishes
shared="$(cd "$tomcat/.." && pwd)"
jakarta="$(mktemp -d)"
trap 'rm -rf "$jakarta"' EXIT
for source in "$shared"/pages/*.java; do
    sed 's/javax\.servlet/jakarta.servlet/g' "$source" > "$jakarta/$(basename "$source")"
done
cd "$DBSTAND_STACK_DIR"
cd "${1:-.}"
out="$DBSTAND_BUILD_DIR/webapp"
jars=/usr/share/java
lay_out_webapp "$out" "${jsp:+$shared/jsp}"
javac -J-XX:-UsePerfData --release 17 -encoding UTF-8 -Xlint:all,-serial -Werror \
    -cp "/usr/share/tomcat10/lib/servlet-api.jar:$jars/jackson-databind.jar:$jars/jackson-core.jar:$jars/jackson-annotations.jar" \
    -d "$out/WEB-INF/classes" "$jakarta"/*.java "$tomcat/WorldPool.java"
cp -L "$jars/jackson-databind.jar" "$jars/jackson-core.jar" "$jars/jackson-annotations.jar" \
    "$out/WEB-INF/lib/"
