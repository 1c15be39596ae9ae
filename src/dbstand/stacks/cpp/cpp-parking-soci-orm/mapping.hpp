// SOCI object mapping of the parking entities: one soci::type_conversion per struct,
// moving a whole row through soci::values, plus the table and column metadata the
// ORM layer (orm.hpp) builds its statements from.
#pragma once

#include <soci/soci.h>

#include <string>
#include <vector>

#include "entities.hpp"

namespace parking::orm {

enum class Kind { Id, Int, Text, Money, Time };

struct Column {
    const char* name;
    Kind kind;
};

// Table key (after "<prefix>t_") and columns of each mapped struct.
template <class T> struct Table;

#define PARKING_TABLE(Type, Key, ...)                                        \
    template <> struct Table<Type> {                                         \
        static constexpr const char* key = Key;                              \
        static const std::vector<Column>& columns() {                        \
            static const std::vector<Column> cols = {__VA_ARGS__};           \
            return cols;                                                     \
        }                                                                    \
    };

PARKING_TABLE(Product, "product", {"id", Kind::Id}, {"name", Kind::Text},
              {"display_name", Kind::Text}, {"places_avail", Kind::Int}, {"price", Kind::Money})
PARKING_TABLE(Order, "order", {"id", Kind::Id}, {"product_id", Kind::Id},
              {"user_eid", Kind::Text}, {"ticket_number", Kind::Text},
              {"plate_number", Kind::Text}, {"start_ts", Kind::Time},
              {"paid_until_ts", Kind::Time}, {"finish_ts", Kind::Time},
              {"paid_amount", Kind::Money}, {"price", Kind::Money})
PARKING_TABLE(Payment, "payment", {"id", Kind::Id}, {"trans_number", Kind::Text},
              {"order_id", Kind::Id}, {"ts", Kind::Time}, {"hours", Kind::Money},
              {"amount", Kind::Money}, {"payment_ts", Kind::Time}, {"cancel_ts", Kind::Time})
PARKING_TABLE(Account, "account", {"id", Kind::Id}, {"user_eid", Kind::Text},
              {"balance", Kind::Money}, {"reserved", Kind::Money})
PARKING_TABLE(AccountReceipt, "account_receipt", {"id", Kind::Id}, {"ts", Kind::Time},
              {"account_id", Kind::Id}, {"src_order_id", Kind::Id}, {"amount", Kind::Money})
PARKING_TABLE(AccountConsume, "account_consume", {"id", Kind::Id}, {"ts", Kind::Time},
              {"account_id", Kind::Id}, {"dst_payment_id", Kind::Id}, {"amount", Kind::Money},
              {"is_reserved", Kind::Int})
PARKING_TABLE(AccountTransfer, "account_transfer", {"id", Kind::Id}, {"ts", Kind::Time},
              {"trans_number", Kind::Text}, {"src_account_id", Kind::Id},
              {"dst_account_id", Kind::Id}, {"amount", Kind::Money})

#undef PARKING_TABLE

// Reading typed fields out of a row, whatever integer type the backend described.
long long get_id(const soci::values& v, const char* name);
int get_int(const soci::values& v, const char* name);
std::string get_text(const soci::values& v, const char* name);
std::optional<std::string> get_text_or_null(const soci::values& v, const char* name);
Money get_money(const soci::values& v, const char* name);
std::optional<Money> get_money_or_null(const soci::values& v, const char* name);
std::time_t get_time(const soci::values& v, const char* name);
std::optional<std::time_t> get_time_or_null(const soci::values& v, const char* name);

// Writing typed fields into a row.
void set_id(soci::values& v, const char* name, long long value);
void set_text(soci::values& v, const char* name, const std::optional<std::string>& value);
void set_money(soci::values& v, const char* name, const std::optional<Money>& value);
void set_time(soci::values& v, const char* name, const std::optional<std::time_t>& value);

}  // namespace parking::orm

namespace soci {

#define PARKING_CONVERSION(Type)                                                          \
    template <> struct type_conversion<parking::Type> {                                   \
        typedef values base_type;                                                         \
        static void from_base(const values& v, indicator ind, parking::Type& row);        \
        static void to_base(const parking::Type& row, values& v, indicator& ind);         \
    };

PARKING_CONVERSION(Product)
PARKING_CONVERSION(Order)
PARKING_CONVERSION(Payment)
PARKING_CONVERSION(Account)
PARKING_CONVERSION(AccountReceipt)
PARKING_CONVERSION(AccountConsume)
PARKING_CONVERSION(AccountTransfer)

#undef PARKING_CONVERSION

}  // namespace soci
