package main

// The spec's checks and answers that need no database, in the spec's order, for
// both Go stacks: each reads, locks and writes its own way (database/sql, GORM)
// and asks these what to answer from what it found. A check returns the early
// answer as an error (see answered), or nil to go on.

import (
	"crypto/rand"
	"math/big"
	"sort"
	"strconv"
	"time"

	"github.com/shopspring/decimal"
)

const (
	grace     = 15 * time.Minute
	ticketMin = 1_000_000_000
	ticketMax = 1_999_999_999
)

// serviceInfoUser: get_service_info's checks before any read (the user id from
// version 1 on, the plate in version 1); the user id.
func serviceInfoUser(c *call) (string, error) {
	userID := c.param("user_id")
	if c.version >= 1 && userID == "" {
		return "", invalid("invalid_user_id")
	}
	if c.version == 1 && c.field("plate") == "" {
		return "", invalid("invalid_registration_plate")
	}
	return userID, nil
}

// reservationRequest: create_reservation's checks before any read; the user id,
// ticket and plate (a plate is needed unless a version 0 call names a ticket).
func reservationRequest(c *call) (userID, ticket, plate string, err error) {
	userID = c.param("user_id")
	if c.version >= 1 && userID == "" {
		return "", "", "", invalid("invalid_user_id")
	}
	ticket, plate = c.field("ticket"), c.field("plate")
	if plate == "" && (c.version >= 1 || ticket == "") {
		return "", "", "", invalid("invalid_registration_plate")
	}
	return userID, ticket, plate, nil
}

// paymentTerms: the price, the part paid from the balance and the transaction id
// of a payment call, checked before any database work.
func paymentTerms(c *call) (price, fromBalance decimal.Decimal, trans string, err error) {
	price, ok := parseDecimal(c.param("price"))
	if !ok {
		return zero, zero, "", refuse(notAvailable, "")
	}
	fromBalance = zero
	if text := c.param("pay_from_balance"); text != "" {
		if fromBalance, ok = parseDecimal(text); !ok {
			return zero, zero, "", refuse(notAvailable, "")
		}
	}
	if fromBalance.IsNegative() || fromBalance.GreaterThan(price) {
		return zero, zero, "", refuse(wrongPrice, "")
	}
	trans = c.param("transaction_id")
	if n := textLen(trans); n < 4 || n > 64 {
		return zero, zero, "", refuse(badTransaction, "")
	}
	return price, fromBalance, trans, nil
}

// replayed answers a payment whose transaction id exists already: success (nothing
// written) when it is the same payment (amount and park), else bad_transaction.
func replayed(same bool) error {
	if same {
		return early(&reply{Status: success})
	}
	return refuse(badTransaction, "")
}

// checkPrice: the price the client computed must be the service's.
func checkPrice(total, price decimal.Decimal) error {
	if !total.Equal(price) {
		return refuse(wrongPrice, "")
	}
	return nil
}

// serviceInfoReply is get_service_info's answer: places, and by version the start,
// duration, paid duration (paid: a ticket's, else nil) and balance (read by
// balance only for version 2; nil: no account yet).
func serviceInfoReply(c *call, places int64, start time.Time, minutes int64, hourly decimal.Decimal,
	paid *int64, balance func() (*decimal.Decimal, error)) (*reply, error) {
	in := &info{AvailablePlaces: ptr(places)}
	if c.version >= 1 {
		in.StartTS, in.Duration, in.PaidDuration = startTS(start), ptr(minutes), paid
	}
	if c.version >= 2 {
		b, err := balance()
		if err != nil {
			return nil, err
		}
		in.Balance = fmtMoney(zero)
		if b != nil {
			in.Balance = fmtMoney(*b)
		}
	}
	return &reply{Status: success, Price: fmtMoney(cost(minutes, hourly)), Info: in}, nil
}

// reservationReply is create_reservation's success: from version 1 on with the
// price, start and duration (a ticket's paid duration is 0 until this is paid).
func reservationReply(c *call, start time.Time, minutes int64, total decimal.Decimal, ticket string) *reply {
	answer := &reply{Status: success}
	if c.version >= 1 {
		answer.Price = fmtMoney(total)
		answer.Info = &info{StartTS: startTS(start), Duration: ptr(minutes)}
		if ticket != "" {
			answer.Info.PaidDuration = ptr(0)
		}
	}
	return answer
}

// checkPayable: pay_reservation's checks on a found payment, in the spec's order:
// already paid (even if cancelled after) is success with no change, before
// cancelled.
func checkPayable(paid, cancelled bool) error {
	if paid {
		return early(&reply{Status: success})
	}
	if cancelled {
		return refuse(badTransaction, "")
	}
	return nil
}

// checkRefundable: stop_service's checks on a paid session: refunded already (the
// same delta again: receipt), nothing left to refund, or no account to credit (a
// version 0 session without user).
func checkRefundable(receipt *decimal.Decimal, paidUntil, now time.Time, userEID string) error {
	if receipt != nil {
		return early(&reply{Status: success, DeltaAmount: fmtMoney(*receipt)})
	}
	if !paidUntil.After(now) {
		return early(&reply{Status: success, DeltaAmount: fmtMoney(zero)})
	}
	if userEID == "" {
		return refuse(badTransaction, "")
	}
	return nil
}

// transferRequest: account_transfer's transaction id, source and destination user
// (all needed), and the users in the order their accounts are locked (user id
// order, so that two opposite transfers cannot deadlock).
func transferRequest(c *call) (trans, srcID, dstID string, lockOrder []string, err error) {
	trans, srcID, dstID = c.param("transaction_id"), c.param("src_user_id"), c.param("dst_user_id")
	if trans == "" || srcID == "" || dstID == "" {
		return "", "", "", nil, refuse(badTransaction, "")
	}
	lockOrder = []string{srcID}
	if dstID != srcID {
		lockOrder = append(lockOrder, dstID)
	}
	sort.Strings(lockOrder)
	return trans, srcID, dstID, lockOrder, nil
}

// checkTransfer: account_transfer's checks once both accounts are locked, in the
// spec's order: one account on both sides; this transaction id done already (done
// reads it: whether it was this very transfer, nil when not done); nothing to
// move; funds still reserved.
func checkTransfer(sameAccounts bool, done func() (*bool, error), balance, reserved decimal.Decimal) error {
	if sameAccounts {
		return refuse(badTransaction, "same_src_and_dst")
	}
	earlier, err := done()
	if err != nil {
		return err
	}
	if earlier != nil {
		if *earlier {
			return refuse(success, "already_done")
		}
		return refuse(badTransaction, "another_trans_exists")
	}
	if !balance.IsPositive() {
		return refuse(success, "nothing_to_transfer")
	}
	if !reserved.IsZero() {
		return refuse(notAvailable, "reserved_funds_present")
	}
	return nil
}

// newTicket draws a random ticket number that taken says is free in the park.
func newTicket(taken func(string) (bool, error)) (string, error) {
	for {
		n, err := rand.Int(rand.Reader, big.NewInt(ticketMax-ticketMin+1))
		if err != nil {
			return "", err
		}
		ticket := strconv.FormatInt(ticketMin+n.Int64(), 10)
		used, err := taken(ticket)
		if err != nil || !used {
			return ticket, err
		}
	}
}

// checkLeaving: leave_parking lets a ticket out when paid, up to the grace period
// past it (never paid: not at all).
func checkLeaving(start, paidUntil, now time.Time) error {
	if neverPaid(start, paidUntil) || !now.Before(paidUntil.Add(grace)) {
		return refuse(notEnoughPaid, "")
	}
	return nil
}
