// The spec's Pricing section and stop_service's refund, in exact integer arithmetic.
// Timestamps are local time in whole seconds, held as Unix seconds (time_t).
#pragma once

#include <cstdint>
#include <ctime>
#include <string>

#include "money.hpp"

namespace parking::pricing {

constexpr int kQuarter = 15;

// Whole minutes rounded up to a quarter hour; 0 counts as 1 minute in a first hour.
std::int64_t rounded_minutes(std::int64_t minutes, bool first_hour);
// Whole minutes past `paid_until` (0 if not passed).
std::int64_t overdue_minutes(std::time_t paid_until, std::time_t now);
// floor((end - start) / 60 s)
std::int64_t minutes_between(std::time_t start, std::time_t end);
// minutes x price per hour, rounded half up to cents.
Money cost(std::int64_t minutes, Money per_hour);
// The HOURS of a payment: minutes / 60 in micro-units (exact for quarter hours).
Money hours_of(std::int64_t minutes);
// A payment's HOURS as seconds (rounded half to even, as Python's Decimal does).
std::int64_t hours_seconds(Money hours);
// Unused whole quarter hours at the paid price per minute, rounded to cents.
Money refund(Money paid, std::time_t start, std::time_t paid_until, std::time_t now);

}  // namespace parking::pricing

namespace parking::clock {

// Local time now, whole seconds.
std::time_t now();
std::tm to_tm(std::time_t t);        // local broken-down time
std::time_t from_tm(const std::tm& tm);  // local broken-down time -> Unix seconds

}  // namespace parking::clock
