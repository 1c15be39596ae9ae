package main

// The parking rules (spec "Functions") over GORM, checks in the spec's order.
// Each request runs in db.Transaction: an early answer is returned as an error
// (see answered), so GORM rolls the transaction back; a nil error commits. Where
// the spec is silent the choices are the Python services'
// (dbstand.workloads.parking.app).

import (
	"errors"

	"github.com/shopspring/decimal"
	"gorm.io/gorm"
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
	userID, err := serviceInfoUser(c)
	if err != nil {
		return nil, err
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
		paid    *int64
	)
	if ticket := c.field("ticket"); ticket != "" {
		if o, err = ticketOrder(tx, p, ticket, false); err != nil {
			return nil, err
		}
		if hourly, err = ticketPrice(o); err != nil {
			return nil, err
		}
		minutes, start = ticketMinutes(o.StartTS, o.PaidUntilTS, c.now), o.StartTS
		paid = ptr(minutesBetween(o.StartTS, o.PaidUntilTS))
	} else {
		if minutes, err = requestedMinutes(c); err != nil {
			return nil, err
		}
		hourly = p.Price
	}
	return serviceInfoReply(c, p.PlacesAvail, start, minutes, hourly, paid, func() (*decimal.Decimal, error) {
		a, err := accountOf(tx, userID, false)
		if a == nil || err != nil {
			return nil, err
		}
		return &a.Balance, nil
	})
}

// createReservation: a payment for a new plate session or a ticket's overdue time.
func createReservation(c *call, tx *gorm.DB) (*reply, error) {
	userID, ticket, plate, err := reservationRequest(c)
	if err != nil {
		return nil, err
	}
	p, err := productNamed(tx, c.field("parking"), true)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, invalid("invalid_parking_id")
	}
	price, fromBalance, trans, err := paymentTerms(c)
	if err != nil {
		return nil, err
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
		return nil, replayed(existing.Amount.Equal(price) && paid.ProductID == p.ID)
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
		minutes = ticketMinutes(o.StartTS, o.PaidUntilTS, c.now)
	} else {
		if minutes, err = requestedMinutes(c); err != nil {
			return nil, err
		}
		hourly = p.Price
	}
	total := cost(minutes, hourly)
	if err = checkPrice(total, price); err != nil {
		return nil, err
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
	return reservationReply(c, o.StartTS, minutes, total, ticket), nil
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
	if err = checkPayable(pay.PaymentTS != nil, pay.CancelTS != nil); err != nil {
		return nil, err
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
	var refunded *decimal.Decimal
	if done != nil {
		refunded = &done.Amount
	}
	userEID := ""
	if o.UserEID != nil {
		userEID = *o.UserEID
	}
	if err = checkRefundable(refunded, o.PaidUntilTS, c.now, userEID); err != nil {
		return nil, err
	}
	delta, ok := refund(o.PaidAmount, o.StartTS, o.PaidUntilTS, c.now)
	if !ok {
		return nil, errors.New("order without paid minutes")
	}
	a, err := lockOrCreateAccount(tx, userEID)
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
	trans, srcID, dstID, lockOrder, err := transferRequest(c)
	if err != nil {
		return nil, err
	}
	locked := map[string]*Account{}
	for _, id := range lockOrder {
		a, err := lockOrCreateAccount(tx, id)
		if err != nil {
			return nil, err
		}
		locked[id] = a
	}
	src, dst := locked[srcID], locked[dstID]
	done := func() (*bool, error) {
		earlier, err := first[AccountTransfer](tx.Where("trans_number = ?", trans))
		if earlier == nil || err != nil {
			return nil, err
		}
		same := earlier.SrcAccountID == src.ID && earlier.DstAccountID == dst.ID
		return &same, nil
	}
	if err = checkTransfer(src.ID == dst.ID, done, src.Balance, src.Reserved); err != nil {
		return nil, err
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
	ticket, err := newTicket(func(ticket string) (bool, error) {
		var taken int64
		err := tx.Model(&Order{}).Where("product_id = ? AND ticket_number = ?", p.ID, ticket).Count(&taken).Error
		return taken != 0, err
	})
	if err != nil {
		return nil, err
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
	if err = checkLeaving(o.StartTS, o.PaidUntilTS, c.now); err != nil {
		return nil, err
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
