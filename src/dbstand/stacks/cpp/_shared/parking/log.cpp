#include "log.hpp"

#include <fcntl.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <stdexcept>

namespace parking::log {

namespace {
int g_fd = -1;
thread_local std::string t_thread = "MainThread";

std::string line(const char* logger, const char* level, const std::string& message) {
    timeval tv{};
    gettimeofday(&tv, nullptr);
    std::tm tm{};
    localtime_r(&tv.tv_sec, &tm);
    char stamp[64];
    std::size_t n = std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
    std::snprintf(stamp + n, sizeof stamp - n, ",%03ld", static_cast<long>(tv.tv_usec / 1000));
    std::string out;
    out.reserve(message.size() + 96);
    out += stamp;
    out += ' ';
    out += std::to_string(::getpid());
    out += ' ';
    out += t_thread;
    out += ' ';
    out += logger;
    out += ' ';
    out += level;
    out += ' ';
    out += message;
    out += '\n';
    return out;
}

void write_all(int fd, const std::string& text) {
    // one write per line on an O_APPEND descriptor: lines of threads never interleave
    const char* p = text.data();
    std::size_t left = text.size();
    while (left > 0) {
        ssize_t w = ::write(fd, p, left);
        if (w <= 0) return;
        p += w;
        left -= static_cast<std::size_t>(w);
    }
}
}  // namespace

void open(const std::string& path) {
    if (path.empty()) return;
    g_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (g_fd < 0) throw std::runtime_error("cannot open the log file " + path);
}

bool enabled() { return g_fd >= 0; }

void set_thread_name(const std::string& name) { t_thread = name; }

void info(const char* logger, const std::string& message) {
    if (g_fd >= 0) write_all(g_fd, line(logger, "INFO", message));
}

void error(const char* logger, const std::string& message) {
    std::string text = line(logger, "ERROR", message);
    write_all(2, text);
    if (g_fd >= 0) write_all(g_fd, text);
}

}  // namespace parking::log
