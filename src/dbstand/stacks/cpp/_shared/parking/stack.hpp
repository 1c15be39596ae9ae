// What each C++ parking stack defines: its name and its Repo over a SOCI session.
#pragma once

#include <memory>

#include <soci/soci.h>

#include "db.hpp"
#include "entities.hpp"

namespace parking {

extern const char* const kStackName;
std::unique_ptr<Repo> make_repo(soci::session& session, const Dialect& dialect);

}  // namespace parking
