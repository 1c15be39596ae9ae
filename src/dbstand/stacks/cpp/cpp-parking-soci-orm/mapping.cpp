#include "mapping.hpp"

#include <cmath>
#include <stdexcept>

#include "pricing.hpp"

namespace parking::orm {

long long get_id(const soci::values& v, const char* name) {
    switch (v.get_properties(name).get_data_type()) {
        case soci::dt_integer: return v.get<int>(name);
        case soci::dt_long_long: return v.get<long long>(name);
        case soci::dt_unsigned_long_long:
            return static_cast<long long>(v.get<unsigned long long>(name));
        case soci::dt_double: return std::llround(v.get<double>(name));
        case soci::dt_string: return std::stoll(v.get<std::string>(name));
        default: throw std::runtime_error(std::string("column ") + name + " is not a number");
    }
}

int get_int(const soci::values& v, const char* name) {
    return static_cast<int>(get_id(v, name));
}

std::string get_text(const soci::values& v, const char* name) {
    return v.get<std::string>(name);
}

std::optional<std::string> get_text_or_null(const soci::values& v, const char* name) {
    if (v.get_indicator(name) == soci::i_null) return std::nullopt;
    return v.get<std::string>(name);
}

Money get_money(const soci::values& v, const char* name) {
    // selected as text (Dialect::money_text): the backends describe DECIMAL as double
    return Money::parse_db(v.get<std::string>(name));
}

std::optional<Money> get_money_or_null(const soci::values& v, const char* name) {
    if (v.get_indicator(name) == soci::i_null) return std::nullopt;
    return get_money(v, name);
}

std::time_t get_time(const soci::values& v, const char* name) {
    return clock::from_tm(v.get<std::tm>(name));
}

std::optional<std::time_t> get_time_or_null(const soci::values& v, const char* name) {
    if (v.get_indicator(name) == soci::i_null) return std::nullopt;
    return get_time(v, name);
}

void set_id(soci::values& v, const char* name, long long value) { v.set(name, value); }

void set_text(soci::values& v, const char* name, const std::optional<std::string>& value) {
    v.set(name, value.value_or(std::string()), value ? soci::i_ok : soci::i_null);
}

void set_money(soci::values& v, const char* name, const std::optional<Money>& value) {
    v.set(name, value ? value->db_text() : std::string(), value ? soci::i_ok : soci::i_null);
}

void set_time(soci::values& v, const char* name, const std::optional<std::time_t>& value) {
    v.set(name, value ? clock::to_tm(*value) : std::tm{}, value ? soci::i_ok : soci::i_null);
}

}  // namespace parking::orm

namespace soci {

using namespace parking::orm;

void type_conversion<parking::Product>::from_base(const values& v, indicator,
                                                  parking::Product& p) {
    p.id = get_id(v, "id");
    p.name = get_text(v, "name");
    p.display_name = get_text_or_null(v, "display_name");
    p.places_avail = get_int(v, "places_avail");
    p.price = get_money(v, "price");
}

void type_conversion<parking::Product>::to_base(const parking::Product& p, values& v,
                                                indicator& ind) {
    set_id(v, "id", p.id);
    set_text(v, "name", p.name);
    set_text(v, "display_name", p.display_name);
    v.set("places_avail", p.places_avail);
    set_money(v, "price", p.price);
    ind = i_ok;
}

void type_conversion<parking::Order>::from_base(const values& v, indicator, parking::Order& o) {
    o.id = get_id(v, "id");
    o.product_id = get_id(v, "product_id");
    o.user_eid = get_text_or_null(v, "user_eid");
    o.ticket_number = get_text_or_null(v, "ticket_number");
    o.plate_number = get_text_or_null(v, "plate_number");
    o.start_ts = get_time(v, "start_ts");
    o.paid_until_ts = get_time(v, "paid_until_ts");
    o.finish_ts = get_time_or_null(v, "finish_ts");
    o.paid_amount = get_money(v, "paid_amount");
    o.price = get_money_or_null(v, "price");
}

void type_conversion<parking::Order>::to_base(const parking::Order& o, values& v,
                                              indicator& ind) {
    set_id(v, "id", o.id);
    set_id(v, "product_id", o.product_id);
    set_text(v, "user_eid", o.user_eid);
    set_text(v, "ticket_number", o.ticket_number);
    set_text(v, "plate_number", o.plate_number);
    set_time(v, "start_ts", o.start_ts);
    set_time(v, "paid_until_ts", o.paid_until_ts);
    set_time(v, "finish_ts", o.finish_ts);
    set_money(v, "paid_amount", o.paid_amount);
    set_money(v, "price", o.price);
    ind = i_ok;
}

void type_conversion<parking::Payment>::from_base(const values& v, indicator,
                                                  parking::Payment& p) {
    p.id = get_id(v, "id");
    p.trans_number = get_text(v, "trans_number");
    p.order_id = get_id(v, "order_id");
    p.ts = get_time(v, "ts");
    p.hours = get_money(v, "hours");
    p.amount = get_money(v, "amount");
    p.payment_ts = get_time_or_null(v, "payment_ts");
    p.cancel_ts = get_time_or_null(v, "cancel_ts");
}

void type_conversion<parking::Payment>::to_base(const parking::Payment& p, values& v,
                                                indicator& ind) {
    set_id(v, "id", p.id);
    set_text(v, "trans_number", p.trans_number);
    set_id(v, "order_id", p.order_id);
    set_time(v, "ts", p.ts);
    set_money(v, "hours", p.hours);
    set_money(v, "amount", p.amount);
    set_time(v, "payment_ts", p.payment_ts);
    set_time(v, "cancel_ts", p.cancel_ts);
    ind = i_ok;
}

void type_conversion<parking::Account>::from_base(const values& v, indicator,
                                                  parking::Account& a) {
    a.id = get_id(v, "id");
    a.user_eid = get_text(v, "user_eid");
    a.balance = get_money(v, "balance");
    a.reserved = get_money(v, "reserved");
}

void type_conversion<parking::Account>::to_base(const parking::Account& a, values& v,
                                                indicator& ind) {
    set_id(v, "id", a.id);
    set_text(v, "user_eid", a.user_eid);
    set_money(v, "balance", a.balance);
    set_money(v, "reserved", a.reserved);
    ind = i_ok;
}

void type_conversion<parking::AccountReceipt>::from_base(const values& v, indicator,
                                                         parking::AccountReceipt& r) {
    r.id = get_id(v, "id");
    r.ts = get_time(v, "ts");
    r.account_id = get_id(v, "account_id");
    r.src_order_id = get_id(v, "src_order_id");
    r.amount = get_money(v, "amount");
}

void type_conversion<parking::AccountReceipt>::to_base(const parking::AccountReceipt& r,
                                                       values& v, indicator& ind) {
    set_id(v, "id", r.id);
    set_time(v, "ts", r.ts);
    set_id(v, "account_id", r.account_id);
    set_id(v, "src_order_id", r.src_order_id);
    set_money(v, "amount", r.amount);
    ind = i_ok;
}

void type_conversion<parking::AccountConsume>::from_base(const values& v, indicator,
                                                         parking::AccountConsume& c) {
    c.id = get_id(v, "id");
    c.ts = get_time(v, "ts");
    c.account_id = get_id(v, "account_id");
    c.dst_payment_id = get_id(v, "dst_payment_id");
    c.amount = get_money(v, "amount");
    c.is_reserved = get_int(v, "is_reserved");
}

void type_conversion<parking::AccountConsume>::to_base(const parking::AccountConsume& c,
                                                       values& v, indicator& ind) {
    set_id(v, "id", c.id);
    set_time(v, "ts", c.ts);
    set_id(v, "account_id", c.account_id);
    set_id(v, "dst_payment_id", c.dst_payment_id);
    set_money(v, "amount", c.amount);
    v.set("is_reserved", c.is_reserved);
    ind = i_ok;
}

void type_conversion<parking::AccountTransfer>::from_base(const values& v, indicator,
                                                          parking::AccountTransfer& t) {
    t.id = get_id(v, "id");
    t.ts = get_time(v, "ts");
    t.trans_number = get_text(v, "trans_number");
    t.src_account_id = get_id(v, "src_account_id");
    t.dst_account_id = get_id(v, "dst_account_id");
    t.amount = get_money(v, "amount");
}

void type_conversion<parking::AccountTransfer>::to_base(const parking::AccountTransfer& t,
                                                        values& v, indicator& ind) {
    set_id(v, "id", t.id);
    set_time(v, "ts", t.ts);
    set_text(v, "trans_number", t.trans_number);
    set_id(v, "src_account_id", t.src_account_id);
    set_id(v, "dst_account_id", t.dst_account_id);
    set_money(v, "amount", t.amount);
    ind = i_ok;
}

}  // namespace soci
