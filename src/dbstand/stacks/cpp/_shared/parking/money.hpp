// Exact money and decimal numbers for the parking service.
//
// Money columns are decimal(16,6): a Money holds integer micro-units, so sums,
// differences and comparisons are exact. Request parameters (price, hours,
// pay_from_balance) are parsed as Decimal, a fixed-point number with 18 fractional
// digits, wide enough that no realistic input loses anything before it is compared
// with a computed cost.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace parking {

using i128 = __int128;

struct Money {
    std::int64_t micros = 0;

    static Money of_units(std::int64_t units) { return Money{units * 1000000}; }
    // Text as a database returns it ("51.000000", "-3.5", "0"); throws on garbage.
    static Money parse_db(const std::string& text);

    std::string db_text() const;     // "%.6f": what is written to a decimal(16,6)
    std::string answer_text() const; // rounded half up to cents, "%.2f", never "-0.00"

    Money operator+(Money o) const { return Money{micros + o.micros}; }
    Money operator-(Money o) const { return Money{micros - o.micros}; }
    Money& operator+=(Money o) { micros += o.micros; return *this; }
    Money& operator-=(Money o) { micros -= o.micros; return *this; }
    bool operator==(Money o) const { return micros == o.micros; }
    bool operator!=(Money o) const { return micros != o.micros; }
    bool operator<(Money o) const { return micros < o.micros; }
    bool operator<=(Money o) const { return micros <= o.micros; }
    bool operator>(Money o) const { return micros > o.micros; }
};

// A finite decimal from a request, value = scaled / 10^18.
struct Decimal {
    static constexpr int kScale = 18;
    i128 scaled = 0;

    // Python Decimal-like syntax: optional blanks, sign, digits, point, exponent.
    // nullopt for anything else (also NaN, Infinity and out-of-range values).
    static std::optional<Decimal> parse(const std::string& text);

    bool is_negative() const { return scaled < 0; }
    bool is_positive() const { return scaled > 0; }
    // The value as money, rounded half up to micro-units (a decimal(16,6) store).
    Money to_money() const;
    // True when the value is exactly `m`.
    bool equals(Money m) const;
    // floor(value * 60): the whole minutes of `hours`.
    std::int64_t floor_times_60() const;
};

i128 pow10_128(int n);

}  // namespace parking
