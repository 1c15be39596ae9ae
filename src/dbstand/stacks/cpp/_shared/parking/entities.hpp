// The spec's data model as plain structs (one per table), and the data-access
// interface the rules are written against. Each stack implements `Repo` its own
// way: the ORM stack maps these structs with soci::type_conversion, the raw stack
// moves scalars in and out of plain statements.
#pragma once

#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "money.hpp"

namespace parking {

using Id = long long;  // what SOCI exchanges for BIGINT

struct Product {
    Id id = 0;
    std::string name;
    std::optional<std::string> display_name;
    int places_avail = 0;
    Money price;
};

struct Order {
    Id id = 0;
    Id product_id = 0;
    std::optional<std::string> user_eid;
    std::optional<std::string> ticket_number;
    std::optional<std::string> plate_number;
    std::time_t start_ts = 0;
    std::time_t paid_until_ts = 0;
    std::optional<std::time_t> finish_ts;
    Money paid_amount;
    std::optional<Money> price;
};

struct Payment {
    Id id = 0;
    std::string trans_number;
    Id order_id = 0;
    std::time_t ts = 0;
    Money hours;
    Money amount;
    std::optional<std::time_t> payment_ts;
    std::optional<std::time_t> cancel_ts;
};

struct Account {
    Id id = 0;
    std::string user_eid;
    Money balance;
    Money reserved;
};

struct AccountReceipt {
    Id id = 0;
    std::time_t ts = 0;
    Id account_id = 0;
    Id src_order_id = 0;
    Money amount;
};

struct AccountConsume {
    Id id = 0;
    std::time_t ts = 0;
    Id account_id = 0;
    Id dst_payment_id = 0;
    Money amount;
    int is_reserved = 0;
};

struct AccountTransfer {
    Id id = 0;
    std::time_t ts = 0;
    std::string trans_number;
    Id src_account_id = 0;
    Id dst_account_id = 0;
    Money amount;
};

// Columns a rule changed, for `save`: a raw implementation writes only these, an
// ORM may write the whole row.
using Fields = std::vector<const char*>;

// The queries of one transaction; `lock` is SELECT ... FOR UPDATE.
class Repo {
public:
    virtual ~Repo() = default;

    virtual std::optional<Product> product(const std::string& name, bool lock) = 0;
    virtual Product product_by_id(Id id, bool lock) = 0;
    virtual Order order_by_id(Id id, bool lock) = 0;
    virtual std::optional<Order> order_by_ticket(Id product_id, const std::string& ticket,
                                                 bool lock) = 0;
    virtual std::vector<Order> open_orders_by_ticket(Id product_id, const std::string& ticket,
                                                     bool lock) = 0;
    virtual bool ticket_taken(Id product_id, const std::string& ticket) = 0;
    virtual std::int64_t paid_plate_orders(const std::string& plate, std::time_t now) = 0;
    virtual std::optional<Payment> payment(const std::string& trans_number, bool lock) = 0;
    virtual std::optional<AccountConsume> consume_for(Id payment_id, bool lock) = 0;
    virtual std::optional<Account> account(const std::string& user_eid, bool lock) = 0;
    virtual Account account_by_id(Id id, bool lock) = 0;
    virtual std::optional<AccountReceipt> receipt_for(Id order_id) = 0;
    virtual std::optional<AccountTransfer> transfer(const std::string& trans_number) = 0;

    // Inserts set the new row's id on the object.
    virtual void add(Order& row) = 0;
    virtual void add(Payment& row) = 0;
    virtual void add(Account& row) = 0;
    virtual void add(AccountReceipt& row) = 0;
    virtual void add(AccountConsume& row) = 0;
    virtual void add(AccountTransfer& row) = 0;

    virtual void save(const Product& row, const Fields& fields) = 0;
    virtual void save(const Order& row, const Fields& fields) = 0;
    virtual void save(const Payment& row, const Fields& fields) = 0;
    virtual void save(const Account& row, const Fields& fields) = 0;
    virtual void save(const AccountConsume& row, const Fields& fields) = 0;
};

}  // namespace parking
