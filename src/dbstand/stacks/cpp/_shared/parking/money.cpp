#include "money.hpp"

#include <cctype>
#include <stdexcept>

namespace parking {

i128 pow10_128(int n) {
    i128 v = 1;
    while (n-- > 0) v *= 10;
    return v;
}

namespace {

constexpr std::int64_t kMicro = 1000000;
const i128 kLimit = pow10_128(38) / 10;  // keeps every product below 2^127

// Integer division rounding half away from zero (Python's ROUND_HALF_UP).
i128 div_half_up(i128 num, i128 den) {
    bool neg = (num < 0) != (den < 0);
    i128 a = num < 0 ? -num : num;
    i128 b = den < 0 ? -den : den;
    i128 q = a / b, r = a % b;
    if (r * 2 >= b) ++q;
    return neg ? -q : q;
}

i128 floor_div(i128 num, i128 den) {
    i128 q = num / den;
    if ((num % den != 0) && ((num < 0) != (den < 0))) --q;
    return q;
}

// Parse [blanks][sign]digits[.digits][(e|E)[sign]digits][blanks] into value * 10^scale.
// Fractional digits beyond `scale` must be zero when `exact`, else they are cut off.
std::optional<i128> parse_scaled(const std::string& s, int scale, bool exact) {
    std::size_t i = 0, n = s.size();
    while (i < n && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    while (n > i && std::isspace(static_cast<unsigned char>(s[n - 1]))) --n;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    std::string digits;
    int frac = 0;
    bool point = false, any = false;
    for (; i < n; ++i) {
        char c = s[i];
        if (c >= '0' && c <= '9') {
            any = true;
            digits += c;
            if (point) ++frac;
        } else if (c == '.' && !point) {
            point = true;
        } else {
            break;
        }
    }
    if (!any) return std::nullopt;
    long exponent = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        bool eneg = false;
        if (i < n && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
        if (i >= n) return std::nullopt;
        for (; i < n; ++i) {
            if (s[i] < '0' || s[i] > '9') return std::nullopt;
            if (exponent < 100000) exponent = exponent * 10 + (s[i] - '0');
        }
        if (eneg) exponent = -exponent;
    }
    if (i != n) return std::nullopt;
    // value = digits * 10^(exponent - frac); we want digits * 10^(exponent - frac + scale)
    long shift = exponent - frac + scale;
    std::size_t first = digits.find_first_not_of('0');
    if (first == std::string::npos) return i128{0};
    digits = digits.substr(first);
    if (shift < 0) {
        std::size_t cut = static_cast<std::size_t>(-shift);
        if (cut >= digits.size()) {
            if (exact) return std::nullopt;
            return i128{0};
        }
        std::string dropped = digits.substr(digits.size() - cut);
        if (exact && dropped.find_first_not_of('0') != std::string::npos) return std::nullopt;
        digits.resize(digits.size() - cut);
        shift = 0;
    }
    if (static_cast<long>(digits.size()) + shift > 37) return std::nullopt;
    i128 v = 0;
    for (char c : digits) v = v * 10 + (c - '0');
    v *= pow10_128(static_cast<int>(shift));
    if (v >= kLimit) return std::nullopt;
    return neg ? -v : v;
}

std::string fixed(i128 scaled, int decimals) {
    bool neg = scaled < 0;
    i128 a = neg ? -scaled : scaled;
    i128 unit = pow10_128(decimals);
    i128 whole = a / unit, part = a % unit;
    std::string w;
    do {
        w.insert(w.begin(), static_cast<char>('0' + static_cast<int>(whole % 10)));
        whole /= 10;
    } while (whole > 0);
    std::string p;
    for (int k = 0; k < decimals; ++k) {
        p.insert(p.begin(), static_cast<char>('0' + static_cast<int>(part % 10)));
        part /= 10;
    }
    return (neg ? "-" : "") + w + (decimals ? "." + p : "");
}

}  // namespace

Money Money::parse_db(const std::string& text) {
    auto v = parse_scaled(text, 6, false);
    if (!v) throw std::runtime_error("not a decimal from the database: '" + text + "'");
    return Money{static_cast<std::int64_t>(*v)};
}

std::string Money::db_text() const { return fixed(micros, 6); }

std::string Money::answer_text() const {
    i128 cents = div_half_up(micros, kMicro / 100);
    if (cents == 0) return "0.00";
    return fixed(cents, 2);
}

std::optional<Decimal> Decimal::parse(const std::string& text) {
    auto v = parse_scaled(text, kScale, false);
    if (!v) return std::nullopt;
    return Decimal{*v};
}

Money Decimal::to_money() const {
    return Money{static_cast<std::int64_t>(div_half_up(scaled, pow10_128(kScale - 6)))};
}

bool Decimal::equals(Money m) const {
    return scaled == static_cast<i128>(m.micros) * pow10_128(kScale - 6);
}

std::int64_t Decimal::floor_times_60() const {
    return static_cast<std::int64_t>(floor_div(scaled * 60, pow10_128(kScale)));
}

}  // namespace parking
