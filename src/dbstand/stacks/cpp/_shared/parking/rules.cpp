#include "rules.hpp"

#include <algorithm>
#include <random>

#include "pricing.hpp"

namespace parking::rules {

namespace {

constexpr const char* NA = "not_available";
constexpr const char* BT = "bad_transaction";
constexpr std::time_t kGrace = 15 * 60;
constexpr std::int64_t kMaxMinutes = 1000000000000;  // beyond: not a duration

[[noreturn]] void refuse(const char* status) { throw Reply(status); }
[[noreturn]] void refuse(const char* status, const char* code) { throw Reply(status, code); }

std::string start_text(std::time_t t) { return std::to_string(static_cast<long long>(t)) + ".000"; }

bool never_paid(const Order& o) { return o.paid_until_ts <= o.start_ts; }

bool is_plate_order(const Order& o) {
    return !o.ticket_number && o.plate_number && !o.plate_number->empty();
}

Order ticket_order(Repo& repo, const Product& product, const std::string& ticket, bool lock) {
    auto order = repo.order_by_ticket(product.id, ticket, lock);
    if (!order) refuse(NA, "user_ticket_not_found");
    if (order->finish_ts) refuse(NA, "user_ticket_out_of_parking");
    return *order;
}

std::int64_t ticket_minutes(const Order& o, std::time_t now) {
    return pricing::rounded_minutes(pricing::overdue_minutes(o.paid_until_ts, now), never_paid(o));
}

std::optional<std::int64_t> positive_int(const std::string& text) {
    if (text.empty() || text.size() > 13) return std::nullopt;
    std::int64_t v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + (c - '0');
    }
    if (v <= 0 || v > kMaxMinutes) return std::nullopt;
    return v;
}

// Rounded minutes of a session without ticket (`duration`, or version 0's `hours`).
std::int64_t requested_minutes(const Call& call) {
    const std::string& text = call.field("duration");
    std::int64_t minutes = 0;
    if (call.version == 0) {
        auto hours = Decimal::parse(text);
        if (!hours || !hours->is_positive() || hours->scaled > pow10_128(18 + 10))
            refuse(NA, "invalid_duration");
        minutes = hours->floor_times_60();
    } else {
        auto parsed = positive_int(text);
        if (!parsed) refuse(NA, "invalid_duration");
        minutes = *parsed;
    }
    return pricing::rounded_minutes(minutes, true);
}

Money hourly_price(const Order& order, const Product& product) {
    return order.price ? *order.price : product.price;
}

Account lock_or_create_account(Repo& repo, const std::string& user_eid) {
    if (auto found = repo.account(user_eid, true)) return *found;
    Account account;
    account.user_eid = user_eid;
    repo.add(account);
    return account;
}

void give_place_back(Repo& repo, const Order& order) {
    Product product = repo.product_by_id(order.product_id, true);
    product.places_avail += 1;
    repo.save(product, {"places_avail"});
}

std::size_t code_points(const std::string& s) {
    return static_cast<std::size_t>(
        std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

}  // namespace

json::Object get_service_info(const Call& call, Repo& repo) {
    const std::string& user_id = call.param("user_id");
    if (call.version >= 1 && user_id.empty()) refuse(NA, "invalid_user_id");
    if (call.version == 1 && call.field("plate").empty()) refuse(NA, "invalid_registration_plate");
    const std::string& name = call.field("parking");
    std::optional<Product> product;
    if (!name.empty()) product = repo.product(name, false);
    if (!product) refuse(NA, "invalid_parking_id");
    const std::string& ticket = call.field("ticket");
    std::optional<Order> order;
    std::int64_t minutes;
    Money hourly;
    std::time_t start;
    if (!ticket.empty()) {
        order = ticket_order(repo, *product, ticket, false);
        minutes = ticket_minutes(*order, call.now);
        hourly = hourly_price(*order, *product);
        start = order->start_ts;
    } else {
        minutes = requested_minutes(call);
        hourly = product->price;
        start = call.now;
    }
    json::Object info;
    info.integer("available_places", product->places_avail);
    if (call.version >= 1) {
        info.str("start_ts", start_text(start));
        info.integer("duration", minutes);
        if (order)
            info.integer("paid_duration",
                         pricing::minutes_between(order->start_ts, order->paid_until_ts));
    }
    if (call.version >= 2) {
        auto account = repo.account(user_id, false);
        info.str("balance", account ? account->balance.answer_text() : "0.00");
    }
    json::Object answer = success();
    answer.str("price", pricing::cost(minutes, hourly).answer_text());
    answer.object("info", info);
    return answer;
}

json::Object create_reservation(const Call& call, Repo& repo) {
    const std::string& user_id = call.param("user_id");
    if (call.version >= 1 && user_id.empty()) refuse(NA, "invalid_user_id");
    const std::string& ticket = call.field("ticket");
    const std::string& plate = call.field("plate");
    if (plate.empty() && (call.version >= 1 || ticket.empty()))
        refuse(NA, "invalid_registration_plate");
    const std::string& name = call.field("parking");
    std::optional<Product> product;
    if (!name.empty()) product = repo.product(name, true);
    if (!product) refuse(NA, "invalid_parking_id");
    auto price = Decimal::parse(call.param("price"));
    if (!price) refuse(NA);
    Decimal from_balance;
    if (!call.param("pay_from_balance").empty()) {
        auto parsed = Decimal::parse(call.param("pay_from_balance"));
        if (!parsed) refuse(NA);
        from_balance = *parsed;
    }
    if (from_balance.scaled < 0 || from_balance.scaled > price->scaled) refuse("wrong_price");
    const std::string& trans = call.param("transaction_id");
    std::size_t length = code_points(trans);
    if (length < 4 || length > 64) refuse(BT);
    if (auto existing = repo.payment(trans, true)) {
        Order paid_order = repo.order_by_id(existing->order_id, false);
        if (price->equals(existing->amount) && paid_order.product_id == product->id)
            refuse("success");
        refuse(BT);
    }
    std::optional<Order> order;
    std::int64_t minutes;
    Money hourly;
    if (!ticket.empty()) {
        order = ticket_order(repo, *product, ticket, true);
        minutes = ticket_minutes(*order, call.now);
        hourly = hourly_price(*order, *product);
    } else {
        minutes = requested_minutes(call);
        hourly = product->price;
    }
    Money total = pricing::cost(minutes, hourly);
    if (!price->equals(total)) refuse("wrong_price");
    if (!order) {
        // a ticket holder already has a place: only a new session needs one
        if (product->places_avail <= 0) refuse(NA);
        Order fresh;
        fresh.product_id = product->id;
        if (!user_id.empty()) fresh.user_eid = user_id;
        fresh.plate_number = plate;
        fresh.start_ts = fresh.paid_until_ts = call.now;
        repo.add(fresh);
        order = fresh;
    }
    Payment payment;
    payment.trans_number = trans;
    payment.order_id = order->id;
    payment.ts = call.now;
    payment.hours = pricing::hours_of(minutes);
    payment.amount = total;
    repo.add(payment);
    if (from_balance.is_positive()) {
        if (user_id.empty()) refuse(NA, "invalid_user_id");
        Money spend = from_balance.to_money();
        Account account = lock_or_create_account(repo, user_id);
        if (account.balance - account.reserved < spend) refuse(NA);
        AccountConsume consume;
        consume.ts = call.now;
        consume.account_id = account.id;
        consume.dst_payment_id = payment.id;
        consume.amount = spend;
        consume.is_reserved = 1;
        repo.add(consume);
        account.reserved += spend;
        repo.save(account, {"reserved"});
    }
    json::Object answer = success();
    if (call.version >= 1) {
        json::Object info;
        info.str("start_ts", start_text(order->start_ts));
        info.integer("duration", minutes);
        if (!ticket.empty()) info.integer("paid_duration", 0);
        answer.str("price", total.answer_text());
        answer.object("info", info);
    }
    return answer;
}

json::Object pay_reservation(const Call& call, Repo& repo) {
    const std::string& trans = call.param("transaction_id");
    std::optional<Payment> payment;
    if (!trans.empty()) payment = repo.payment(trans, true);
    if (!payment) refuse(BT);
    // the spec's order: already paid (even if cancelled after) before cancelled
    if (payment->payment_ts) refuse("success");
    if (payment->cancel_ts) refuse(BT);
    payment->payment_ts = call.now;
    repo.save(*payment, {"payment_ts"});
    Order order = repo.order_by_id(payment->order_id, true);
    order.paid_amount += payment->amount;
    order.paid_until_ts += pricing::hours_seconds(payment->hours);
    repo.save(order, {"paid_amount", "paid_until_ts"});
    if (is_plate_order(order) && !order.finish_ts && order.paid_until_ts > call.now) {
        Product product = repo.product_by_id(order.product_id, true);
        product.places_avail -= 1;
        repo.save(product, {"places_avail"});
    }
    auto consume = repo.consume_for(payment->id, true);
    if (consume && consume->is_reserved) {
        Account account = repo.account_by_id(consume->account_id, true);
        account.reserved -= consume->amount;
        account.balance -= consume->amount;
        repo.save(account, {"balance", "reserved"});
        consume->is_reserved = 0;
        repo.save(*consume, {"is_reserved"});
    }
    return success();
}

json::Object cancel_reservation(const Call& call, Repo& repo) {
    const std::string& trans = call.param("transaction_id");
    std::optional<Payment> payment;
    if (!trans.empty()) payment = repo.payment(trans, true);
    if (!payment) refuse(BT);
    if (payment->cancel_ts) refuse("success");
    payment->cancel_ts = call.now;
    repo.save(*payment, {"cancel_ts"});
    Order order = repo.order_by_id(payment->order_id, true);
    if (payment->payment_ts) {
        order.paid_amount -= payment->amount;
        order.paid_until_ts -= pricing::hours_seconds(payment->hours);
        repo.save(order, {"paid_amount", "paid_until_ts"});
        if (is_plate_order(order) && !order.finish_ts && order.paid_until_ts <= call.now) {
            order.finish_ts = call.now;
            repo.save(order, {"finish_ts"});
            give_place_back(repo, order);
        }
    } else if (!order.ticket_number && !order.finish_ts) {
        // a ticket's car is still inside: only a session without ticket is finished
        order.finish_ts = call.now;
        repo.save(order, {"finish_ts"});
    }
    auto consume = repo.consume_for(payment->id, true);
    if (consume && consume->is_reserved) {
        Account account = repo.account_by_id(consume->account_id, true);
        account.reserved -= consume->amount;
        repo.save(account, {"reserved"});
        consume->amount = Money{};
        consume->is_reserved = 0;
        repo.save(*consume, {"amount", "is_reserved"});
    }
    return success();
}

json::Object stop_service(const Call& call, Repo& repo) {
    const std::string& trans = call.param("transaction_id");
    std::optional<Payment> payment;
    if (!trans.empty()) payment = repo.payment(trans, true);
    if (!payment || !payment->payment_ts || payment->cancel_ts) refuse(BT);
    Order order = repo.order_by_id(payment->order_id, true);
    if (order.ticket_number) refuse(BT);
    if (auto receipt = repo.receipt_for(order.id)) {
        Reply done("success");
        done.body.str("delta_amount", receipt->amount.answer_text());
        throw done;
    }
    if (order.paid_until_ts <= call.now) {
        Reply none("success");
        none.body.str("delta_amount", "0.00");
        throw none;
    }
    if (!order.user_eid || order.user_eid->empty()) refuse(BT);  // no account to credit
    Money delta = pricing::refund(order.paid_amount, order.start_ts, order.paid_until_ts, call.now);
    Account account = lock_or_create_account(repo, *order.user_eid);
    AccountReceipt receipt;
    receipt.ts = call.now;
    receipt.account_id = account.id;
    receipt.src_order_id = order.id;
    receipt.amount = delta;
    repo.add(receipt);
    account.balance += delta;
    repo.save(account, {"balance"});
    order.paid_amount -= delta;
    order.paid_until_ts = call.now;
    repo.save(order, {"paid_amount", "paid_until_ts"});
    json::Object answer = success();
    answer.str("delta_amount", delta.answer_text());
    return answer;
}

json::Object get_user_account(const Call& call, Repo& repo) {
    const std::string& user_id = call.param("user_id");
    if (user_id.empty()) refuse(BT);
    auto account = repo.account(user_id, false);
    json::Object answer = success();
    answer.str("balance", account ? account->balance.answer_text() : "0.00");
    return answer;
}

json::Object account_transfer(const Call& call, Repo& repo) {
    const std::string& trans = call.param("transaction_id");
    const std::string& src_id = call.param("src_user_id");
    const std::string& dst_id = call.param("dst_user_id");
    if (trans.empty() || src_id.empty() || dst_id.empty()) refuse(BT);
    // lock in user-id order, so that two opposite transfers cannot deadlock
    const std::string& first = std::min(src_id, dst_id);
    const std::string& second = std::max(src_id, dst_id);
    Account a = lock_or_create_account(repo, first);
    Account b = first == second ? a : lock_or_create_account(repo, second);
    Account src = src_id == first ? a : b;
    Account dst = dst_id == first ? a : b;
    if (src.id == dst.id) refuse(BT, "same_src_and_dst");
    if (auto done = repo.transfer(trans)) {
        if (done->src_account_id == src.id && done->dst_account_id == dst.id)
            refuse("success", "already_done");
        refuse(BT, "another_trans_exists");
    }
    if (src.balance <= Money{}) refuse("success", "nothing_to_transfer");
    if (src.reserved != Money{}) refuse(NA, "reserved_funds_present");
    Money amount = src.balance;
    dst.balance += amount;
    src.balance = Money{};
    repo.save(src, {"balance"});
    repo.save(dst, {"balance"});
    AccountTransfer transfer;
    transfer.ts = call.now;
    transfer.trans_number = trans;
    transfer.src_account_id = src.id;
    transfer.dst_account_id = dst.id;
    transfer.amount = amount;
    repo.add(transfer);
    return success();
}

json::Object issue_ticket(const Call& call, Repo& repo) {
    const std::string& name = call.param("parking_id");
    std::optional<Product> product;
    if (!name.empty()) product = repo.product(name, true);
    if (!product || product->places_avail <= 0) refuse(NA);
    thread_local std::mt19937_64 rng{std::random_device{}()};
    std::uniform_int_distribution<long long> pick(1000000000LL, 1999999999LL);
    std::string ticket;
    do {
        ticket = std::to_string(pick(rng));
    } while (repo.ticket_taken(product->id, ticket));
    Order order;
    order.product_id = product->id;
    order.ticket_number = ticket;
    order.start_ts = order.paid_until_ts = call.now;
    order.price = product->price;
    repo.add(order);
    product->places_avail -= 1;
    repo.save(*product, {"places_avail"});
    json::Object answer = success();
    answer.str("user_ticket", ticket);
    answer.integer("available_places", product->places_avail);
    return answer;
}

json::Object leave_parking(const Call& call, Repo& repo) {
    const std::string& name = call.param("parking_id");
    const std::string& ticket = call.param("user_ticket");
    std::optional<Product> product;
    if (!name.empty() && !ticket.empty()) product = repo.product(name, true);
    if (!product) refuse(NA);
    auto orders = repo.open_orders_by_ticket(product->id, ticket, true);
    if (orders.size() != 1) refuse(NA);
    Order& order = orders.front();
    if (never_paid(order) || call.now >= order.paid_until_ts + kGrace) refuse("not_enough_paid");
    order.finish_ts = call.now;
    repo.save(order, {"finish_ts"});
    product->places_avail += 1;
    repo.save(*product, {"places_avail"});
    return success();
}

json::Object check_plate_number(const Call& call, Repo& repo) {
    const std::string& plate = call.param("registration_plate");
    if (plate.empty()) refuse(NA);
    bool paid = repo.paid_plate_orders(plate, call.now) >= 1;
    json::Object answer = success();
    answer.str("paid", paid ? "true" : "false");
    return answer;
}

}  // namespace parking::rules
