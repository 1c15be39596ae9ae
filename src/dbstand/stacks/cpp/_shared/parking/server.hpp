// The HTTP server: Boost.Beast on Boost.Asio, one io_context run by DBSTAND_WORKERS
// threads. A handler runs on the thread that read the request and blocks it while the
// database works, so the pool is also the set of database connections (one per
// thread). Keep-alive is honoured; idle connections cost no thread.
#pragma once

#include <string>

#include "service.hpp"

namespace parking {

struct ServerOptions {
    std::string host = "127.0.0.1";
    unsigned short port = 0;
    int threads = 1;
};

// Serves until SIGTERM or SIGINT.
void serve(const ServerOptions& options, const DbConfig& config, const RepoFactory& factory);

}  // namespace parking
