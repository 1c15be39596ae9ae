#include "db.hpp"

#include <glob.h>
#include <soci/mysql/soci-mysql.h>
#include <soci/odbc/soci-odbc.h>
#include <soci/postgresql/soci-postgresql.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "log.hpp"

namespace parking {

namespace {

std::string env(const char* name, const char* fallback = nullptr) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return v;
    if (fallback != nullptr) return fallback;
    throw std::runtime_error(std::string(name) + " is not set");
}

std::string read_password(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read DBSTAND_DB_PASSWORD_FILE " + path);
    std::ostringstream text;
    text << in.rdbuf();
    std::string pw = text.str();
    while (!pw.empty() && (pw.back() == '\n' || pw.back() == '\r')) pw.pop_back();
    return pw;
}

std::string find_odbc_driver() {
    if (const char* v = std::getenv("DBSTAND_ODBC_DRIVER"); v != nullptr && *v != '\0') return v;
    glob_t found{};
    std::string path;
    if (::glob("/usr/lib/*/odbc/libmaodbc.so", 0, nullptr, &found) == 0 && found.gl_pathc > 0)
        path = found.gl_pathv[0];
    ::globfree(&found);
    if (path.empty())
        throw std::runtime_error("MariaDB's ODBC driver (libmaodbc.so, Debian package "
                                 "odbc-mariadb) is not installed");
    return path;
}

bool valid_prefix(const std::string& prefix) {
    if (prefix.empty()) return false;
    for (char c : prefix)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
    return true;
}

// SOCI's logger hook: every statement text goes to the request log.
class SqlLog : public soci::logger_impl {
public:
    void start_query(std::string const& query) override { log::info("soci", query); }

private:
    soci::logger_impl* do_clone() const override { return new SqlLog; }
};

// A connection-string value for SOCI's MySQL/PostgreSQL parsers (single-quoted).
std::string quoted(const std::string& value, const char* what) {
    if (value.find('\'') != std::string::npos || value.find('\\') != std::string::npos)
        throw std::runtime_error(std::string("the database ") + what +
                                 " contains a quote or backslash, which SOCI's connection "
                                 "string cannot carry");
    return "'" + value + "'";
}

// An ODBC attribute value: braced, with '}' doubled.
std::string braced(const std::string& value) {
    std::string out = "{";
    for (char c : value) {
        out += c;
        if (c == '}') out += '}';
    }
    return out + "}";
}

}  // namespace

DbConfig DbConfig::from_env() {
    DbConfig c;
    c.kind = env("DBSTAND_DB_KIND");
    if (c.kind != "mysql" && c.kind != "postgresql")
        throw std::runtime_error("DBSTAND_DB_KIND must be mysql or postgresql, not " + c.kind);
    std::string backend = env("DBSTAND_SOCI_BACKEND", "native");
    if (backend == "odbc") {
        if (c.kind != "mysql")
            throw std::runtime_error("the ODBC backend is set up for MariaDB/MySQL only");
        c.backend = "odbc";
        c.odbc_driver = find_odbc_driver();
    } else if (backend == "native") {
        c.backend = c.kind;
    } else {
        throw std::runtime_error("DBSTAND_SOCI_BACKEND must be native or odbc, not " + backend);
    }
    c.host = env("DBSTAND_DB_HOST", "127.0.0.1");
    c.port = env("DBSTAND_DB_PORT", c.kind == "mysql" ? "3306" : "5432");
    c.name = env("DBSTAND_DB_NAME");
    c.user = env("DBSTAND_DB_USER");
    const char* pwfile = std::getenv("DBSTAND_DB_PASSWORD_FILE");
    if (pwfile != nullptr && *pwfile != '\0') c.password = read_password(pwfile);
    c.prefix = env("DBSTAND_PREFIX", "dbstand_");
    if (!valid_prefix(c.prefix))
        throw std::runtime_error("DBSTAND_PREFIX may hold only a-z, 0-9 and _: " + c.prefix);
    return c;
}

std::string DbConfig::describe() const {
    return kind + "://" + user + "@" + host + ":" + port + "/" + name + " through SOCI's " +
           backend + " backend" + (backend == "odbc" ? " (" + odbc_driver + ")" : "");
}

Dialect dialect_of(const DbConfig& config) {
    Dialect d;
    d.postgresql = config.kind == "postgresql";
    d.odbc = config.backend == "odbc";
    d.prefix = config.prefix;
    return d;
}

std::string Dialect::money_text(const std::string& column) const {
    return "CAST(" + column + (postgresql ? " AS TEXT) AS " : " AS CHAR) AS ") + column;
}

long long Dialect::last_insert_id(soci::session& s, const std::string& table) const {
    long long id = 0;
    if (!odbc && s.get_last_insert_id(table, id)) return id;  // mysql_insert_id(), no query
    s << "SELECT LAST_INSERT_ID()", soci::into(id);
    return id;
}

void open_session(soci::session& s, const DbConfig& c) {
    if (c.backend == "mysql") {
        s.open(soci::mysql, "host=" + quoted(c.host, "host") + " port=" + c.port +
                                " db=" + quoted(c.name, "name") + " user=" +
                                quoted(c.user, "user") + " password=" +
                                quoted(c.password, "password") + " charset=utf8mb4");
    } else if (c.backend == "odbc") {
        s.open(soci::odbc, "DRIVER=" + braced(c.odbc_driver) + ";SERVER=" + braced(c.host) +
                               ";PORT=" + c.port + ";DATABASE=" + braced(c.name) +
                               ";UID=" + braced(c.user) + ";PWD=" + braced(c.password) +
                               ";CHARSET=utf8mb4");
    } else {
        s.open(soci::postgresql, "host=" + quoted(c.host, "host") + " port=" + c.port +
                                     " dbname=" + quoted(c.name, "name") + " user=" +
                                     quoted(c.user, "user") + " password=" +
                                     quoted(c.password, "password") + " connect_timeout=10");
    }
    if (log::enabled()) s.set_logger(new SqlLog);
}

bool is_conflict(const std::exception& e) {
    if (auto* m = dynamic_cast<const soci::mysql_soci_error*>(&e))
        return m->err_num_ == 1213 || m->err_num_ == 1205;
    if (auto* o = dynamic_cast<const soci::odbc_soci_error*>(&e)) {
        auto code = o->native_error_code();
        const char* state = reinterpret_cast<const char*>(o->odbc_error_code());
        return code == 1213 || code == 1205 || std::strncmp(state, "40001", 5) == 0;
    }
    if (auto* p = dynamic_cast<const soci::postgresql_soci_error*>(&e)) {
        std::string state = p->sqlstate();
        return state == "40P01" || state == "40001";
    }
    return false;
}

bool is_connection_error(const std::exception& e) {
    if (auto* s = dynamic_cast<const soci::soci_error*>(&e))
        return s->get_error_category() == soci::soci_error::connection_error;
    return false;
}

}  // namespace parking
