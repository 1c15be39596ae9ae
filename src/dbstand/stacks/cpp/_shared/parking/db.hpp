// Where the database is and how to reach it through SOCI: the native MySQL backend
// (over libmariadb), the ODBC backend (unixODBC + MariaDB Connector/ODBC) or the
// PostgreSQL backend, chosen from the start environment.
#pragma once

#include <soci/soci.h>

#include <exception>
#include <string>

namespace parking {

struct DbConfig {
    std::string kind;     // DBSTAND_DB_KIND: mysql | postgresql
    std::string backend;  // the SOCI backend: mysql | odbc | postgresql
    std::string host, port, name, user, password;
    std::string prefix;   // DBSTAND_PREFIX
    std::string odbc_driver;

    // Reads DBSTAND_DB_* (the password from DBSTAND_DB_PASSWORD_FILE only),
    // DBSTAND_PREFIX and DBSTAND_SOCI_BACKEND; throws one clear runtime_error.
    static DbConfig from_env();
    std::string describe() const;  // for the start-up line, without the password
};

// What differs between the databases in the SQL the repositories write.
struct Dialect {
    bool postgresql = false;
    bool odbc = false;
    std::string prefix;

    std::string table(const char* key) const { return prefix + "t_" + key; }
    // A decimal column selected as exact text (the backends describe DECIMAL as double).
    std::string money_text(const std::string& column) const;
    // " FOR UPDATE" when `lock`.
    const char* lock(bool lock) const { return lock ? " FOR UPDATE" : ""; }
    // The id of the row the last INSERT on `s` created (MySQL-family databases).
    long long last_insert_id(soci::session& s, const std::string& table) const;
};

Dialect dialect_of(const DbConfig& config);

// Opens `s` on the configured backend; turns on SQL logging when the log is on.
void open_session(soci::session& s, const DbConfig& config);

// A deadlock or lock-wait timeout: the request is run again from the start.
bool is_conflict(const std::exception& e);
// The connection is gone: the thread opens a new one for its next request.
bool is_connection_error(const std::exception& e);

}  // namespace parking
