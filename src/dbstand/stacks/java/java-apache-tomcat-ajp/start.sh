#!/bin/sh
# Apache 2.4 in front of Debian's Tomcat 10 through mod_proxy_ajp, both started here,
# in this process group, from configurations generated in the work dir:
# - Apache (event MPM, DBSTAND_WORKERS processes) owns $DBSTAND_HOST:$DBSTAND_PORT, serves
#   /file itself from the static folder and passes every other path over AJP;
# - Tomcat has no HTTP connector and no shutdown port (-1): one AJP/1.3 connector on a
#   free port of 127.0.0.1 picked here, guarded by a secret made here; a thread pool of
#   4 x DBSTAND_WORKERS threads (at least 4); the build's web application as ROOT;
#   MariaDB as a DBCP pool under JNDI (jdbc/world), as many connections as threads.
# The shell stays as the parent of both: SIGTERM stops both, and when one of them
# exits the other is stopped too. The database password is read from DBSTAND_DB_PASSWORD_FILE
# into Tomcat's context file only (mode 0600); it never reaches the environment or a
# command line.
set -eu

home=/usr/share/tomcat10
base="$DBSTAND_WORK_DIR/tomcat"
front="$DBSTAND_WORK_DIR/apache"
webapp="$DBSTAND_BUILD_DIR/webapp"
modules=/usr/lib/apache2/modules
workers="${DBSTAND_WORKERS:-$(nproc)}"
threads=$((workers * 4))
[ "$threads" -ge 4 ] || threads=4

# Escapes a value for an XML attribute (printf is a shell builtin: nothing on argv).
xml() { printf '%s' "$1" | sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' \
    -e 's/"/\&quot;/g' -e "s/'/\&apos;/g"; }

# A free TCP port on 127.0.0.1 for AJP (the kernel picks it; the socket is closed at
# once, so another program could take it before Tomcat binds: Tomcat then exits).
ajp_port="$("${DBSTAND_PYTHON:-python3}" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')"
secret="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"

umask 077
mkdir -p "$base/conf/Catalina/localhost" "$base/lib" "$base/logs" "$base/temp" \
    "$base/work" "$base/webapps" "$front/run"

# ---- Tomcat ----------------------------------------------------------------------
cat > "$base/conf/catalina.properties" <<EOF
common.loader="\${catalina.base}/lib","\${catalina.base}/lib/*.jar","\${catalina.home}/lib","\${catalina.home}/lib/*.jar","/usr/share/java/mariadb-java-client.jar"
server.loader=
shared.loader=
tomcat.util.scan.StandardJarScanFilter.jarsToSkip=*.jar
tomcat.util.scan.StandardJarScanFilter.jarsToScan=
EOF

cat > "$base/conf/logging.properties" <<'EOF'
handlers = 1catalina.org.apache.juli.AsyncFileHandler, java.util.logging.ConsoleHandler
.handlers = 1catalina.org.apache.juli.AsyncFileHandler, java.util.logging.ConsoleHandler
1catalina.org.apache.juli.AsyncFileHandler.level = INFO
1catalina.org.apache.juli.AsyncFileHandler.directory = ${catalina.base}/logs
1catalina.org.apache.juli.AsyncFileHandler.prefix = catalina.
java.util.logging.ConsoleHandler.level = INFO
java.util.logging.ConsoleHandler.formatter = org.apache.juli.OneLineFormatter
EOF

ln -sf "$home/etc/web.xml" "$base/conf/web.xml"

cat > "$base/conf/server.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<Server port="-1" shutdown="SHUTDOWN">
  <Listener className="org.apache.catalina.startup.VersionLoggerListener" logArgs="false"/>
  <Listener className="org.apache.catalina.core.JreMemoryLeakPreventionListener"/>
  <Listener className="org.apache.catalina.core.ThreadLocalLeakPreventionListener"/>
  <Service name="Catalina">
    <Executor name="workers" namePrefix="ajp-exec-" maxThreads="$threads"
              minSpareThreads="$threads"/>
    <Connector executor="workers" protocol="AJP/1.3" address="127.0.0.1"
               port="$ajp_port" secretRequired="true" secret="$secret"
               connectionTimeout="-1"/>
    <Engine name="Catalina" defaultHost="localhost">
      <Host name="localhost" appBase="webapps" unpackWARs="false" autoDeploy="false"
            deployOnStartup="true"/>
    </Engine>
  </Service>
</Server>
EOF

resource=""
if [ "${DBSTAND_DB_KIND:-}" = mysql ]; then
    password="$(cat "$DBSTAND_DB_PASSWORD_FILE")"
    url="jdbc:mariadb://$DBSTAND_DB_HOST:$DBSTAND_DB_PORT/$DBSTAND_DB_NAME"
    resource="<Resource name=\"jdbc/world\" auth=\"Container\" type=\"javax.sql.DataSource\"
            factory=\"org.apache.tomcat.dbcp.dbcp2.BasicDataSourceFactory\"
            driverClassName=\"org.mariadb.jdbc.Driver\" url=\"$(xml "$url")\"
            username=\"$(xml "$DBSTAND_DB_USER")\" password=\"$(xml "$password")\"
            initialSize=\"$threads\" maxTotal=\"$threads\" maxIdle=\"$threads\"
            minIdle=\"0\" maxWaitMillis=\"10000\" testOnBorrow=\"false\"/>"
    unset password
fi

cat > "$base/conf/Catalina/localhost/ROOT.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<Context docBase="$(xml "$webapp")" reloadable="false">
  <Resources cachingAllowed="true">
    <PostResources className="org.apache.catalina.webresources.DirResourceSet"
                   base="$(xml "$DBSTAND_STATIC_DIR")" webAppMount="/" readOnly="true"/>
  </Resources>
  <Manager pathname=""/>
  <JarScanner scanManifest="false" scanClassPath="false"/>
  $resource
</Context>
EOF

# ---- Apache ----------------------------------------------------------------------
accesslog=""
if [ "${DBSTAND_LOGGING:-0}" = 1 ]; then
    accesslog="CustomLog \"$DBSTAND_LOG_FILE\" \"%h %l %u %t \\\"%r\\\" %>s %b %D\""
fi

cat > "$front/apache2.conf" <<EOF
ServerRoot "$front"
ServerName ${DBSTAND_HOST:-127.0.0.1}
Listen ${DBSTAND_HOST:-127.0.0.1}:$DBSTAND_PORT
PidFile "$front/run/apache2.pid"
DefaultRuntimeDir "$front/run"
ErrorLog "$front/error.log"
LogLevel warn
User www-data
Group www-data

LoadModule mpm_event_module $modules/mod_mpm_event.so
LoadModule authz_core_module $modules/mod_authz_core.so
LoadModule mime_module $modules/mod_mime.so
LoadModule alias_module $modules/mod_alias.so
LoadModule proxy_module $modules/mod_proxy.so
LoadModule proxy_ajp_module $modules/mod_proxy_ajp.so

StartServers $workers
ServerLimit $workers
ThreadsPerChild $threads
ThreadLimit $threads
MaxRequestWorkers $((workers * threads))
MinSpareThreads $threads
MaxSpareThreads $((workers * threads))
MaxConnectionsPerChild 0
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 15
TypesConfig /etc/mime.types
$accesslog

<Directory />
    AllowOverride None
    Require all denied
</Directory>

# /file is the web server's: the static file, byte for byte.
ProxyPass /file !
Alias /file "$DBSTAND_STATIC_DIR/file.html"
<Directory "$DBSTAND_STATIC_DIR">
    Require all granted
</Directory>

# Every other path is Tomcat's, over persistent AJP connections (one pool per process).
ProxyPass / "ajp://127.0.0.1:$ajp_port/" secret=$secret retry=0
EOF

# ---- run both --------------------------------------------------------------------
export CATALINA_HOME="$home" CATALINA_BASE="$base" CATALINA_TMPDIR="$base/temp"
export CATALINA_OPTS="-Xms64m -Xmx256m -XX:-UsePerfData -Djava.awt.headless=true \
-Dorg.apache.catalina.startup.EXIT_ON_INIT_FAILURE=true"
"$home/bin/catalina.sh" run &
tomcat=$!
apache2 -f "$front/apache2.conf" -DFOREGROUND &
apache=$!

# Until either exits or a signal comes: a one-second poll (dash has no `wait -n`).
set +e
trap 'kill -TERM "$apache" "$tomcat" 2>/dev/null' TERM INT HUP
while kill -0 "$apache" 2>/dev/null && kill -0 "$tomcat" 2>/dev/null; do
    sleep 1 &
    wait $!
done
kill -TERM "$apache" "$tomcat" 2>/dev/null
wait
