# Sourced (bash) by the Perl stacks' start.sh.
# write_db_conf: $WORK/db.conf, key=value lines of the database settings (the
# password copied from its file, never argv; mode 0600), and $WORK/cache for the
# /cache page. With RUN_USER set and started as root (Apache's workers), the file is
# readable by that user's group and the cache folder is that user's.
write_db_conf() {
    mkdir -p "$WORK/cache"
    umask 077
    {
        printf 'host=%s\nport=%s\nname=%s\nuser=%s\ntable=%sworld\ncache_file=%s\npassword=' \
            "${DBSTAND_DB_HOST:-127.0.0.1}" "${DBSTAND_DB_PORT:-3306}" "${DBSTAND_DB_NAME:-}" \
            "${DBSTAND_DB_USER:-}" "$PREFIX" "$WORK/cache/page"
        [ -n "${DBSTAND_DB_PASSWORD_FILE:-}" ] && cat "$DBSTAND_DB_PASSWORD_FILE"
        printf '\n'
    } > "$WORK/db.conf"
    umask 022
    if [ -n "${RUN_USER:-}" ] && [ "$(id -u)" = 0 ]; then
        chgrp "$RUN_USER" "$WORK/db.conf"
        chmod 0640 "$WORK/db.conf"
        chown "$RUN_USER:$RUN_USER" "$WORK/cache"
    fi
}
