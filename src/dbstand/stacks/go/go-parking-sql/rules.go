package main

// The parking rules (spec "Functions"), checks in the spec's order. An early
// answer is returned as an error (see answered) so that the transaction rolls
// back; a reply returned with a nil error commits. Where the spec is silent the
// choices are the Python services' (dbstand.workloads.parking.app).

import (
	"database/sql"
	"errors"

	"github.com/shopspring/decimal"
)

func (s *store) functions() map[string]function {
	return map[string]function{
		"get_service_info":   newFunction("service_descr user_id", notAvailable, s.inTx(getServiceInfo)),
		"create_reservation": newFunction("service_descr price transaction_id user_id pay_from_balance", notAvailable, s.inTx(createReservation)),
		"pay_reservation":    newFunction("transaction_id", badTransaction, s.inTx(payReservation)),
		"cancel_reservation": newFunction("transaction_id", badTransaction, s.inTx(cancelReservation)),
		"stop_service":       newFunction("transaction_id", badTransaction, s.inTx(stopService)),
		"get_user_account":   newFunction("user_id", badTransaction, s.inTx(getUserAccount)),
		"account_transfer":   newFunction("transaction_id src_user_id dst_user_id", badTransaction, s.inTx(accountTransfer)),
		"issue_ticket":       newFunction("parking_id", notAvailable, s.inTx(issueTicket)),
		"leave_parking":      newFunction("parking_id user_ticket", notAvailable, s.inTx(leaveParking)),
		"check_plate_number": newFunction("registration_plate", notAvailable, s.inTx(checkPlateNumber)),
	}
}

// --- helpers -----------------------------------------------------------------------

func isPlateOrder(o *order) bool {
	return !o.ticketNumber.Valid && o.plateNumber.Valid && o.plateNumber.String != ""
}

func ticketOrder(t *txn, p *product, ticket string, lock bool) (*order, error) {
	o, err := t.orderByTicket(p.id, ticket, lock)
	if err != nil {
		return nil, err
	}
	if o == nil {
		return nil, invalid("user_ticket_not_found")
	}
	if o.finishTS.Valid {
		return nil, invalid("user_ticket_out_of_parking")
	}
	return o, nil
}

// ticketPrice is the hourly price captured on a ticket order.
func ticketPrice(o *order) (decimal.Decimal, error) {
	if !o.price.Valid {
		return zero, errors.New("ticket order without a price")
	}
	return o.price.Decimal, nil
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

func giveThePlaceBack(t *txn, o *order) error {
	p, err := t.productByID(o.productID, true)
	if err != nil {
		return err
	}
	return t.exec(t.s.q.setPlaces, p.placesAvail+1, p.id)
}

// --- functions ---------------------------------------------------------------------

// getServiceInfo: price and places for a session or a ticket; read-only.
func getServiceInfo(c *call, t *txn) (*reply, error) {
	userID, err := serviceInfoUser(c)
	if err != nil {
		return nil, err
	}
	var p *product
	if name := c.field("parking"); name != "" {
		if p, err = t.product(name, false); err != nil {
			return nil, err
		}
	}
	if p == nil {
		return nil, invalid("invalid_parking_id")
	}
	var (
		o       *order
		minutes int64
		hourly  decimal.Decimal
		start   = c.now
		paid    *int64
	)
	if ticket := c.field("ticket"); ticket != "" {
		if o, err = ticketOrder(t, p, ticket, false); err != nil {
			return nil, err
		}
		if hourly, err = ticketPrice(o); err != nil {
			return nil, err
		}
		minutes, start = ticketMinutes(o.startTS, o.paidUntilTS, c.now), o.startTS
		paid = ptr(minutesBetween(o.startTS, o.paidUntilTS))
	} else {
		if minutes, err = requestedMinutes(c); err != nil {
			return nil, err
		}
		hourly = p.price
	}
	return serviceInfoReply(c, p.placesAvail, start, minutes, hourly, paid, func() (*decimal.Decimal, error) {
		a, err := t.account(userID, false)
		if a == nil || err != nil {
			return nil, err
		}
		return &a.balance, nil
	})
}

// createReservation: a payment for a new plate session or a ticket's overdue time.
func createReservation(c *call, t *txn) (*reply, error) {
	userID, ticket, plate, err := reservationRequest(c)
	if err != nil {
		return nil, err
	}
	var p *product
	if name := c.field("parking"); name != "" {
		if p, err = t.product(name, true); err != nil {
			return nil, err
		}
	}
	if p == nil {
		return nil, invalid("invalid_parking_id")
	}
	price, fromBalance, trans, err := paymentTerms(c)
	if err != nil {
		return nil, err
	}
	existing, err := t.payment(trans, true)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		paid, err := t.orderByID(existing.orderID, false)
		if err != nil {
			return nil, err
		}
		return nil, replayed(existing.amount.Equal(price) && paid.productID == p.id)
	}
	var (
		o       *order
		minutes int64
		hourly  decimal.Decimal
	)
	if ticket != "" {
		if o, err = ticketOrder(t, p, ticket, true); err != nil {
			return nil, err
		}
		if hourly, err = ticketPrice(o); err != nil {
			return nil, err
		}
		minutes = ticketMinutes(o.startTS, o.paidUntilTS, c.now)
	} else {
		if minutes, err = requestedMinutes(c); err != nil {
			return nil, err
		}
		hourly = p.price
	}
	total := cost(minutes, hourly)
	if err = checkPrice(total, price); err != nil {
		return nil, err
	}
	if o == nil {
		// a ticket holder already has a place: only new sessions need one
		if p.placesAvail <= 0 {
			return nil, refuse(notAvailable, "")
		}
		o = &order{productID: p.id, userEID: nullString(userID), plateNumber: nullString(plate),
			startTS: c.now, paidUntilTS: c.now, paidAmount: zero}
		if err = t.addOrder(o); err != nil {
			return nil, err
		}
	}
	pay := &payment{transNumber: trans, orderID: o.id, ts: c.now, hours: hoursOf(minutes), amount: price}
	if err = t.addPayment(pay); err != nil {
		return nil, err
	}
	if fromBalance.IsPositive() {
		if userID == "" {
			return nil, invalid("invalid_user_id")
		}
		a, err := t.lockOrCreateAccount(userID)
		if err != nil {
			return nil, err
		}
		if a.balance.Sub(a.reserved).LessThan(fromBalance) {
			return nil, refuse(notAvailable, "")
		}
		if _, err = t.insert(t.s.q.insertConsume, c.now, a.id, pay.id, fromBalance, 1); err != nil {
			return nil, err
		}
		if err = t.exec(t.s.q.setReserved, a.reserved.Add(fromBalance), a.id); err != nil {
			return nil, err
		}
	}
	return reservationReply(c, o.startTS, minutes, total, ticket), nil
}

// payReservation: confirm a payment; extend the order, take a place, spend
// reserved balance.
func payReservation(c *call, t *txn) (*reply, error) {
	var pay *payment
	if trans := c.param("transaction_id"); trans != "" {
		var err error
		if pay, err = t.payment(trans, true); err != nil {
			return nil, err
		}
	}
	if pay == nil {
		return nil, refuse(badTransaction, "")
	}
	if err := checkPayable(pay.paymentTS.Valid, pay.cancelTS.Valid); err != nil {
		return nil, err
	}
	if err := t.exec(t.s.q.setPaymentTS, c.now, pay.id); err != nil {
		return nil, err
	}
	o, err := t.orderByID(pay.orderID, true)
	if err != nil {
		return nil, err
	}
	o.paidAmount = o.paidAmount.Add(pay.amount)
	o.paidUntilTS = o.paidUntilTS.Add(hoursDelta(pay.hours))
	if err = t.exec(t.s.q.setOrderPaid, o.paidAmount, o.paidUntilTS, o.id); err != nil {
		return nil, err
	}
	if isPlateOrder(o) && !o.finishTS.Valid && o.paidUntilTS.After(c.now) {
		p, err := t.productByID(o.productID, true)
		if err != nil {
			return nil, err
		}
		if err = t.exec(t.s.q.setPlaces, p.placesAvail-1, p.id); err != nil {
			return nil, err
		}
	}
	x, err := t.consumeFor(pay.id, true)
	if err != nil {
		return nil, err
	}
	if x != nil && x.isReserved != 0 {
		a, err := t.accountByID(x.accountID, true)
		if err != nil {
			return nil, err
		}
		if err = t.exec(t.s.q.setBalanceReserved, a.balance.Sub(x.amount), a.reserved.Sub(x.amount), a.id); err != nil {
			return nil, err
		}
		if err = t.exec(t.s.q.setConsumeReserved, 0, x.id); err != nil {
			return nil, err
		}
	}
	return &reply{Status: success}, nil
}

// cancelReservation: cancel a payment, undo what paying it did, release reserved
// balance.
func cancelReservation(c *call, t *txn) (*reply, error) {
	var pay *payment
	if trans := c.param("transaction_id"); trans != "" {
		var err error
		if pay, err = t.payment(trans, true); err != nil {
			return nil, err
		}
	}
	if pay == nil {
		return nil, refuse(badTransaction, "")
	}
	if pay.cancelTS.Valid {
		return nil, early(&reply{Status: success})
	}
	if err := t.exec(t.s.q.setCancelTS, c.now, pay.id); err != nil {
		return nil, err
	}
	o, err := t.orderByID(pay.orderID, true)
	if err != nil {
		return nil, err
	}
	if pay.paymentTS.Valid {
		o.paidAmount = o.paidAmount.Sub(pay.amount)
		o.paidUntilTS = o.paidUntilTS.Add(-hoursDelta(pay.hours))
		if err = t.exec(t.s.q.setOrderPaid, o.paidAmount, o.paidUntilTS, o.id); err != nil {
			return nil, err
		}
		if isPlateOrder(o) && !o.finishTS.Valid && !o.paidUntilTS.After(c.now) {
			if err = t.exec(t.s.q.setFinish, c.now, o.id); err != nil {
				return nil, err
			}
			if err = giveThePlaceBack(t, o); err != nil {
				return nil, err
			}
		}
	} else if !o.ticketNumber.Valid && !o.finishTS.Valid {
		// a ticket's car is still inside: only a session without ticket is finished
		if err = t.exec(t.s.q.setFinish, c.now, o.id); err != nil {
			return nil, err
		}
	}
	x, err := t.consumeFor(pay.id, true)
	if err != nil {
		return nil, err
	}
	if x != nil && x.isReserved != 0 {
		a, err := t.accountByID(x.accountID, true)
		if err != nil {
			return nil, err
		}
		if err = t.exec(t.s.q.setReserved, a.reserved.Sub(x.amount), a.id); err != nil {
			return nil, err
		}
		if err = t.exec(t.s.q.setConsumeReleased, zero, 0, x.id); err != nil {
			return nil, err
		}
	}
	return &reply{Status: success}, nil
}

// stopService: refund unused prepaid quarter hours to the user's account.
func stopService(c *call, t *txn) (*reply, error) {
	var pay *payment
	if trans := c.param("transaction_id"); trans != "" {
		var err error
		if pay, err = t.payment(trans, true); err != nil {
			return nil, err
		}
	}
	if pay == nil || !pay.paymentTS.Valid || pay.cancelTS.Valid {
		return nil, refuse(badTransaction, "")
	}
	o, err := t.orderByID(pay.orderID, true)
	if err != nil {
		return nil, err
	}
	if o.ticketNumber.Valid {
		return nil, refuse(badTransaction, "")
	}
	done, err := t.receiptFor(o.id)
	if err != nil {
		return nil, err
	}
	var refunded *decimal.Decimal
	if done != nil {
		refunded = &done.amount
	}
	if err = checkRefundable(refunded, o.paidUntilTS, c.now, o.userEID.String); err != nil {
		return nil, err
	}
	delta, ok := refund(o.paidAmount, o.startTS, o.paidUntilTS, c.now)
	if !ok {
		return nil, errors.New("order without paid minutes")
	}
	a, err := t.lockOrCreateAccount(o.userEID.String)
	if err != nil {
		return nil, err
	}
	if _, err = t.insert(t.s.q.insertReceipt, c.now, a.id, o.id, delta); err != nil {
		return nil, err
	}
	if err = t.exec(t.s.q.setBalance, a.balance.Add(delta), a.id); err != nil {
		return nil, err
	}
	if err = t.exec(t.s.q.setOrderPaid, o.paidAmount.Sub(delta), c.now, o.id); err != nil {
		return nil, err
	}
	return &reply{Status: success, DeltaAmount: fmtMoney(delta)}, nil
}

// getUserAccount: the balance; read-only, never creates an account.
func getUserAccount(c *call, t *txn) (*reply, error) {
	userID := c.param("user_id")
	if userID == "" {
		return nil, refuse(badTransaction, "")
	}
	a, err := t.account(userID, false)
	if err != nil {
		return nil, err
	}
	balance := zero
	if a != nil {
		balance = a.balance
	}
	return &reply{Status: success, Balance: fmtMoney(balance)}, nil
}

// accountTransfer: move a whole balance; every status_code path rolls back.
func accountTransfer(c *call, t *txn) (*reply, error) {
	trans, srcID, dstID, lockOrder, err := transferRequest(c)
	if err != nil {
		return nil, err
	}
	locked := map[string]*account{}
	for _, id := range lockOrder {
		a, err := t.lockOrCreateAccount(id)
		if err != nil {
			return nil, err
		}
		locked[id] = a
	}
	src, dst := locked[srcID], locked[dstID]
	done := func() (*bool, error) {
		earlier, err := t.transfer(trans)
		if earlier == nil || err != nil {
			return nil, err
		}
		same := earlier.srcAccountID == src.id && earlier.dstAccountID == dst.id
		return &same, nil
	}
	if err = checkTransfer(src.id == dst.id, done, src.balance, src.reserved); err != nil {
		return nil, err
	}
	amount := src.balance
	if err = t.exec(t.s.q.setBalance, zero, src.id); err != nil {
		return nil, err
	}
	if err = t.exec(t.s.q.setBalance, dst.balance.Add(amount), dst.id); err != nil {
		return nil, err
	}
	if _, err = t.insert(t.s.q.insertTransfer, c.now, trans, src.id, dst.id, amount); err != nil {
		return nil, err
	}
	return &reply{Status: success}, nil
}

// issueTicket: a postpaid session, with a random unused ticket number and a place.
func issueTicket(c *call, t *txn) (*reply, error) {
	var p *product
	if name := c.param("parking_id"); name != "" {
		var err error
		if p, err = t.product(name, true); err != nil {
			return nil, err
		}
	}
	if p == nil || p.placesAvail <= 0 {
		return nil, refuse(notAvailable, "")
	}
	ticket, err := newTicket(func(ticket string) (bool, error) { return t.ticketTaken(p.id, ticket) })
	if err != nil {
		return nil, err
	}
	o := &order{productID: p.id, ticketNumber: nullString(ticket), startTS: c.now, paidUntilTS: c.now,
		paidAmount: zero, price: decimal.NullDecimal{Decimal: p.price, Valid: true}}
	if err := t.addOrder(o); err != nil {
		return nil, err
	}
	places := p.placesAvail - 1
	if err := t.exec(t.s.q.setPlaces, places, p.id); err != nil {
		return nil, err
	}
	return &reply{Status: success, UserTicket: ticket, AvailablePlaces: ptr(places)}, nil
}

// leaveParking: a ticket leaves if paid (15 minutes of grace); its place comes back.
func leaveParking(c *call, t *txn) (*reply, error) {
	name, ticket := c.param("parking_id"), c.param("user_ticket")
	var p *product
	if name != "" && ticket != "" {
		var err error
		if p, err = t.product(name, true); err != nil {
			return nil, err
		}
	}
	if p == nil {
		return nil, refuse(notAvailable, "")
	}
	orders, err := t.openOrdersByTicket(p.id, ticket, true)
	if err != nil {
		return nil, err
	}
	if len(orders) != 1 {
		return nil, refuse(notAvailable, "")
	}
	o := orders[0]
	if err = checkLeaving(o.startTS, o.paidUntilTS, c.now); err != nil {
		return nil, err
	}
	if err = t.exec(t.s.q.setFinish, c.now, o.id); err != nil {
		return nil, err
	}
	if err = t.exec(t.s.q.setPlaces, p.placesAvail+1, p.id); err != nil {
		return nil, err
	}
	return &reply{Status: success}, nil
}

// checkPlateNumber: whether a plate has an unfinished session paid past now.
func checkPlateNumber(c *call, t *txn) (*reply, error) {
	plate := c.param("registration_plate")
	if plate == "" {
		return nil, refuse(notAvailable, "")
	}
	n, err := t.paidPlateOrders(plate, c.now)
	if err != nil {
		return nil, err
	}
	paid := "false"
	if n >= 1 {
		paid = "true"
	}
	return &reply{Status: success, Paid: paid}, nil
}
