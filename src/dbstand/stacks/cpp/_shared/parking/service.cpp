#include "service.hpp"

#include <chrono>
#include <cstdio>
#include <set>
#include <vector>

#include "log.hpp"
#include "pricing.hpp"
#include "rules.hpp"

namespace parking {

namespace {

using Rules = json::Object (*)(const Call&, Repo&);

struct Function {
    std::set<std::string> params;  // accepted besides `version`
    const char* default_error;     // unexpected parameter or failure
    Rules rules;
};

const std::map<std::string, Function>& functions() {
    static const std::map<std::string, Function> table = {
        {"get_service_info", {{"service_descr", "user_id"}, "not_available",
                              rules::get_service_info}},
        {"create_reservation",
         {{"service_descr", "price", "transaction_id", "user_id", "pay_from_balance"},
          "not_available", rules::create_reservation}},
        {"pay_reservation", {{"transaction_id"}, "bad_transaction", rules::pay_reservation}},
        {"cancel_reservation", {{"transaction_id"}, "bad_transaction", rules::cancel_reservation}},
        {"stop_service", {{"transaction_id"}, "bad_transaction", rules::stop_service}},
        {"get_user_account", {{"user_id"}, "bad_transaction", rules::get_user_account}},
        {"account_transfer", {{"transaction_id", "src_user_id", "dst_user_id"},
                              "bad_transaction", rules::account_transfer}},
        {"issue_ticket", {{"parking_id"}, "not_available", rules::issue_ticket}},
        {"leave_parking", {{"parking_id", "user_ticket"}, "not_available", rules::leave_parking}},
        {"check_plate_number", {{"registration_plate"}, "not_available",
                                rules::check_plate_number}},
    };
    return table;
}

// descriptor keys: logical field -> key, version 0 and versions 1-2
const std::map<std::string, std::string> kKeysV0 = {
    {"parking", "parking_object_id"}, {"plate", "plate_number"}, {"duration", "hours"},
    {"ticket", "user_ticket"}};
const std::map<std::string, std::string> kKeysV1 = {
    {"parking", "parking_id"}, {"plate", "registration_plate"}, {"duration", "duration"},
    {"ticket", "user_ticket"}};
const std::string kEmpty;

constexpr int kRetries = 5;

// "" or absent: 0; digits only and 0, 1 or 2: that; otherwise none.
std::optional<int> parse_version(const Params& params) {
    auto it = params.find("version");
    if (it == params.end() || it->second.empty()) return 0;
    const std::string& text = it->second;
    if (text.size() > 6) return std::nullopt;
    int v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + (c - '0');
    }
    if (v > 2) return std::nullopt;
    return v;
}

std::string server_ts() {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
    char buf[32];
    std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ms / 1000),
                  static_cast<long long>(ms % 1000));
    return buf;
}

json::Object status_only(const char* status) {
    json::Object o;
    o.str("status", status);
    return o;
}

int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::string unquote(const std::string& s, std::size_t from, std::size_t to) {
    std::string out;
    out.reserve(to - from);
    for (std::size_t i = from; i < to; ++i) {
        char c = s[i];
        if (c == '+') {
            out += ' ';
        } else if (c == '%' && i + 2 < to && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
            out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
            i += 2;
        } else {
            out += c;
        }
    }
    return out;
}

json::Object run_rules(const Function& function, const Call& call, Worker& worker,
                       const std::string& name) {
    for (int attempt = 1; attempt <= kRetries; ++attempt) {
        try {
            soci::session& s = worker.session();
            Repo& repo = worker.repo();
            std::optional<soci::transaction> begun;
            try {
                begun.emplace(s);
            } catch (const std::exception& e) {
                // a connection that died while idle (server restart, wait_timeout) fails
                // here, before the request did anything: run it on a new one
                if (attempt < kRetries && worker.after_failure(e)) continue;
                throw;
            }
            soci::transaction& tr = *begun;
            try {
                json::Object answer = function.rules(call, repo);
                tr.commit();
                return answer;
            } catch (Reply& reply) {
                tr.rollback();
                return reply.body;
            }
        } catch (const std::exception& e) {
            if (attempt < kRetries && is_conflict(e)) {
                log::info("dbstand.workloads.parking",
                          name + ": lock conflict, running it again (" + e.what() + ")");
                continue;
            }
            log::error("dbstand.workloads.parking", name + " failed: " + e.what());
            worker.after_failure(e);
            break;
        }
    }
    return status_only(function.default_error);
}

}  // namespace

const std::string& Call::param(const std::string& name) const {
    auto it = params.find(name);
    return it == params.end() ? kEmpty : it->second;
}

const std::string& Call::field(const std::string& logical) const {
    const auto& keys = version == 0 ? kKeysV0 : kKeysV1;
    auto it = descr.find(keys.at(logical));
    return it == descr.end() ? kEmpty : it->second;
}

json::Object success() { return status_only("success"); }

Worker::Worker(const DbConfig& config, const RepoFactory& factory)
    : config_(config), factory_(factory), dialect_(dialect_of(config)) {}

soci::session& Worker::session() {
    if (!session_) {
        auto fresh = std::make_unique<soci::session>();
        open_session(*fresh, config_);
        repo_ = factory_(*fresh, dialect_);
        session_ = std::move(fresh);
    }
    return *session_;
}

Repo& Worker::repo() {
    session();
    return *repo_;
}

bool Worker::after_failure(const std::exception& e) {
    if (!session_ || (!is_connection_error(e) && session_->is_connected())) return false;
    forget();
    return true;
}

void Worker::forget() {
    repo_.reset();
    try {
        session_.reset();
    } catch (...) {
    }
}

void parse_query(const std::string& text, Params& out) {
    std::size_t i = 0;
    while (i <= text.size()) {
        std::size_t end = text.find('&', i);
        if (end == std::string::npos) end = text.size();
        if (end > i) {
            std::size_t eq = text.find('=', i);
            if (eq == std::string::npos || eq > end) {
                out[unquote(text, i, end)] = "";
            } else {
                out[unquote(text, i, eq)] = unquote(text, eq + 1, end);
            }
        }
        i = end + 1;
    }
}

HttpAnswer handle(const std::string& method, const std::string& path, const Params& params,
                  Worker& worker) {
    HttpAnswer out;
    json::Object answer;
    std::string name = path;
    while (!name.empty() && name.front() == '/') name.erase(name.begin());
    const auto& table = functions();
    auto fn = table.find(name);
    if (method != "GET" && method != "POST") {
        out.status = 405;
        answer.str("status", "error").str("error", "method " + method + " not allowed");
    } else if (fn == table.end()) {
        out.status = 500;
        answer.str("status", "error").str("error", "unknown function '" + name + "'");
    } else {
        const Function& function = fn->second;
        Call call;
        bool bad = false;
        auto descr = params.find("service_descr");
        if (descr != params.end() && function.params.count("service_descr")) {
            auto parsed = json::parse_string_object(descr->second);
            if (!parsed) {
                bad = true;
                out.status = 500;
                answer.str("status", "error")
                    .str("error", "malformed service_descr: expected a JSON object of strings");
            } else {
                call.descr = std::move(*parsed);
            }
        }
        if (!bad) {
            bool unexpected = false;
            for (const auto& kv : params)
                if (kv.first != "version" && !function.params.count(kv.first)) unexpected = true;
            auto version = parse_version(params);
            if (unexpected) {
                answer = status_only(function.default_error);
            } else if (!version) {
                answer = status_only("bad_protocol");
            } else {
                call.version = *version;
                call.params = params;
                call.now = clock::now();
                answer = run_rules(function, call, worker, name);
            }
        }
    }
    answer.str("ts", server_ts());
    out.body = answer.dump();
    return out;
}

}  // namespace parking
