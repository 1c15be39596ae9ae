#include "server.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cctype>
#include <chrono>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "log.hpp"

namespace parking {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

thread_local Worker* t_worker = nullptr;
constexpr auto kIdle = std::chrono::seconds(300);
const char* const kServerName = "dbstand-cpp-parking (Boost.Beast)";

// The Date header, formatted once a second per thread.
const std::string& http_date() {
    thread_local std::time_t last = 0;
    thread_local std::string text;
    std::time_t now = std::time(nullptr);
    if (now != last) {
        std::tm tm{};
        gmtime_r(&now, &tm);
        char buf[64];
        std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
        text = buf;
        last = now;
    }
    return text;
}

std::string decode_path(const std::string& raw) {
    std::string out;
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '%' && i + 2 < raw.size() && std::isxdigit(static_cast<unsigned char>(raw[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(raw[i + 2]))) {
            out += static_cast<char>(std::stoi(raw.substr(i + 1, 2), nullptr, 16));
            i += 2;
        } else {
            out += raw[i];
        }
    }
    return out;
}

class Connection : public std::enable_shared_from_this<Connection> {
public:
    explicit Connection(tcp::socket&& socket) : stream_(std::move(socket)) {}

    void start() {
        net::dispatch(stream_.get_executor(),
                      beast::bind_front_handler(&Connection::read, shared_from_this()));
    }

private:
    void read() {
        parser_.emplace();
        parser_->body_limit(1 << 20);
        stream_.expires_after(kIdle);
        http::async_read(stream_, buffer_, *parser_,
                         beast::bind_front_handler(&Connection::on_read, shared_from_this()));
    }

    void on_read(beast::error_code ec, std::size_t) {
        if (ec) return close();  // end of stream, timeout, garbage: drop the connection
        http::request<http::string_body> req = parser_->release();
        std::string method(req.method_string());
        std::string target(req.target());
        std::size_t mark = target.find('?');
        std::string path = decode_path(target.substr(0, mark));
        std::string query = mark == std::string::npos ? "" : target.substr(mark + 1);
        if (log::enabled()) log::info("dbstand.workloads.parking.http",
                                      "request " + method + " " + path + "?" + query);
        Params params;
        parse_query(query, params);
        if (req.method() == http::verb::post) parse_query(req.body(), params);
        HttpAnswer answer = handle(method, path, params, *t_worker);
        if (log::enabled()) log::info("dbstand.workloads.parking.http",
                                      "answer " + std::to_string(answer.status) + " " + answer.body);
        res_ = {};
        res_.result(static_cast<http::status>(answer.status));
        res_.version(req.version());
        res_.set(http::field::server, kServerName);
        res_.set(http::field::date, http_date());
        res_.set(http::field::content_type, "application/json");
        res_.keep_alive(req.keep_alive());
        res_.body() = std::move(answer.body);
        res_.prepare_payload();
        http::async_write(stream_, res_,
                          beast::bind_front_handler(&Connection::on_write, shared_from_this(),
                                                    res_.need_eof()));
    }

    void on_write(bool last, beast::error_code ec, std::size_t) {
        if (ec) return close();
        if (last) return close();
        read();
    }

    void close() {
        beast::error_code ignored;
        stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }

    beast::tcp_stream stream_;
    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::string_body>> parser_;
    http::response<http::string_body> res_;
};

class Listener : public std::enable_shared_from_this<Listener> {
public:
    Listener(net::io_context& ioc, const tcp::endpoint& at) : ioc_(ioc), acceptor_(ioc) {
        acceptor_.open(at.protocol());
        acceptor_.set_option(net::socket_base::reuse_address(true));
        acceptor_.bind(at);
        acceptor_.listen(net::socket_base::max_listen_connections);
    }

    void accept() {
        acceptor_.async_accept(net::make_strand(ioc_),
                               beast::bind_front_handler(&Listener::on_accept, shared_from_this()));
    }

private:
    void on_accept(beast::error_code ec, tcp::socket socket) {
        if (!ec) {
            socket.set_option(tcp::no_delay(true), ec);
            std::make_shared<Connection>(std::move(socket))->start();
        }
        accept();
    }

    net::io_context& ioc_;
    tcp::acceptor acceptor_;
};

}  // namespace

void serve(const ServerOptions& options, const DbConfig& config, const RepoFactory& factory) {
    net::io_context ioc{options.threads};
    auto address = net::ip::make_address(options.host);
    std::make_shared<Listener>(ioc, tcp::endpoint{address, options.port})->accept();
    net::signal_set signals(ioc, SIGINT, SIGTERM);
    signals.async_wait([&ioc](beast::error_code, int) { ioc.stop(); });
    std::vector<std::thread> pool;
    for (int i = 0; i < options.threads; ++i) {
        pool.emplace_back([&, i] {
            log::set_thread_name("worker-" + std::to_string(i + 1));
            Worker worker(config, factory);
            t_worker = &worker;
            ioc.run();
            t_worker = nullptr;
        });
    }
    for (auto& t : pool) t.join();
}

}  // namespace parking
