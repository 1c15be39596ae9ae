# Sourced (sh) by the scripts that start Debian's Tomcat 10: start.sh here (its own
# HTTP connector: java-tomcat-servlet, java-tomcat-jsp) and java-apache-tomcat-ajp's
# (an AJP connector behind Apache). What they share is the CATALINA_BASE generated in
# the work dir; only the connector and what the Host holds differ.
# - no shutdown port (-1); a thread pool of 4 x DBSTAND_WORKERS threads (at least 4);
# - the build's exploded web application as the ROOT context, with the static folder
#   mounted into it (the default servlet serves /file.html from there);
# - MariaDB as a DBCP pool under JNDI (jdbc/world), as many connections as threads.
# The database password is read from DBSTAND_DB_PASSWORD_FILE into the context file
# only (mode 0600); it never reaches the environment or a command line.

home=/usr/share/tomcat10
base="$DBSTAND_WORK_DIR/tomcat"
webapp="$DBSTAND_BUILD_DIR/webapp"
workers="${DBSTAND_WORKERS:-$(nproc)}"
threads=$((workers * 4))
[ "$threads" -ge 4 ] || threads=4

# Escapes a value for an XML attribute (printf is a shell builtin: nothing on argv).
xml() { printf '%s' "$1" | sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' \
    -e 's/"/\&quot;/g' -e "s/'/\&apos;/g"; }

umask 077

# tomcat_base THREAD_PREFIX CONNECTOR HOST_CONTENT: writes the CATALINA_BASE; the
# pool's threads are named THREAD_PREFIX-N, CONNECTOR is the <Connector> element (on
# the pool "workers") and HOST_CONTENT goes inside the <Host> (a valve, or nothing).
tomcat_base() {
    mkdir -p "$base/conf/Catalina/localhost" "$base/lib" "$base/logs" "$base/temp" \
        "$base/work" "$base/webapps"

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

    # The container-wide defaults (default servlet, JSP servlet, MIME types) as packaged.
    ln -sf "$home/etc/web.xml" "$base/conf/web.xml"

    cat > "$base/conf/server.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<Server port="-1" shutdown="SHUTDOWN">
  <Listener className="org.apache.catalina.startup.VersionLoggerListener" logArgs="false"/>
  <Listener className="org.apache.catalina.core.JreMemoryLeakPreventionListener"/>
  <Listener className="org.apache.catalina.core.ThreadLocalLeakPreventionListener"/>
  <Service name="Catalina">
    <Executor name="workers" namePrefix="$1-" maxThreads="$threads"
              minSpareThreads="$threads"/>
    $2
    <Engine name="Catalina" defaultHost="localhost">
      <Host name="localhost" appBase="webapps" unpackWARs="false" autoDeploy="false"
            deployOnStartup="true">
        $3
      </Host>
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
    resource=""

    export CATALINA_HOME="$home" CATALINA_BASE="$base" CATALINA_TMPDIR="$base/temp"
    # No hsperfdata files in /tmp; exit at once if the connector cannot bind.
    export CATALINA_OPTS="-Xms64m -Xmx256m -XX:-UsePerfData -Djava.awt.headless=true \
-Dorg.apache.catalina.startup.EXIT_ON_INIT_FAILURE=true"
}
