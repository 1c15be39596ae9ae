#!/bin/sh
# Usage: build.sh [SOURCES] (default: the stack's own folder; java-apache-tomcat-ajp
# gives ../java-tomcat-servlet, whose application it serves through Apache).
# Lays out the stack's exploded web application in the build dir (java-tomcat-servlet,
# java-tomcat-jsp, java-apache-tomcat-ajp): SOURCES' webapp/ folder as it is (JSP
# pages are compiled by Tomcat's Jasper when the context starts) and its src/ classes compiled with javac against
# Tomcat 10's Jakarta servlet API (no Maven: the only library, Jackson, comes from
# Debian and is copied into WEB-INF/lib).
set -eu
# the paths every Java stack shares, written for javax.servlet: Tomcat 10 is Jakarta
jakarta="$(mktemp -d)"
trap 'rm -rf "$jakarta"' EXIT
sed 's/javax\.servlet/jakarta.servlet/g' "$(dirname "$0")/../pages/Pages.java" > "$jakarta/Pages.java"
cd "$DBSTAND_STACK_DIR"
cd "${1:-.}"
out="$DBSTAND_BUILD_DIR/webapp"
jars=/usr/share/java
mkdir -p "$out/WEB-INF/classes" "$out/WEB-INF/lib"
cp -R webapp/. "$out/"
# shellcheck disable=SC2046
javac -J-XX:-UsePerfData --release 17 -encoding UTF-8 -Xlint:all,-serial -Werror \
    -cp "/usr/share/tomcat10/lib/servlet-api.jar:$jars/jackson-databind.jar:$jars/jackson-core.jar:$jars/jackson-annotations.jar" \
    -d "$out/WEB-INF/classes" $(find src -name '*.java' 2>/dev/null) "$jakarta/Pages.java"
cp -L "$jars/jackson-databind.jar" "$jars/jackson-core.jar" "$jars/jackson-annotations.jar" \
    "$out/WEB-INF/lib/"
