package main

// Data access with database/sql: the statements are written out once at start-up
// for the target's dialect (`?` for MariaDB, `$n` for PostgreSQL), every request
// runs in one explicit transaction, and locking reads are SELECT ... FOR UPDATE.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

type product struct {
	id          int64
	name        string
	displayName sql.NullString
	placesAvail int64
	price       decimal.Decimal
}

type order struct {
	id           int64
	productID    int64
	userEID      sql.NullString
	ticketNumber sql.NullString
	plateNumber  sql.NullString
	startTS      time.Time
	paidUntilTS  time.Time
	finishTS     sql.NullTime
	paidAmount   decimal.Decimal
	price        decimal.NullDecimal
}

type payment struct {
	id          int64
	transNumber string
	orderID     int64
	ts          time.Time
	hours       decimal.Decimal
	amount      decimal.Decimal
	paymentTS   sql.NullTime
	cancelTS    sql.NullTime
}

type account struct {
	id       int64
	userEID  string
	balance  decimal.Decimal
	reserved decimal.Decimal
}

type receipt struct {
	id         int64
	ts         time.Time
	accountID  int64
	srcOrderID int64
	amount     decimal.Decimal
}

type consume struct {
	id           int64
	ts           time.Time
	accountID    int64
	dstPaymentID int64
	amount       decimal.Decimal
	isReserved   int64
}

type transfer struct {
	id           int64
	ts           time.Time
	transNumber  string
	srcAccountID int64
	dstAccountID int64
	amount       decimal.Decimal
}

// columns of each table, in the order the scan functions read them.
var columns = map[string]string{
	"product":          "id, name, display_name, places_avail, price",
	"order":            "id, product_id, user_eid, ticket_number, plate_number, start_ts, paid_until_ts, finish_ts, paid_amount, price",
	"payment":          "id, trans_number, order_id, ts, hours, amount, payment_ts, cancel_ts",
	"account":          "id, user_eid, balance, reserved",
	"account_receipt":  "id, ts, account_id, src_order_id, amount",
	"account_consume":  "id, ts, account_id, dst_payment_id, amount, is_reserved",
	"account_transfer": "id, ts, trans_number, src_account_id, dst_account_id, amount",
}

// lockable is a SELECT in its plain and its FOR UPDATE form.
type lockable struct{ plain, locked string }

func (l lockable) sql(lock bool) string {
	if lock {
		return l.locked
	}
	return l.plain
}

// queries are every statement the rules run, in the target's dialect.
type queries struct {
	product, productByID, orderByID, orderByTicket, openOrders, payment,
	consumeFor, account, accountByID lockable
	receiptFor, transfer, ticketTaken, paidPlates string

	insertOrder, insertPayment, insertAccount, insertReceipt, insertConsume,
	insertTransfer string

	setPlaces, setPaymentTS, setCancelTS, setOrderPaid, setFinish, setReserved,
	setBalance, setBalanceReserved, setConsumeReserved, setConsumeReleased string
}

// store is the database of one service process.
type store struct {
	db       *sql.DB
	postgres bool
	sqlLog   *log.Logger // nil when logging is off
	q        queries
}

func newStore(db *sql.DB, kind, prefix string, sqlLog *log.Logger) *store {
	s := &store{db: db, postgres: kind == "postgresql", sqlLog: sqlLog}
	table := func(key string) string { return prefix + "t_" + key }
	sel := func(key, where string) lockable {
		q := fmt.Sprintf("SELECT %s FROM %s WHERE %s", columns[key], table(key), where)
		return lockable{s.rebind(q), s.rebind(q + " FOR UPDATE")}
	}
	insert := func(key, cols string) string {
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(strings.Split(cols, ","))), ", ")
		q := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table(key), cols, marks)
		if s.postgres {
			q += " RETURNING id"
		}
		return s.rebind(q)
	}
	update := func(key, sets string) string {
		return s.rebind(fmt.Sprintf("UPDATE %s SET %s WHERE id = ?", table(key), sets))
	}
	s.q = queries{
		product:       sel("product", "name = ?"),
		productByID:   sel("product", "id = ?"),
		orderByID:     sel("order", "id = ?"),
		orderByTicket: sel("order", "product_id = ? AND ticket_number = ?"),
		openOrders:    sel("order", "product_id = ? AND ticket_number = ? AND finish_ts IS NULL"),
		payment:       sel("payment", "trans_number = ?"),
		consumeFor:    sel("account_consume", "dst_payment_id = ?"),
		account:       sel("account", "user_eid = ?"),
		accountByID:   sel("account", "id = ?"),
		receiptFor:    sel("account_receipt", "src_order_id = ?").plain,
		transfer:      sel("account_transfer", "trans_number = ?").plain,
		ticketTaken:   s.rebind("SELECT 1 FROM " + table("order") + " WHERE product_id = ? AND ticket_number = ?"),
		paidPlates: s.rebind("SELECT count(*) FROM " + table("order") +
			" WHERE plate_number = ? AND paid_until_ts > ? AND finish_ts IS NULL"),

		insertOrder: insert("order", "product_id, user_eid, ticket_number, plate_number, start_ts, "+
			"paid_until_ts, finish_ts, paid_amount, price"),
		insertPayment:  insert("payment", "trans_number, order_id, ts, hours, amount, payment_ts, cancel_ts"),
		insertAccount:  insert("account", "user_eid, balance, reserved"),
		insertReceipt:  insert("account_receipt", "ts, account_id, src_order_id, amount"),
		insertConsume:  insert("account_consume", "ts, account_id, dst_payment_id, amount, is_reserved"),
		insertTransfer: insert("account_transfer", "ts, trans_number, src_account_id, dst_account_id, amount"),

		setPlaces:          update("product", "places_avail = ?"),
		setPaymentTS:       update("payment", "payment_ts = ?"),
		setCancelTS:        update("payment", "cancel_ts = ?"),
		setOrderPaid:       update("order", "paid_amount = ?, paid_until_ts = ?"),
		setFinish:          update("order", "finish_ts = ?"),
		setReserved:        update("account", "reserved = ?"),
		setBalance:         update("account", "balance = ?"),
		setBalanceReserved: update("account", "balance = ?, reserved = ?"),
		setConsumeReserved: update("account_consume", "is_reserved = ?"),
		setConsumeReleased: update("account_consume", "amount = ?, is_reserved = ?"),
	}
	return s
}

// rebind turns `?` placeholders into PostgreSQL's `$1, $2, ...`.
func (s *store) rebind(q string) string {
	if !s.postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// inTx runs rules in one transaction: commit when they answer, roll back when
// they return an error (an early answer included).
func (s *store) inTx(rules func(*call, *txn) (*reply, error)) func(*call) (*reply, error) {
	return func(c *call) (*reply, error) {
		tx, err := s.db.BeginTx(c.ctx, nil)
		if err != nil {
			return nil, err
		}
		defer tx.Rollback() //nolint:errcheck // a no-op after Commit
		s.logSQL("BEGIN", nil)
		r, err := rules(c, &txn{ctx: c.ctx, tx: tx, s: s})
		if err != nil {
			s.logSQL("ROLLBACK", nil)
			return nil, err
		}
		s.logSQL("COMMIT", nil)
		return r, tx.Commit()
	}
}

func (s *store) logSQL(q string, args []any) {
	if s.sqlLog != nil {
		s.sqlLog.Printf("sql %s %v", q, args)
	}
}

// txn is one request's transaction.
type txn struct {
	ctx context.Context
	tx  *sql.Tx
	s   *store
}

type scanner interface{ Scan(dest ...any) error }

func (t *txn) exec(q string, args ...any) error {
	t.s.logSQL(q, args)
	_, err := t.tx.ExecContext(t.ctx, q, args...)
	return err
}

func (t *txn) row(q string, args ...any) *sql.Row {
	t.s.logSQL(q, args)
	return t.tx.QueryRowContext(t.ctx, q, args...)
}

// insert runs an INSERT and gives the new row's id.
func (t *txn) insert(q string, args ...any) (int64, error) {
	t.s.logSQL(q, args)
	if t.s.postgres {
		var id int64
		err := t.tx.QueryRowContext(t.ctx, q, args...).Scan(&id)
		return id, err
	}
	res, err := t.tx.ExecContext(t.ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// one scans a single row; found is false when there is none.
func one[T any](row *sql.Row, scan func(scanner) (*T, error)) (*T, error) {
	v, err := scan(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return v, err
}

// must is a row that has to exist (a foreign key points at it).
func must[T any](v *T, err error) (*T, error) {
	if err == nil && v == nil {
		return nil, sql.ErrNoRows
	}
	return v, err
}

func scanProduct(r scanner) (*product, error) {
	var p product
	return &p, r.Scan(&p.id, &p.name, &p.displayName, &p.placesAvail, &p.price)
}

func scanOrder(r scanner) (*order, error) {
	var o order
	return &o, r.Scan(&o.id, &o.productID, &o.userEID, &o.ticketNumber, &o.plateNumber, &o.startTS,
		&o.paidUntilTS, &o.finishTS, &o.paidAmount, &o.price)
}

func scanPayment(r scanner) (*payment, error) {
	var p payment
	return &p, r.Scan(&p.id, &p.transNumber, &p.orderID, &p.ts, &p.hours, &p.amount, &p.paymentTS, &p.cancelTS)
}

func scanAccount(r scanner) (*account, error) {
	var a account
	return &a, r.Scan(&a.id, &a.userEID, &a.balance, &a.reserved)
}

func scanReceipt(r scanner) (*receipt, error) {
	var x receipt
	return &x, r.Scan(&x.id, &x.ts, &x.accountID, &x.srcOrderID, &x.amount)
}

func scanConsume(r scanner) (*consume, error) {
	var x consume
	return &x, r.Scan(&x.id, &x.ts, &x.accountID, &x.dstPaymentID, &x.amount, &x.isReserved)
}

func scanTransfer(r scanner) (*transfer, error) {
	var x transfer
	return &x, r.Scan(&x.id, &x.ts, &x.transNumber, &x.srcAccountID, &x.dstAccountID, &x.amount)
}

// --- reads -------------------------------------------------------------------------

func (t *txn) product(name string, lock bool) (*product, error) {
	return one(t.row(t.s.q.product.sql(lock), name), scanProduct)
}

func (t *txn) productByID(id int64, lock bool) (*product, error) {
	return must(one(t.row(t.s.q.productByID.sql(lock), id), scanProduct))
}

func (t *txn) orderByID(id int64, lock bool) (*order, error) {
	return must(one(t.row(t.s.q.orderByID.sql(lock), id), scanOrder))
}

func (t *txn) orderByTicket(productID int64, ticket string, lock bool) (*order, error) {
	return one(t.row(t.s.q.orderByTicket.sql(lock), productID, ticket), scanOrder)
}

func (t *txn) openOrdersByTicket(productID int64, ticket string, lock bool) ([]*order, error) {
	q := t.s.q.openOrders.sql(lock)
	t.s.logSQL(q, []any{productID, ticket})
	rows, err := t.tx.QueryContext(t.ctx, q, productID, ticket)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*order
	for rows.Next() {
		o, err := scanOrder(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

func (t *txn) ticketTaken(productID int64, ticket string) (bool, error) {
	var one int
	err := t.row(t.s.q.ticketTaken, productID, ticket).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (t *txn) paidPlateOrders(plate string, now time.Time) (int64, error) {
	var n int64
	err := t.row(t.s.q.paidPlates, plate, now).Scan(&n)
	return n, err
}

func (t *txn) payment(trans string, lock bool) (*payment, error) {
	return one(t.row(t.s.q.payment.sql(lock), trans), scanPayment)
}

func (t *txn) consumeFor(paymentID int64, lock bool) (*consume, error) {
	return one(t.row(t.s.q.consumeFor.sql(lock), paymentID), scanConsume)
}

func (t *txn) account(userEID string, lock bool) (*account, error) {
	return one(t.row(t.s.q.account.sql(lock), userEID), scanAccount)
}

func (t *txn) accountByID(id int64, lock bool) (*account, error) {
	return must(one(t.row(t.s.q.accountByID.sql(lock), id), scanAccount))
}

func (t *txn) receiptFor(orderID int64) (*receipt, error) {
	return one(t.row(t.s.q.receiptFor, orderID), scanReceipt)
}

func (t *txn) transfer(trans string) (*transfer, error) {
	return one(t.row(t.s.q.transfer, trans), scanTransfer)
}

// --- writes ------------------------------------------------------------------------

func (t *txn) addOrder(o *order) error {
	var err error
	o.id, err = t.insert(t.s.q.insertOrder, o.productID, o.userEID, o.ticketNumber, o.plateNumber,
		o.startTS, o.paidUntilTS, o.finishTS, o.paidAmount, o.price)
	return err
}

func (t *txn) addPayment(p *payment) error {
	var err error
	p.id, err = t.insert(t.s.q.insertPayment, p.transNumber, p.orderID, p.ts, p.hours, p.amount,
		p.paymentTS, p.cancelTS)
	return err
}

// lockOrCreateAccount locks the user's account, inserting it when missing.
func (t *txn) lockOrCreateAccount(userEID string) (*account, error) {
	a, err := t.account(userEID, true)
	if err != nil || a != nil {
		return a, err
	}
	a = &account{userEID: userEID, balance: zero, reserved: zero}
	a.id, err = t.insert(t.s.q.insertAccount, a.userEID, a.balance, a.reserved)
	return a, err
}
