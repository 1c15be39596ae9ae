#!/bin/sh
# Shared by java-tomcat-servlet and java-tomcat-jsp (the same Tomcat base: only the
# webapp the stack's build lays out differs).
# Runs Debian's Tomcat 10 in the foreground (`catalina.sh run`, exec'd: SIGTERM to the
# process group stops it) from the CATALINA_BASE base.sh generates in the work dir,
# with one HTTP/1.1 connector on 127.0.0.1:$DBSTAND_PORT and, with DBSTAND_LOGGING=1,
# an access log valve writing DBSTAND_LOG_FILE.
set -eu

. "$(dirname "$0")/base.sh"   # home, threads, xml, tomcat_base

valve=""
if [ "${DBSTAND_LOGGING:-0}" = 1 ]; then
    valve="<Valve className=\"org.apache.catalina.valves.AccessLogValve\"
          directory=\"$(xml "$(dirname "$DBSTAND_LOG_FILE")")\"
          prefix=\"$(xml "$(basename "$DBSTAND_LOG_FILE")")\" suffix=\"\" rotatable=\"false\"
          pattern=\"%h %l %u %t &quot;%r&quot; %s %b %D\"/>"
fi

tomcat_base http-exec "<Connector executor=\"workers\" protocol=\"HTTP/1.1\" address=\"127.0.0.1\"
               port=\"$DBSTAND_PORT\" server=\"Apache-Tomcat/10.1\"
               maxKeepAliveRequests=\"-1\" connectionTimeout=\"20000\"/>" "$valve"
exec "$home/bin/catalina.sh" run
