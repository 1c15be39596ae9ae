#!/bin/sh
# Usage: build.sh [--jsp]
# Lays out the stack's exploded web application in the build dir (java-jetty-servlet,
# java-jetty-jsp): its webapp/ folder as it is, the shared JSP pages (java/_shared/jsp)
# under WEB-INF/jsp with --jsp (Jetty's Jasper compiles them when the context starts),
# and the shared classes (java/_shared/pages, this folder's JettyPool and WorldPool)
# compiled with javac against the javax servlet API Jetty 9 runs (Debian's servlet-api
# jar). No Maven: the libraries (MariaDB Connector/J and Jackson) come from Debian,
# copied into WEB-INF/lib.
set -eu
# shellcheck source=../pages/webapp.sh
. "$(dirname "$0")/../pages/webapp.sh"
jsp=""
if [ "${1:-}" = "--jsp" ]; then jsp=1; shift; fi
jetty="$(cd "$(dirname "$0")" && pwd)"   # JettyPool.java, WorldPool.java: the pool both Jetty stacks open
shared="$(cd "$jetty/.." && pwd)"        # pages/: the classes every Java stack shares; jsp/: the JSP pages
cd "$DBSTAND_STACK_DIR"
out="$DBSTAND_BUILD_DIR/webapp"
jars=/usr/share/java
libs="$jars/mariadb-java-client.jar $jars/jackson-databind.jar $jars/jackson-core.jar $jars/jackson-annotations.jar"
lay_out_webapp "$out" "${jsp:+$shared/jsp}"
# shellcheck disable=SC2046
javac -J-XX:-UsePerfData --release 17 -encoding UTF-8 -Xlint:all,-serial -Werror \
    -cp "$jars/servlet-api.jar:$(echo $libs | tr ' ' ':')" \
    -d "$out/WEB-INF/classes" "$shared"/pages/*.java "$jetty/JettyPool.java" "$jetty/WorldPool.java"
# shellcheck disable=SC2086
cp -L $libs "$out/WEB-INF/lib/"
