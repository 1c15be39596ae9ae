// The request log (DBSTAND_LOGGING=1): one line per request, per answer and per SQL
// statement, in the layout of dbstand's Python services (logs.py):
// "<date> <time>,<ms> <pid> <thread> <logger> <LEVEL> <message>".
#pragma once

#include <string>

namespace parking::log {

// Opens `path` for appending; an empty path turns logging off.
void open(const std::string& path);
bool enabled();
void set_thread_name(const std::string& name);
void info(const char* logger, const std::string& message);
// Errors always go to stderr (the launcher's log), and to the log file when on.
void error(const char* logger, const std::string& message);

}  // namespace parking::log
