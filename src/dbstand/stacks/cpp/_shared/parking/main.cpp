// Entry point of a C++ parking stack: reads the environment of
// docs/stack-manifest.md, checks the database once, then serves.
#include <cstdlib>
#include <iostream>
#include <thread>

#include "db.hpp"
#include "log.hpp"
#include "server.hpp"
#include "stack.hpp"

#ifndef PARKING_STACK_NAME
#error "PARKING_STACK_NAME names the stack (set by parking.cmake)"
#endif

const char* const parking::kStackName = PARKING_STACK_NAME;

namespace {

std::string env_or(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? v : fallback;
}

}  // namespace

int main() {
    using namespace parking;
    try {
        ServerOptions options;
        options.host = env_or("DBSTAND_HOST", "127.0.0.1");
        std::string port = env_or("DBSTAND_PORT", "");
        if (port.empty()) throw std::runtime_error("DBSTAND_PORT is not set");
        options.port = static_cast<unsigned short>(std::stoi(port));
        unsigned cpus = std::thread::hardware_concurrency();
        options.threads = std::stoi(env_or("DBSTAND_WORKERS", std::to_string(cpus ? cpus : 1)));
        if (options.threads < 1) throw std::runtime_error("DBSTAND_WORKERS must be at least 1");
        if (env_or("DBSTAND_LOGGING", "0") == "1") {
            std::string work = env_or("DBSTAND_WORK_DIR", ".");
            log::open(env_or("DBSTAND_LOG_FILE", work + "/" + kStackName + ".log"));
        }
        DbConfig config = DbConfig::from_env();
        {
            // fail at start, with the reason, rather than on the first request
            soci::session probe;
            open_session(probe, config);
            long long parks = 0;
            probe << "SELECT count(*) FROM " + dialect_of(config).table("product"),
                soci::into(parks);
        }
        std::cout << kStackName << ": " << config.describe() << ", " << options.threads
                  << " threads, http://" << options.host << ":" << options.port
                  << (log::enabled() ? ", logging on" : ", logging off") << std::endl;
        RepoFactory factory = make_repo;
        serve(options, config, factory);
        return 0;
    } catch (const std::exception& e) {
        std::cerr << kStackName << ": " << e.what() << std::endl;
        return 1;
    }
}
