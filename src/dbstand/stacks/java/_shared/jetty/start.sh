#!/bin/sh
# Usage: start.sh MODULES (the Jetty modules the stack needs: "server,http,webapp", plus
# "jsp" for JSP pages). Shared by java-jetty-servlet and java-jetty-jsp.
# Runs Debian's Jetty 9 in the foreground (start.jar in this very JVM, exec'd: SIGTERM
# to the process group stops it) from a jetty.base generated in the work dir:
# - the MODULES (the jsp module is Jetty's apache-jsp: Tomcat 9's Jasper from Debian's
#   libtomcat9-java); one HTTP/1.1 connector on $DBSTAND_HOST:$DBSTAND_PORT with the Date
#   and Server headers on;
# - a thread pool of 4 x DBSTAND_WORKERS request threads (at least 4), plus the
#   acceptor and selector threads Jetty takes from the same pool;
# - the build's exploded web application at "/", with the static folder added to its
#   resources (the default servlet serves /file.html from there).
# The web application reads the database password from DBSTAND_DB_PASSWORD_FILE
# itself: it is written into no file and put on no command line.
set -eu

home=/usr/share/jetty9
base="$DBSTAND_WORK_DIR/jetty"
webapp="$DBSTAND_BUILD_DIR/webapp"
modules="$1"
workers="${DBSTAND_WORKERS:-$(nproc)}"
threads=$((workers * 4))
[ "$threads" -ge 4 ] || threads=4
selectors=$(( (workers + 1) / 2 ))
pool=$((threads + 1 + selectors))

# Escapes a value for XML text (printf is a shell builtin: nothing on argv).
xml() { printf '%s' "$1" | sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g'; }

umask 077
mkdir -p "$base/etc" "$base/logs" "$base/tmp" "$base/work"

cat > "$base/start.ini" <<EOF
--module=$modules
jetty.http.host=${DBSTAND_HOST:-127.0.0.1}
jetty.http.port=$DBSTAND_PORT
jetty.http.acceptors=1
jetty.http.selectors=$selectors
jetty.httpConfig.sendDateHeader=true
jetty.httpConfig.sendServerVersion=true
jetty.threadPool.minThreads=$pool
jetty.threadPool.maxThreads=$pool
etc/dbstand.xml
EOF

requestlog=""
if [ "${DBSTAND_LOGGING:-0}" = 1 ]; then
    requestlog="<Set name=\"RequestLog\">
    <New class=\"org.eclipse.jetty.server.CustomRequestLog\">
      <Arg><New class=\"org.eclipse.jetty.server.AsyncRequestLogWriter\">
        <Arg>$(xml "$DBSTAND_LOG_FILE")</Arg><Set name=\"append\">true</Set>
      </New></Arg>
      <Arg>%{client}a - %u %t \"%r\" %s %O %D</Arg>
    </New>
  </Set>"
fi

cat > "$base/etc/dbstand.xml" <<EOF
<?xml version="1.0"?>
<!DOCTYPE Configure PUBLIC "-//Jetty//Configure//EN" "http://www.eclipse.org/jetty/configure_9_3.dtd">
<Configure id="Server" class="org.eclipse.jetty.server.Server">
  <Ref refid="Contexts">
    <Call name="addHandler">
      <Arg>
        <New class="org.eclipse.jetty.webapp.WebAppContext">
          <Set name="contextPath">/</Set>
          <Set name="baseResource">
            <New class="org.eclipse.jetty.util.resource.ResourceCollection">
              <Arg>
                <Array type="java.lang.String">
                  <Item>$(xml "$webapp")</Item>
                  <Item>$(xml "$DBSTAND_STATIC_DIR")</Item>
                </Array>
              </Arg>
            </New>
          </Set>
          <Set name="tempDirectory">$(xml "$base/work")</Set>
          <Set name="throwUnavailableOnStartupException">true</Set>
          <Call name="setInitParameter">
            <Arg>org.eclipse.jetty.servlet.Default.dirAllowed</Arg><Arg>false</Arg>
          </Call>
          <Call name="setInitParameter"><Arg>dbstand.pool.size</Arg><Arg>$threads</Arg></Call>
        </New>
      </Arg>
    </Call>
  </Ref>
  $requestlog
</Configure>
EOF

cd "$base"
# No hsperfdata files in /tmp; temporary files stay in the work dir.
exec java -Xms64m -Xmx256m -XX:-UsePerfData -Djava.awt.headless=true \
    -Djava.io.tmpdir="$base/tmp" -jar "$home/start.jar" \
    jetty.home="$home" jetty.base="$base"
