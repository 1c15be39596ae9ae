#!/bin/sh
# Usage: build.sh [SOURCES] (default: the stack's own folder; java-apache-tomcat-ajp
# gives ../java-tomcat-servlet, whose application it serves through Apache).
# Lays out the stack's exploded web application in the build dir (java-tomcat-servlet,
# java-tomcat-jsp, java-apache-tomcat-ajp): SOURCES' webapp/ folder as it is (JSP
# pages are compiled by Tomcat's Jasper when the context starts) and its src/ classes compiled with javac against
# Tomcat 10's Jakarta servlet API (no Maven: the only library, Jackson, comes from
# Debian and is copied into WEB-INF/lib).
set -eu
cd "$DBSTAND_STACK_DIR"
cd "${1:-.}"
out="$DBSTAND_BUILD_DIR/webapp"
jars=/usr/share/java
mkdir -p "$out/WEB-INF/classes" "$out/WEB-INF/lib"
cp -R webapp/. "$out/"
javac -J-XX:-UsePerfData --release 17 -encoding UTF-8 -Xlint:all,-serial -Werror \
    -cp "/usr/share/tomcat10/lib/servlet-api.jar:$jars/jackson-databind.jar:$jars/jackson-core.jar:$jars/jackson-annotations.jar" \
    -d "$out/WEB-INF/classes" src/dbstand/webtech/*.java
cp -L "$jars/jackson-databind.jar" "$jars/jackson-core.jar" "$jars/jackson-annotations.jar" \
    "$out/WEB-INF/lib/"
