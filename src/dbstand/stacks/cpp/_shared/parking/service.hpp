// The request cycle every C++ parking stack shares (spec "Transport"): function
// lookup, service_descr, unexpected parameters, protocol version, one transaction
// per request with lock-conflict retries, default error statuses, the `ts` field.
#pragma once

#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <soci/soci.h>

#include "db.hpp"
#include "entities.hpp"
#include "json.hpp"

namespace parking {

using Params = std::map<std::string, std::string>;

// One request as the rules see it.
struct Call {
    int version = 0;
    Params params;
    std::map<std::string, std::string> descr;
    std::time_t now = 0;

    // A top-level parameter ("" when absent).
    const std::string& param(const std::string& name) const;
    // A service_descr field by logical name: parking, plate, duration, ticket.
    const std::string& field(const std::string& logical) const;
};

// An answer decided early: the transaction rolls back and this is the answer.
// Every refusal, and every success that writes nothing, leaves through here.
struct Reply {
    json::Object body;
    explicit Reply(const std::string& status) { body.str("status", status); }
    Reply(const std::string& status, const std::string& status_code) {
        body.str("status", status).str("status_code", status_code);
    }
};

json::Object success();

// What a stack provides: the Repo over a session (its way of mapping rows).
using RepoFactory = std::function<std::unique_ptr<Repo>(soci::session&, const Dialect&)>;

// One worker thread's database connection, opened on first use and reopened after
// the connection was lost.
class Worker {
public:
    Worker(const DbConfig& config, const RepoFactory& factory);
    soci::session& session();
    Repo& repo();
    // Drops the connection when `e` shows it is gone (checked with a ping); true then.
    bool after_failure(const std::exception& e);
    void forget();

private:
    const DbConfig& config_;
    const RepoFactory& factory_;
    Dialect dialect_;
    std::unique_ptr<soci::session> session_;
    std::unique_ptr<Repo> repo_;
};

struct HttpAnswer {
    int status = 200;
    std::string body;
};

// Answers GET/POST /<function>?<query> (params already decoded).
HttpAnswer handle(const std::string& method, const std::string& path, const Params& params,
                  Worker& worker);

// Decodes an application/x-www-form-urlencoded string into `out` (last value wins).
void parse_query(const std::string& text, Params& out);

}  // namespace parking
