package main

// The parking rules (spec "Functions") over GORM, checks in the spec's order.
// Each request runs in db.Transaction: an early answer is returned as an error
// (see answered), so GORM rolls the transaction back; a nil error commits. Where
// the spec is silent the choices are the Python services'
// (dbstand.workloads.parking.app).

import (
	"crypto/rand"
	"errors"
	"math/big"
	"sort"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
	"gorm.io/gorm"
)

const (
	grace     = 15 * time.Minute
	ticketMin = 1_000_000_000
	ticketMax = 1_999_999_999
)

type rules func(*call, *gorm.DB) (*reply, error)

// inTx runs r in one transaction of db.
func inTx(db *gorm.DB, r rules) func(*call) (*reply, error) {
	return func(c *call) (*reply, error) {
		var answer *reply
		err := db.WithContext(c.ctx).Transaction(func(tx *gorm.DB) error {
			var err error
			answer, err = r(c, tx)
			return err
		})
		return answer, err
	}
}

func functions(db *gorm.DB) map[string]function {
	return map[string]function{
		"get_service_info":   newFunction("service_descr user_id", notAvailable, inTx(db, getServiceInfo)),
		"create_reservation": newFunction("service_descr price transaction_id user_id pay_from_balance", notAvailable, inTx(db, createReservation)),
		"pay_reservation":    newFunction("transaction_id", badTransaction, inTx(db, payReservation)),
		"cancel_reservation": newFunction("transaction_id", badTransaction, inTx(db, cancelReservation)),
		"stop_service":       newFunction("transaction_id", badTransaction, inTx(db, stopService)),
		"get_user_account":   newFunction("user_id", badTransaction, inTx(db, getUserAccount)),
		"account_transfer":   newFunction("transaction_id src_user_id dst_user_id", badTransaction, inTx(db, accountTransfer)),
		"issue_ticket":       newFunction("parking_id", notAvailable, inTx(db, issueTicket)),
		"leave_parking":      newFunction("parking_id user_ticket", notAvailable, inTx(db, leaveParking)),
		"check_plate_number": newFunction("registration_plate", notAvailable, inTx(db, checkPlateNumber)),
	}
}

// --- queries -----------------------------------------------------------------------

// first is the first row the query finds, or nil when there is none.
func first[T any](q *gorm.DB) (*T, error) {
	var v T
	err := q.First(&v).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// byID is a row a foreign key points at: it must exist.
func byID[T any](tx *gorm.DB, id int64, lock bool) (*T, error) {
	var v T
	if err := forUpdate(tx, lock).First(&v, id).Error; err != nil {
		return nil, err
	}
	return &v, nil
}

func productNamed(tx *gorm.DB, name string, lock bool) (*Product, error) {
	if name == "" {
		return nil, nil
	}
	return first[Product](forUpdate(tx, lock).Where("name = ?", name))
}

func paymentNumbered(tx *gorm.DB, trans string, lock bool) (*Payment, error) {
	if trans == "" {
		return nil, nil
	}
	return first[Payment](forUpdate(tx, lock).Where("trans_number = ?", trans))
}

func accountOf(tx *gorm.DB, userEID string, lock bool) (*Account, error) {
	return first[Account](forUpdate(tx, lock).Where("user_eid = ?", userEID))
}

func consumeFor(tx *gorm.DB, paymentID int64) (*AccountConsume, error) {
	return first[AccountConsume](forUpdate(tx, true).Where("dst_payment_id = ?", paymentID))
}

// lockOrCreateAccount locks the user's account, creating it when missing.
func lockOrCreateAccount(tx *gorm.DB, userEID string) (*Account, error) {
	a, err := accountOf(tx, userEID, true)
	if err != nil || a != nil {
		return a, err
	}
	a = &Account{UserEID: userEID, Balance: zero, Reserved: zero}
	return a, tx.Create(a).Error
}

// --- helpers -----------------------------------------------------------------------

// neverPaid: no paid time on the order (PAID_UNTIL still at START).
func neverPaid(o *Order) bool { return !o.PaidUntilTS.After(o.StartTS) }

func isPlateOrder(o *Order) bool {
	return o.TicketNumber == nil && o.PlateNumber != nil && *o.PlateNumber != ""
}

func ticketOrder(tx *gorm.DB, p *Product, ticket string, lock bool) (*Order, error) {
	o, err := first[Order](forUpdate(tx, lock).Where("product_id = ? AND ticket_number = ?", p.ID, ticket))
	if err != nil {
		return nil, err
	}
	if o == nil {
		return nil, invalid("user_ticket_not_found")
	}
	if o.FinishTS != nil {
		return nil, invalid("user_ticket_out_of_parking")
	}
	return o, nil
}

func ticketMinutes(o *Order, now time.Time) int64 {
	return roundedMinutes(overdueMinutes(o.PaidUntilTS, now), neverPaid(o))
}

// ticketPrice is the hourly price captured on a ticket order.
func ticketPrice(o *Order) (decimal.Decimal, error) {
	if !o.Price.Valid {
		return zero, errors.New("ticket order without a price")
	}
	return o.Price.Decimal, nil
}

// optional is nil for an empty string (a NULL column).
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func addPlaces(tx *gorm.DB, p *Product, n int64) error {
	p.PlacesAvail += n
	return tx.Model(p).Update("places_avail", p.PlacesAvail).Error
}

// --- functions ---------------------------------------------------------------------

// getServiceInfo: price and places for a session or a ticket; read-only.
func getServiceInfo(c *call, tx *gorm.DB) (*reply, error) {
	userID := c.param("user_id")
	if c.version >= 1 && userID == "" {
		return nil, invalid("invalid_user_id")
	}
	if c.version == 1 && c.field("plate") == "" {
		return nil, invalid("invalid_registration_plate")
	}
	p, err := productNamed(tx, c.field("parking"), false)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, invalid("invalid_parking_id")
	}
	var (
		o       *Order
		minutes int64
		hourly  decimal.Decimal
		start   = c.now
	)
	if ticket := c.field("ticket"); ticket != "" {
		if o, err = ticketOrder(tx, p, ticket, false); err != nil {
			return nil, err
		}
		if hourly, err = ticketPrice(o); err != nil {
			return nil, err
		}
		minutes, start = ticketMinutes(o, c.now), o.StartTS
	} else {
		if minutes, err = requestedMinutes(c); err != nil {
			return nil, err
		}
		hourly = p.Price
	}
	in := &info{AvailablePlaces: ptr(p.PlacesAvail)}
	if c.version >= 1 {
		in.StartTS, in.Duration = startTS(start), ptr(minutes)
		if o != nil {
			in.PaidDuration = ptr(minutesBetween(o.StartTS, o.PaidUntilTS))
		}
	}
	if c.version >= 2 {
		a, err := accountOf(tx, userID, false)
		if err != nil {
			return nil, err
		}
		in.Balance = fmtMoney(zero)
		if a != nil {
			in.Balance = fmtMoney(a.Balance)
		}
	}
	return &reply{Status: success, Price: fmtMoney(cost(minutes, hourly)), Info: in}, nil
}

// createReservation: a payment for a new plate session or a ticket's overdue time.
func createReservation(c *call, tx *gorm.DB) (*reply, error) {
	userID := c.param("user_id")
	if c.version >= 1 && userID == "" {
		return nil, invalid("invalid_user_id")
	}
	ticket, plate := c.field("ticket"), c.field("plate")
	if plate == "" && (c.version >= 1 || ticket == "") {
		return nil, invalid("invalid_registration_plate")
	}
	p, err := productNamed(tx, c.field("parking"), true)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, invalid("invalid_parking_id")
	}
	price, ok := parseDecimal(c.param("price"))
	if !ok {
		return nil, refuse(notAvailable, "")
	}
	fromBalance := zero
	if text := c.param("pay_from_balance"); text != "" {
		if fromBalance, ok = parseDecimal(text); !ok {
			return nil, refuse(notAvailable, "")
		}
	}
	if fromBalance.IsNegative() || fromBalance.GreaterThan(price) {
		return nil, refuse(wrongPrice, "")
	}
	trans := c.param("transaction_id")
	if n := textLen(trans); n < 4 || n > 64 {
		return nil, refuse(badTransaction, "")
	}
	existing, err := paymentNumbered(tx, trans, true)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		paid, err := byID[Order](tx, existing.OrderID, false)
		if err != nil {
			return nil, err
		}
		if existing.Amount.Equal(price) && paid.ProductID == p.ID {
			return nil, early(&reply{Status: success})
		}
		return nil, refuse(badTransaction, "")
	}
	var (
		o       *Order
		minutes int64
		hourly  decimal.Decimal
	)
	if ticket != "" {
		if o, err = ticketOrder(tx, p, ticket, true); err != nil {
			return nil, err
		}
		if hourly, err = ticketPrice(o); err != nil {
			return nil, err
		}
		minutes = ticketMinutes(o, c.now)
	} else {
		if minutes, err = requestedMinutes(c); err != nil {
			return nil, err
		}
		hourly = p.Price
	}
	total := cost(minutes, hourly)
	if !total.Equal(price) {
		return nil, refuse(wrongPrice, "")
	}
	if o == nil {
		// a ticket holder already has a place: only new sessions need one
		if p.PlacesAvail <= 0 {
			return nil, refuse(notAvailable, "")
		}
		o = &Order{ProductID: p.ID, UserEID: optional(userID), PlateNumber: optional(plate),
			StartTS: c.now, PaidUntilTS: c.now, PaidAmount: zero}
		if err = tx.Create(o).Error; err != nil {
			return nil, err
		}
	}
	pay := &Payment{TransNumber: trans, OrderID: o.ID, TS: c.now, Hours: hoursOf(minutes), Amount: price}
	if err = tx.Create(pay).Error; err != nil {
		return nil, err
	}
	if fromBalance.IsPositive() {
		if userID == "" {
			return nil, invalid("invalid_user_id")
		}
		a, err := lockOrCreateAccount(tx, userID)
		if err != nil {
			return nil, err
		}
		if a.Balance.Sub(a.Reserved).LessThan(fromBalance) {
			return nil, refuse(notAvailable, "")
		}
		spent := &AccountConsume{TS: c.now, AccountID: a.ID, DstPaymentID: pay.ID, Amount: fromBalance, IsReserved: 1}
		if err = tx.Create(spent).Error; err != nil {
			return nil, err
		}
		if err = tx.Model(a).Update("reserved", a.Reserved.Add(fromBalance)).Error; err != nil {
			return nil, err
		}
	}
	answer := &reply{Status: success}
	if c.version >= 1 {
		answer.Price = fmtMoney(total)
		answer.Info = &info{StartTS: startTS(o.StartTS), Duration: ptr(minutes)}
		if ticket != "" {
			answer.Info.PaidDuration = ptr(0)
		}
	}
	return answer, nil
}

// payReservation: confirm a payment; extend the order, take a place, spend
// reserved balance.
func payReservation(c *call, tx *gorm.DB) (*reply, error) {
	pay, err := paymentNumbered(tx, c.param("transaction_id"), true)
	if err != nil {
		return nil, err
	}
	if pay == nil {
		return nil, refuse(badTransaction, "")
	}
	// the spec's order: already paid (even if cancelled after) before cancelled
	if pay.PaymentTS != nil {
		return nil, early(&reply{Status: success})
	}
	if pay.CancelTS != nil {
		return nil, refuse(badTransaction, "")
	}
	if err = tx.Model(pay).Update("payment_ts", c.now).Error; err != nil {
		return nil, err
	}
	o, err := byID[Order](tx, pay.OrderID, true)
	if err != nil {
		return nil, err
	}
	o.PaidAmount = o.PaidAmount.Add(pay.Amount)
	o.PaidUntilTS = o.PaidUntilTS.Add(hoursDelta(pay.Hours))
	if err = tx.Model(o).Updates(map[string]any{"paid_amount": o.PaidAmount, "paid_until_ts": o.PaidUntilTS}).Error; err != nil {
		return nil, err
	}
	if isPlateOrder(o) && o.FinishTS == nil && o.PaidUntilTS.After(c.now) {
		p, err := byID[Product](tx, o.ProductID, true)
		if err != nil {
			return nil, err
		}
		if err = addPlaces(tx, p, -1); err != nil {
			return nil, err
		}
	}
	spent, err := consumeFor(tx, pay.ID)
	if err != nil {
		return nil, err
	}
	if spent != nil && spent.IsReserved != 0 {
		a, err := byID[Account](tx, spent.AccountID, true)
		if err != nil {
			return nil, err
		}
		update := map[string]any{"balance": a.Balance.Sub(spent.Amount), "reserved": a.Reserved.Sub(spent.Amount)}
		if err = tx.Model(a).Updates(update).Error; err != nil {
			return nil, err
		}
		if err = tx.Model(spent).Update("is_reserved", 0).Error; err != nil {
			return nil, err
		}
	}
	return &reply{Status: success}, nil
}

// cancelReservation: cancel a payment, undo what paying it did, release reserved
// balance.
func cancelReservation(c *call, tx *gorm.DB) (*reply, error) {
	pay, err := paymentNumbered(tx, c.param("transaction_id"), true)
	if err != nil {
		return nil, err
	}
	if pay == nil {
		return nil, refuse(badTransaction, "")
	}
	if pay.CancelTS != nil {
		return nil, early(&reply{Status: success})
	}
	if err = tx.Model(pay).Update("cancel_ts", c.now).Error; err != nil {
		return nil, err
	}
	o, err := byID[Order](tx, pay.OrderID, true)
	if err != nil {
		return nil, err
	}
	if pay.PaymentTS != nil {
		o.PaidAmount = o.PaidAmount.Sub(pay.Amount)
		o.PaidUntilTS = o.PaidUntilTS.Add(-hoursDelta(pay.Hours))
		if err = tx.Model(o).Updates(map[string]any{"paid_amount": o.PaidAmount, "paid_until_ts": o.PaidUntilTS}).Error; err != nil {
			return nil, err
		}
		if isPlateOrder(o) && o.FinishTS == nil && !o.PaidUntilTS.After(c.now) {
			if err = tx.Model(o).Update("finish_ts", c.now).Error; err != nil {
				return nil, err
			}
			p, err := byID[Product](tx, o.ProductID, true)
			if err != nil {
				return nil, err
			}
			if err = addPlaces(tx, p, 1); err != nil {
				return nil, err
			}
		}
	} else if o.TicketNumber == nil && o.FinishTS == nil {
		// a ticket's car is still inside: only a session without ticket is finished
		if err = tx.Model(o).Update("finish_ts", c.now).Error; err != nil {
			return nil, err
		}
	}
	spent, err := consumeFor(tx, pay.ID)
	if err != nil {
		return nil, err
	}
	if spent != nil && spent.IsReserved != 0 {
		a, err := byID[Account](tx, spent.AccountID, true)
		if err != nil {
			return nil, err
		}
		if err = tx.Model(a).Update("reserved", a.Reserved.Sub(spent.Amount)).Error; err != nil {
			return nil, err
		}
		if err = tx.Model(spent).Updates(map[string]any{"amount": zero, "is_reserved": 0}).Error; err != nil {
			return nil, err
		}
	}
	return &reply{Status: success}, nil
}

// stopService: refund unused prepaid quarter hours to the user's account.
func stopService(c *call, tx *gorm.DB) (*reply, error) {
	pay, err := paymentNumbered(tx, c.param("transaction_id"), true)
	if err != nil {
		return nil, err
	}
	if pay == nil || pay.PaymentTS == nil || pay.CancelTS != nil {
		return nil, refuse(badTransaction, "")
	}
	o, err := byID[Order](tx, pay.OrderID, true)
	if err != nil {
		return nil, err
	}
	if o.TicketNumber != nil {
		return nil, refuse(badTransaction, "")
	}
	done, err := first[AccountReceipt](tx.Where("src_order_id = ?", o.ID))
	if err != nil {
		return nil, err
	}
	if done != nil {
		return nil, early(&reply{Status: success, DeltaAmount: fmtMoney(done.Amount)})
	}
	if !o.PaidUntilTS.After(c.now) {
		return nil, early(&reply{Status: success, DeltaAmount: fmtMoney(zero)})
	}
	if o.UserEID == nil || *o.UserEID == "" {
		return nil, refuse(badTransaction, "") // no account to credit (a v0 session without user)
	}
	delta, ok := refund(o.PaidAmount, o.StartTS, o.PaidUntilTS, c.now)
	if !ok {
		return nil, errors.New("order without paid minutes")
	}
	a, err := lockOrCreateAccount(tx, *o.UserEID)
	if err != nil {
		return nil, err
	}
	credit := &AccountReceipt{TS: c.now, AccountID: a.ID, SrcOrderID: o.ID, Amount: delta}
	if err = tx.Create(credit).Error; err != nil {
		return nil, err
	}
	if err = tx.Model(a).Update("balance", a.Balance.Add(delta)).Error; err != nil {
		return nil, err
	}
	update := map[string]any{"paid_amount": o.PaidAmount.Sub(delta), "paid_until_ts": c.now}
	if err = tx.Model(o).Updates(update).Error; err != nil {
		return nil, err
	}
	return &reply{Status: success, DeltaAmount: fmtMoney(delta)}, nil
}

// getUserAccount: the balance; read-only, never creates an account.
func getUserAccount(c *call, tx *gorm.DB) (*reply, error) {
	userID := c.param("user_id")
	if userID == "" {
		return nil, refuse(badTransaction, "")
	}
	a, err := accountOf(tx, userID, false)
	if err != nil {
		return nil, err
	}
	balance := zero
	if a != nil {
		balance = a.Balance
	}
	return &reply{Status: success, Balance: fmtMoney(balance)}, nil
}

// accountTransfer: move a whole balance; every status_code path rolls back.
func accountTransfer(c *call, tx *gorm.DB) (*reply, error) {
	trans, srcID, dstID := c.param("transaction_id"), c.param("src_user_id"), c.param("dst_user_id")
	if trans == "" || srcID == "" || dstID == "" {
		return nil, refuse(badTransaction, "")
	}
	// lock in user id order, so that two opposite transfers cannot deadlock
	ids := []string{srcID}
	if dstID != srcID {
		ids = append(ids, dstID)
	}
	sort.Strings(ids)
	locked := map[string]*Account{}
	for _, id := range ids {
		a, err := lockOrCreateAccount(tx, id)
		if err != nil {
			return nil, err
		}
		locked[id] = a
	}
	src, dst := locked[srcID], locked[dstID]
	if src.ID == dst.ID {
		return nil, refuse(badTransaction, "same_src_and_dst")
	}
	done, err := first[AccountTransfer](tx.Where("trans_number = ?", trans))
	if err != nil {
		return nil, err
	}
	if done != nil {
		if done.SrcAccountID == src.ID && done.DstAccountID == dst.ID {
			return nil, refuse(success, "already_done")
		}
		return nil, refuse(badTransaction, "another_trans_exists")
	}
	if !src.Balance.IsPositive() {
		return nil, refuse(success, "nothing_to_transfer")
	}
	if !src.Reserved.IsZero() {
		return nil, refuse(notAvailable, "reserved_funds_present")
	}
	amount := src.Balance
	if err = tx.Model(src).Update("balance", zero).Error; err != nil {
		return nil, err
	}
	if err = tx.Model(dst).Update("balance", dst.Balance.Add(amount)).Error; err != nil {
		return nil, err
	}
	moved := &AccountTransfer{TS: c.now, TransNumber: trans, SrcAccountID: src.ID, DstAccountID: dst.ID, Amount: amount}
	if err = tx.Create(moved).Error; err != nil {
		return nil, err
	}
	return &reply{Status: success}, nil
}

// issueTicket: a postpaid session, with a random unused ticket number and a place.
func issueTicket(c *call, tx *gorm.DB) (*reply, error) {
	p, err := productNamed(tx, c.param("parking_id"), true)
	if err != nil {
		return nil, err
	}
	if p == nil || p.PlacesAvail <= 0 {
		return nil, refuse(notAvailable, "")
	}
	var ticket string
	for {
		n, err := rand.Int(rand.Reader, big.NewInt(ticketMax-ticketMin+1))
		if err != nil {
			return nil, err
		}
		ticket = strconv.FormatInt(ticketMin+n.Int64(), 10)
		var taken int64
		err = tx.Model(&Order{}).Where("product_id = ? AND ticket_number = ?", p.ID, ticket).Count(&taken).Error
		if err != nil {
			return nil, err
		}
		if taken == 0 {
			break
		}
	}
	o := &Order{ProductID: p.ID, TicketNumber: &ticket, StartTS: c.now, PaidUntilTS: c.now,
		PaidAmount: zero, Price: decimal.NullDecimal{Decimal: p.Price, Valid: true}}
	if err = tx.Create(o).Error; err != nil {
		return nil, err
	}
	if err = addPlaces(tx, p, -1); err != nil {
		return nil, err
	}
	return &reply{Status: success, UserTicket: ticket, AvailablePlaces: ptr(p.PlacesAvail)}, nil
}

// leaveParking: a ticket leaves if paid (15 minutes of grace); its place comes back.
func leaveParking(c *call, tx *gorm.DB) (*reply, error) {
	name, ticket := c.param("parking_id"), c.param("user_ticket")
	var p *Product
	if ticket != "" {
		var err error
		if p, err = productNamed(tx, name, true); err != nil {
			return nil, err
		}
	}
	if p == nil {
		return nil, refuse(notAvailable, "")
	}
	var orders []Order
	err := forUpdate(tx, true).Where("product_id = ? AND ticket_number = ? AND finish_ts IS NULL", p.ID, ticket).Find(&orders).Error
	if err != nil {
		return nil, err
	}
	if len(orders) != 1 {
		return nil, refuse(notAvailable, "")
	}
	o := &orders[0]
	if neverPaid(o) || !c.now.Before(o.PaidUntilTS.Add(grace)) {
		return nil, refuse(notEnoughPaid, "")
	}
	if err = tx.Model(o).Update("finish_ts", c.now).Error; err != nil {
		return nil, err
	}
	if err = addPlaces(tx, p, 1); err != nil {
		return nil, err
	}
	return &reply{Status: success}, nil
}

// checkPlateNumber: whether a plate has an unfinished session paid past now.
func checkPlateNumber(c *call, tx *gorm.DB) (*reply, error) {
	plate := c.param("registration_plate")
	if plate == "" {
		return nil, refuse(notAvailable, "")
	}
	var n int64
	err := tx.Model(&Order{}).Where("plate_number = ? AND paid_until_ts > ? AND finish_ts IS NULL", plate, c.now).Count(&n).Error
	if err != nil {
		return nil, err
	}
	paid := "false"
	if n >= 1 {
		paid = "true"
	}
	return &reply{Status: success, Paid: paid}, nil
}
