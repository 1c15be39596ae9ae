#include "pricing.hpp"

#include <chrono>
#include <stdexcept>

namespace parking::pricing {

namespace {
i128 floor_div(i128 num, i128 den) {
    i128 q = num / den;
    if ((num % den != 0) && ((num < 0) != (den < 0))) --q;
    return q;
}
i128 div_half_up(i128 num, i128 den) {
    bool neg = (num < 0) != (den < 0);
    i128 a = num < 0 ? -num : num, b = den < 0 ? -den : den;
    i128 q = a / b, r = a % b;
    if (r * 2 >= b) ++q;
    return neg ? -q : q;
}
i128 div_half_even(i128 num, i128 den) {
    bool neg = (num < 0) != (den < 0);
    i128 a = num < 0 ? -num : num, b = den < 0 ? -den : den;
    i128 q = a / b, r = a % b;
    if (r * 2 > b || (r * 2 == b && (q % 2) == 1)) ++q;
    return neg ? -q : q;
}
}  // namespace

std::int64_t rounded_minutes(std::int64_t minutes, bool first_hour) {
    if (minutes == 0 && first_hour) minutes = 1;
    return -static_cast<std::int64_t>(floor_div(-minutes, kQuarter)) * kQuarter;
}

std::int64_t overdue_minutes(std::time_t paid_until, std::time_t now) {
    std::int64_t seconds = static_cast<std::int64_t>(now) - paid_until;
    return seconds > 0 ? seconds / 60 : 0;
}

std::int64_t minutes_between(std::time_t start, std::time_t end) {
    return static_cast<std::int64_t>(floor_div(static_cast<i128>(end) - start, 60));
}

Money cost(std::int64_t minutes, Money per_hour) {
    // minutes * price / 60, to cents: micros * minutes / (60 * 10^4) cents
    i128 cents = div_half_up(static_cast<i128>(per_hour.micros) * minutes, 60 * 10000);
    return Money{static_cast<std::int64_t>(cents * 10000)};
}

Money hours_of(std::int64_t minutes) {
    return Money{static_cast<std::int64_t>(div_half_even(static_cast<i128>(minutes) * 1000000, 60))};
}

std::int64_t hours_seconds(Money hours) {
    return static_cast<std::int64_t>(div_half_even(static_cast<i128>(hours.micros) * 3600, 1000000));
}

Money refund(Money paid, std::time_t start, std::time_t paid_until, std::time_t now) {
    std::int64_t seconds_left = static_cast<std::int64_t>(paid_until) - now;
    std::int64_t minutes_left =
        static_cast<std::int64_t>(floor_div(seconds_left - 1, 900)) * kQuarter;
    std::int64_t paid_minutes = minutes_between(start, paid_until);
    if (paid_minutes == 0) throw std::runtime_error("refund of an order without paid minutes");
    // paid / paid_minutes * minutes_left, to cents
    i128 cents = div_half_up(static_cast<i128>(paid.micros) * minutes_left,
                             static_cast<i128>(paid_minutes) * 10000);
    return Money{static_cast<std::int64_t>(cents * 10000)};
}

}  // namespace parking::pricing

namespace parking::clock {

std::time_t now() {
    return std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
}

std::tm to_tm(std::time_t t) {
    std::tm tm{};
    localtime_r(&t, &tm);
    return tm;
}

std::time_t from_tm(const std::tm& tm) {
    std::tm copy = tm;
    copy.tm_isdst = -1;
    return mktime(&copy);
}

}  // namespace parking::clock
