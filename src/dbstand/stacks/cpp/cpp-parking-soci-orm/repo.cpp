// cpp-parking-soci-orm: the parking Repo through SOCI's object mapping (orm.hpp).
#include "orm.hpp"
#include "pricing.hpp"
#include "stack.hpp"

namespace parking {

namespace {

class OrmRepo : public Repo {
public:
    OrmRepo(soci::session& s, const Dialect& d) : m_(s, d) {}

    std::optional<Product> product(const std::string& name, bool lock) override {
        return m_.first<Product>("name = :name", lock, name);
    }
    Product product_by_id(Id id, bool lock) override { return m_.get<Product>(id, lock); }
    Order order_by_id(Id id, bool lock) override { return m_.get<Order>(id, lock); }
    std::optional<Order> order_by_ticket(Id product_id, const std::string& ticket,
                                         bool lock) override {
        return m_.first<Order>("product_id = :product_id AND ticket_number = :ticket", lock,
                               product_id, ticket);
    }
    std::vector<Order> open_orders_by_ticket(Id product_id, const std::string& ticket,
                                             bool lock) override {
        return m_.all<Order>(
            "product_id = :product_id AND ticket_number = :ticket AND finish_ts IS NULL", lock,
            product_id, ticket);
    }
    bool ticket_taken(Id product_id, const std::string& ticket) override {
        return m_.count<Order>("product_id = :product_id AND ticket_number = :ticket",
                               product_id, ticket) > 0;
    }
    std::int64_t paid_plate_orders(const std::string& plate, std::time_t now) override {
        std::tm at = clock::to_tm(now);
        return m_.count<Order>(
            "plate_number = :plate AND paid_until_ts > :now AND finish_ts IS NULL", plate, at);
    }
    std::optional<Payment> payment(const std::string& trans, bool lock) override {
        return m_.first<Payment>("trans_number = :trans", lock, trans);
    }
    std::optional<AccountConsume> consume_for(Id payment_id, bool lock) override {
        return m_.first<AccountConsume>("dst_payment_id = :payment_id", lock, payment_id);
    }
    std::optional<Account> account(const std::string& user_eid, bool lock) override {
        return m_.first<Account>("user_eid = :user_eid", lock, user_eid);
    }
    Account account_by_id(Id id, bool lock) override { return m_.get<Account>(id, lock); }
    std::optional<AccountReceipt> receipt_for(Id order_id) override {
        return m_.first<AccountReceipt>("src_order_id = :order_id", false, order_id);
    }
    std::optional<AccountTransfer> transfer(const std::string& trans) override {
        return m_.first<AccountTransfer>("trans_number = :trans", false, trans);
    }

    void add(Order& row) override { m_.insert(row); }
    void add(Payment& row) override { m_.insert(row); }
    void add(Account& row) override { m_.insert(row); }
    void add(AccountReceipt& row) override { m_.insert(row); }
    void add(AccountConsume& row) override { m_.insert(row); }
    void add(AccountTransfer& row) override { m_.insert(row); }

    // an object mapper writes the whole row back, whichever fields changed
    void save(const Product& row, const Fields&) override { m_.update(row); }
    void save(const Order& row, const Fields&) override { m_.update(row); }
    void save(const Payment& row, const Fields&) override { m_.update(row); }
    void save(const Account& row, const Fields&) override { m_.update(row); }
    void save(const AccountConsume& row, const Fields&) override { m_.update(row); }

private:
    orm::Mapper m_;
};

}  // namespace

std::unique_ptr<Repo> make_repo(soci::session& session, const Dialect& dialect) {
    return std::make_unique<OrmRepo>(session, dialect);
}

}  // namespace parking
