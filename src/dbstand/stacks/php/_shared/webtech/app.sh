# Sourced (bash) by both PHP stacks' start.sh, after _shared/web/server.sh.
# php_app: the application both serve, in $WORK/app (APP): a copy of app/ (the stack
# folder may not be readable by www-data), big.php (65,536 bytes made once here,
# compiled once into opcache's shared memory) and config.php (the database settings,
# password included: read from its file, never argv; readable by the worker user
# only).
php_app() {
    APP="$WORK/app"
    rm -rf "$APP"
    cp -R "$(dirname "${BASH_SOURCE[0]}")/app" "$APP"
    chmod -R a+rX "$APP"
    perl -e 'print "<?php\n// Written by start.sh: 0123456789abcdef x 4096 as one literal.\n",
                   "header(\x27Content-Type: text/plain\x27);\n",
                   "header(\x27Content-Length: 65536\x27);\n",
                   "echo \x27", "0123456789abcdef" x 4096, "\x27;\n"' > "$APP/big.php"
    umask 077
    perl -e '
        sub lit { my $v = shift; $v =~ s/([\\\x27])/\\$1/g; "\x27$v\x27" }
        my $pw = "";
        if (my $file = $ENV{DBSTAND_DB_PASSWORD_FILE}) {
            open my $fh, "<", $file or die "cannot read $file: $!\n";
            local $/; $pw = <$fh>; $pw = "" unless defined $pw;
        }
        my @kv = (host => $ENV{DBSTAND_DB_HOST} // "127.0.0.1", port => $ENV{DBSTAND_DB_PORT} // "3306",
                  name => $ENV{DBSTAND_DB_NAME} // "", user => $ENV{DBSTAND_DB_USER} // "",
                  password => $pw, table => ($ENV{DBSTAND_PREFIX} // "dbstand_") . "world");
        print "<?php\nreturn [\n";
        while (my ($k, $v) = splice @kv, 0, 2) { print "    ", lit($k), " => ", lit($v), ",\n" }
        print "];\n";' > "$APP/config.php"
    umask 022
    if [ "$(id -u)" = 0 ]; then
        chgrp "$RUN_USER" "$APP/config.php"
        chmod 0640 "$APP/config.php"
    fi
}
