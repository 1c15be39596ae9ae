// cpp-parking-soci-raw: the parking Repo through SOCI's plain statements: hand-written
// SQL, every column moved with soci::into / soci::use of a scalar (std::string for
// decimals, std::tm for timestamps, indicators for NULL), and an UPDATE that sets
// only the columns a rule changed.
#include <functional>
#include <list>

#include "pricing.hpp"
#include "stack.hpp"

namespace parking {

namespace {

using soci::i_null;
using soci::indicator;
using soci::into;
using soci::use;

std::optional<std::string> text_or_null(const std::string& v, indicator ind) {
    if (ind == i_null) return std::nullopt;
    return v;
}

std::optional<std::time_t> time_or_null(const std::tm& v, indicator ind) {
    if (ind == i_null) return std::nullopt;
    return clock::from_tm(v);
}

// An UPDATE of some columns of one row, built from (column, value) pairs.
class Update {
public:
    Update(soci::session& s, std::string table) : s_(s), table_(std::move(table)) {}

    void text(const char* column, const std::optional<std::string>& v) {
        strings_.push_back(v.value_or(""));
        bind(column, strings_.back(), v.has_value());
    }
    void money(const char* column, const std::optional<Money>& v) {
        strings_.push_back(v ? v->db_text() : "");
        bind(column, strings_.back(), v.has_value());
    }
    void time(const char* column, const std::optional<std::time_t>& v) {
        times_.push_back(v ? clock::to_tm(*v) : std::tm{});
        bind(column, times_.back(), v.has_value());
    }
    void integer(const char* column, int v) {
        ints_.push_back(v);
        bind(column, ints_.back(), true);
    }
    void id(const char* column, long long v) {
        ids_.push_back(v);
        bind(column, ids_.back(), true);
    }

    void run(long long row_id) {
        if (sets_.empty()) return;
        ids_.push_back(row_id);
        soci::statement st(s_);
        for (auto& exchange : uses_) exchange(st);
        st.exchange(use(ids_.back()));
        st.alloc();
        st.prepare("UPDATE " + table_ + " SET " + sets_ + " WHERE id = :id");
        st.define_and_bind();
        st.execute(true);
    }

private:
    template <class T>
    void bind(const char* column, T& value, bool present) {
        indicators_.push_back(present ? soci::i_ok : i_null);
        indicator& ind = indicators_.back();
        uses_.push_back([&value, &ind](soci::statement& st) { st.exchange(use(value, ind)); });
        sets_ += (sets_.empty() ? "" : ", ") + std::string(column) + " = :" + column;
    }

    soci::session& s_;
    std::string table_;
    std::string sets_;
    std::list<std::string> strings_;
    std::list<std::tm> times_;
    std::list<int> ints_;
    std::list<long long> ids_;
    std::list<indicator> indicators_;
    std::list<std::function<void(soci::statement&)>> uses_;
};

bool has(const Fields& fields, const char* name) {
    for (const char* f : fields)
        if (std::string(f) == name) return true;
    return false;
}

class RawRepo : public Repo {
public:
    RawRepo(soci::session& s, const Dialect& d)
        : s_(s), d_(d), product_(d.table("product")), order_(d.table("order")),
          payment_(d.table("payment")), account_(d.table("account")),
          receipt_(d.table("account_receipt")), consume_(d.table("account_consume")),
          transfer_(d.table("account_transfer")) {}

    // --- products ------------------------------------------------------------------
    std::optional<Product> product(const std::string& name, bool lock) override {
        return product_where("name = :name", lock, name);
    }
    Product product_by_id(Id id, bool lock) override {
        auto p = product_where("id = :id", lock, id);
        if (!p) throw std::runtime_error("no product " + std::to_string(id));
        return *p;
    }

    // --- orders --------------------------------------------------------------------
    Order order_by_id(Id id, bool lock) override {
        Order o;
        OrderRow r;
        soci::details::prepare_temp_type q = s_.prepare << order_select("id = :id", lock);
        r.bind(q, o);
        q, use(id);
        soci::statement st(q);
        if (!st.execute(true)) throw std::runtime_error("no order " + std::to_string(id));
        r.fill(o);
        return o;
    }
    std::optional<Order> order_by_ticket(Id product_id, const std::string& ticket,
                                         bool lock) override {
        Order o;
        OrderRow r;
        soci::details::prepare_temp_type q =
            s_.prepare << order_select("product_id = :product_id AND ticket_number = :ticket", lock);
        r.bind(q, o);
        q, use(product_id), use(ticket);
        soci::statement st(q);
        if (!st.execute(true)) return std::nullopt;
        r.fill(o);
        return o;
    }
    std::vector<Order> open_orders_by_ticket(Id product_id, const std::string& ticket,
                                             bool lock) override {
        std::vector<Order> out;
        Order o;
        OrderRow r;
        soci::details::prepare_temp_type q =
            s_.prepare << order_select("product_id = :product_id AND ticket_number = :ticket "
                                       "AND finish_ts IS NULL", lock);
        r.bind(q, o);
        q, use(product_id), use(ticket);
        soci::statement st(q);
        st.execute();
        while (st.fetch()) {
            r.fill(o);
            out.push_back(o);
        }
        return out;
    }
    bool ticket_taken(Id product_id, const std::string& ticket) override {
        int one = 0;
        s_ << "SELECT 1 FROM " + order_ + " WHERE product_id = :product_id AND ticket_number = :ticket",
            into(one), use(product_id), use(ticket);
        return s_.got_data();
    }
    std::int64_t paid_plate_orders(const std::string& plate, std::time_t now) override {
        long long n = 0;
        std::tm at = clock::to_tm(now);
        s_ << "SELECT count(*) FROM " + order_ + " WHERE plate_number = :plate AND "
              "paid_until_ts > :now AND finish_ts IS NULL",
            into(n), use(plate), use(at);
        return n;
    }

    // --- payments ------------------------------------------------------------------
    std::optional<Payment> payment(const std::string& trans, bool lock) override {
        Payment p;
        long long id = 0, order_id = 0;
        std::string hours, amount;
        std::tm ts{}, paid{}, cancelled{};
        indicator paid_ind = soci::i_ok, cancel_ind = soci::i_ok;
        s_ << "SELECT id, trans_number, order_id, ts, hours, amount, payment_ts, cancel_ts FROM " +
                  payment_ + " WHERE trans_number = :trans" + d_.lock(lock),
            into(id), into(p.trans_number), into(order_id), into(ts), into(hours), into(amount),
            into(paid, paid_ind), into(cancelled, cancel_ind), use(trans);
        if (!s_.got_data()) return std::nullopt;
        p.id = id;
        p.order_id = order_id;
        p.ts = clock::from_tm(ts);
        p.hours = Money::parse_db(hours);
        p.amount = Money::parse_db(amount);
        p.payment_ts = time_or_null(paid, paid_ind);
        p.cancel_ts = time_or_null(cancelled, cancel_ind);
        return p;
    }

    // --- accounts ------------------------------------------------------------------
    std::optional<AccountConsume> consume_for(Id payment_id, bool lock) override {
        AccountConsume c;
        std::tm ts{};
        std::string amount;
        s_ << "SELECT id, ts, account_id, dst_payment_id, amount, is_reserved FROM " + consume_ +
                  " WHERE dst_payment_id = :payment_id" + d_.lock(lock),
            into(c.id), into(ts), into(c.account_id), into(c.dst_payment_id), into(amount),
            into(c.is_reserved), use(payment_id);
        if (!s_.got_data()) return std::nullopt;
        c.ts = clock::from_tm(ts);
        c.amount = Money::parse_db(amount);
        return c;
    }
    std::optional<Account> account(const std::string& user_eid, bool lock) override {
        return account_where("user_eid = :user_eid", lock, user_eid);
    }
    Account account_by_id(Id id, bool lock) override {
        auto a = account_where("id = :id", lock, id);
        if (!a) throw std::runtime_error("no account " + std::to_string(id));
        return *a;
    }
    std::optional<AccountReceipt> receipt_for(Id order_id) override {
        AccountReceipt r;
        std::tm ts{};
        std::string amount;
        s_ << "SELECT id, ts, account_id, src_order_id, amount FROM " + receipt_ +
                  " WHERE src_order_id = :order_id",
            into(r.id), into(ts), into(r.account_id), into(r.src_order_id), into(amount),
            use(order_id);
        if (!s_.got_data()) return std::nullopt;
        r.ts = clock::from_tm(ts);
        r.amount = Money::parse_db(amount);
        return r;
    }
    std::optional<AccountTransfer> transfer(const std::string& trans) override {
        AccountTransfer t;
        std::tm ts{};
        std::string amount;
        s_ << "SELECT id, ts, trans_number, src_account_id, dst_account_id, amount FROM " +
                  transfer_ + " WHERE trans_number = :trans",
            into(t.id), into(ts), into(t.trans_number), into(t.src_account_id),
            into(t.dst_account_id), into(amount), use(trans);
        if (!s_.got_data()) return std::nullopt;
        t.ts = clock::from_tm(ts);
        t.amount = Money::parse_db(amount);
        return t;
    }

    // --- inserts -------------------------------------------------------------------
    void add(Order& o) override {
        std::string user = o.user_eid.value_or(""), ticket = o.ticket_number.value_or(""),
                    plate = o.plate_number.value_or(""), paid = o.paid_amount.db_text(),
                    price = o.price ? o.price->db_text() : "";
        indicator user_ind = o.user_eid ? soci::i_ok : i_null,
                  ticket_ind = o.ticket_number ? soci::i_ok : i_null,
                  plate_ind = o.plate_number ? soci::i_ok : i_null,
                  price_ind = o.price ? soci::i_ok : i_null;
        std::tm start = clock::to_tm(o.start_ts), until = clock::to_tm(o.paid_until_ts);
        o.id = insert(order_,
                      "product_id, user_eid, ticket_number, plate_number, start_ts, "
                      "paid_until_ts, paid_amount, price",
                      ":product_id, :user_eid, :ticket_number, :plate_number, :start_ts, "
                      ":paid_until_ts, :paid_amount, :price",
                      [&](auto& q) {
                          q, use(o.product_id), use(user, user_ind), use(ticket, ticket_ind),
                              use(plate, plate_ind), use(start), use(until), use(paid),
                              use(price, price_ind);
                      });
    }
    void add(Payment& p) override {
        std::string hours = p.hours.db_text(), amount = p.amount.db_text();
        std::tm ts = clock::to_tm(p.ts);
        p.id = insert(payment_, "trans_number, order_id, ts, hours, amount",
                      ":trans_number, :order_id, :ts, :hours, :amount", [&](auto& q) {
                          q, use(p.trans_number), use(p.order_id), use(ts), use(hours), use(amount);
                      });
    }
    void add(Account& a) override {
        std::string balance = a.balance.db_text(), reserved = a.reserved.db_text();
        a.id = insert(account_, "user_eid, balance, reserved", ":user_eid, :balance, :reserved",
                      [&](auto& q) { q, use(a.user_eid), use(balance), use(reserved); });
    }
    void add(AccountReceipt& r) override {
        std::string amount = r.amount.db_text();
        std::tm ts = clock::to_tm(r.ts);
        r.id = insert(receipt_, "ts, account_id, src_order_id, amount",
                      ":ts, :account_id, :src_order_id, :amount", [&](auto& q) {
                          q, use(ts), use(r.account_id), use(r.src_order_id), use(amount);
                      });
    }
    void add(AccountConsume& c) override {
        std::string amount = c.amount.db_text();
        std::tm ts = clock::to_tm(c.ts);
        c.id = insert(consume_, "ts, account_id, dst_payment_id, amount, is_reserved",
                      ":ts, :account_id, :dst_payment_id, :amount, :is_reserved", [&](auto& q) {
                          q, use(ts), use(c.account_id), use(c.dst_payment_id), use(amount),
                              use(c.is_reserved);
                      });
    }
    void add(AccountTransfer& t) override {
        std::string amount = t.amount.db_text();
        std::tm ts = clock::to_tm(t.ts);
        t.id = insert(transfer_,
                      "ts, trans_number, src_account_id, dst_account_id, amount",
                      ":ts, :trans_number, :src_account_id, :dst_account_id, :amount",
                      [&](auto& q) {
                          q, use(ts), use(t.trans_number), use(t.src_account_id),
                              use(t.dst_account_id), use(amount);
                      });
    }

    // --- updates: only the columns named -------------------------------------------
    void save(const Product& p, const Fields& f) override {
        Update u(s_, product_);
        if (has(f, "places_avail")) u.integer("places_avail", p.places_avail);
        if (has(f, "price")) u.money("price", p.price);
        u.run(p.id);
    }
    void save(const Order& o, const Fields& f) override {
        Update u(s_, order_);
        if (has(f, "paid_amount")) u.money("paid_amount", o.paid_amount);
        if (has(f, "paid_until_ts")) u.time("paid_until_ts", o.paid_until_ts);
        if (has(f, "finish_ts")) u.time("finish_ts", o.finish_ts);
        u.run(o.id);
    }
    void save(const Payment& p, const Fields& f) override {
        Update u(s_, payment_);
        if (has(f, "payment_ts")) u.time("payment_ts", p.payment_ts);
        if (has(f, "cancel_ts")) u.time("cancel_ts", p.cancel_ts);
        u.run(p.id);
    }
    void save(const Account& a, const Fields& f) override {
        Update u(s_, account_);
        if (has(f, "balance")) u.money("balance", a.balance);
        if (has(f, "reserved")) u.money("reserved", a.reserved);
        u.run(a.id);
    }
    void save(const AccountConsume& c, const Fields& f) override {
        Update u(s_, consume_);
        if (has(f, "amount")) u.money("amount", c.amount);
        if (has(f, "is_reserved")) u.integer("is_reserved", c.is_reserved);
        u.run(c.id);
    }

private:
    // The into() targets of an order row that need converting afterwards.
    struct OrderRow {
        std::string user, ticket, plate, paid, price;
        std::tm start{}, until{}, finish{};
        indicator user_ind{}, ticket_ind{}, plate_ind{}, finish_ind{}, price_ind{};

        void bind(soci::details::prepare_temp_type& q, Order& o) {
            q, into(o.id), into(o.product_id), into(user, user_ind), into(ticket, ticket_ind),
                into(plate, plate_ind), into(start), into(until), into(finish, finish_ind),
                into(paid), into(price, price_ind);
        }
        void fill(Order& o) {
            o.user_eid = text_or_null(user, user_ind);
            o.ticket_number = text_or_null(ticket, ticket_ind);
            o.plate_number = text_or_null(plate, plate_ind);
            o.start_ts = clock::from_tm(start);
            o.paid_until_ts = clock::from_tm(until);
            o.finish_ts = time_or_null(finish, finish_ind);
            o.paid_amount = Money::parse_db(paid);
            o.price = price_ind == i_null ? std::nullopt
                                          : std::optional<Money>(Money::parse_db(price));
        }
    };

    std::string order_select(const std::string& where, bool lock) const {
        return "SELECT id, product_id, user_eid, ticket_number, plate_number, start_ts, "
               "paid_until_ts, finish_ts, paid_amount, price FROM " + order_ + " WHERE " +
               where + d_.lock(lock);
    }

    template <class P>
    std::optional<Product> product_where(const char* where, bool lock, const P& param) {
        Product p;
        std::string display, price;
        indicator display_ind = soci::i_ok;
        s_ << "SELECT id, name, display_name, places_avail, price FROM " + product_ + " WHERE " +
                  where + d_.lock(lock),
            into(p.id), into(p.name), into(display, display_ind), into(p.places_avail),
            into(price), use(param);
        if (!s_.got_data()) return std::nullopt;
        p.display_name = text_or_null(display, display_ind);
        p.price = Money::parse_db(price);
        return p;
    }

    template <class P>
    std::optional<Account> account_where(const char* where, bool lock, const P& param) {
        Account a;
        std::string balance, reserved;
        s_ << "SELECT id, user_eid, balance, reserved FROM " + account_ + " WHERE " + where +
                  d_.lock(lock),
            into(a.id), into(a.user_eid), into(balance), into(reserved), use(param);
        if (!s_.got_data()) return std::nullopt;
        a.balance = Money::parse_db(balance);
        a.reserved = Money::parse_db(reserved);
        return a;
    }

    // INSERT, then the new id (RETURNING on PostgreSQL, the insert id elsewhere).
    template <class Bind>
    long long insert(const std::string& table, const char* columns, const char* values,
                     Bind bind) {
        long long id = 0;
        std::string sql = "INSERT INTO " + table + " (" + columns + ") VALUES (" + values + ")";
        if (d_.postgresql) {
            soci::details::prepare_temp_type q = s_.prepare << sql + " RETURNING id";
            bind(q);
            q, into(id);
            soci::statement st(q);
            st.execute(true);
        } else {
            soci::details::prepare_temp_type q = s_.prepare << sql;
            bind(q);
            soci::statement st(q);
            st.execute(true);
            id = d_.last_insert_id(s_, table);
        }
        return id;
    }

    soci::session& s_;
    const Dialect& d_;
    const std::string product_, order_, payment_, account_, receipt_, consume_, transfer_;
};

}  // namespace

std::unique_ptr<Repo> make_repo(soci::session& session, const Dialect& dialect) {
    return std::make_unique<RawRepo>(session, dialect);
}

}  // namespace parking
