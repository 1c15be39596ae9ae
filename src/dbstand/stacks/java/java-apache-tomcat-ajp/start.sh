#!/bin/sh
# Apache 2.4 in front of Debian's Tomcat 10 through mod_proxy_ajp, both started here,
# in this process group, from configurations generated in the work dir:
# - Apache (event MPM, DBSTAND_WORKERS processes) owns 127.0.0.1:$DBSTAND_PORT, serves
#   /file itself from the static folder and passes every other path over AJP;
# - Tomcat (the CATALINA_BASE of ../_shared/tomcat/base.sh, as the Tomcat stacks') has
#   no HTTP connector: one AJP/1.3 connector on a free port of 127.0.0.1 picked here,
#   guarded by a secret made here; the build's web application as ROOT.
# The shell stays as the parent of both: SIGTERM stops both, and when one of them
# exits the other is stopped too. The database password is read from DBSTAND_DB_PASSWORD_FILE
# into Tomcat's context file only (mode 0600); it never reaches the environment or a
# command line.
set -eu

. "$(dirname "$0")/../_shared/tomcat/base.sh"   # home, workers, threads, tomcat_base
front="$DBSTAND_WORK_DIR/apache"
modules=/usr/lib/apache2/modules

# A free TCP port on 127.0.0.1 for AJP (the kernel picks it; the socket is closed at
# once, so another program could take it before Tomcat binds: Tomcat then exits).
ajp_port="$("${DBSTAND_PYTHON:-python3}" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')"
secret="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"

mkdir -p "$front/run"

# ---- Tomcat ----------------------------------------------------------------------
# Its access is Apache's to log: nothing inside the Host.
tomcat_base ajp-exec "<Connector executor=\"workers\" protocol=\"AJP/1.3\" address=\"127.0.0.1\"
               port=\"$ajp_port\" secretRequired=\"true\" secret=\"$secret\"
               connectionTimeout=\"-1\"/>" ""

# ---- Apache ----------------------------------------------------------------------
accesslog=""
if [ "${DBSTAND_LOGGING:-0}" = 1 ]; then
    accesslog="CustomLog \"$DBSTAND_LOG_FILE\" \"%h %l %u %t \\\"%r\\\" %>s %b %D\""
fi

cat > "$front/apache2.conf" <<EOF
ServerRoot "$front"
ServerName 127.0.0.1
Listen 127.0.0.1:$DBSTAND_PORT
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
