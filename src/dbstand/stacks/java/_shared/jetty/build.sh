#!/bin/sh
# Lays out the stack's exploded web application in the build dir (java-jetty-servlet,
# java-jetty-jsp): its webapp/ folder as it is (JSP pages are compiled by Jetty's Jasper
# when the context starts) and its src/ classes compiled with javac against the javax
# servlet API Jetty 9 runs (Debian's servlet-api jar). No Maven: the libraries (MariaDB
# Connector/J and Jackson) come from Debian, copied into WEB-INF/lib.
set -eu
jetty="$(cd "$(dirname "$0")" && pwd)"   # JettyPool.java: the pool both Jetty stacks open
pages="$(cd "$jetty/../pages" && pwd)"   # the paths every Java stack shares
cd "$DBSTAND_STACK_DIR"
out="$DBSTAND_BUILD_DIR/webapp"
jars=/usr/share/java
libs="$jars/mariadb-java-client.jar $jars/jackson-databind.jar $jars/jackson-core.jar $jars/jackson-annotations.jar"
mkdir -p "$out/WEB-INF/classes" "$out/WEB-INF/lib"
cp -R webapp/. "$out/"
# shellcheck disable=SC2046
javac -J-XX:-UsePerfData --release 17 -encoding UTF-8 -Xlint:all,-serial -Werror \
    -cp "$jars/servlet-api.jar:$(echo $libs | tr ' ' ':')" \
    -d "$out/WEB-INF/classes" $(find src -name '*.java' 2>/dev/null) "$pages/Pages.java" \
    "$jetty/JettyPool.java"
# shellcheck disable=SC2086
cp -L $libs "$out/WEB-INF/lib/"
