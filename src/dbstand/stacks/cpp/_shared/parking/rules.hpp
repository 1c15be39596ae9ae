// The parking functions (spec "Functions"), checks in the spec's order, written once
// against Repo. An early answer is thrown as Reply (rolled back); a returned answer
// commits.
#pragma once

#include "entities.hpp"
#include "json.hpp"
#include "service.hpp"

namespace parking::rules {

json::Object get_service_info(const Call& call, Repo& repo);
json::Object create_reservation(const Call& call, Repo& repo);
json::Object pay_reservation(const Call& call, Repo& repo);
json::Object cancel_reservation(const Call& call, Repo& repo);
json::Object stop_service(const Call& call, Repo& repo);
json::Object get_user_account(const Call& call, Repo& repo);
json::Object account_transfer(const Call& call, Repo& repo);
json::Object issue_ticket(const Call& call, Repo& repo);
json::Object leave_parking(const Call& call, Repo& repo);
json::Object check_plate_number(const Call& call, Repo& repo);

}  // namespace parking::rules
