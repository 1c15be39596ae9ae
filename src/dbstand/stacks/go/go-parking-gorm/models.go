package main

// The mapped classes of the parking data model. Tables are named by GORM's
// naming strategy (prefix + "t_" + the singular snake_case type name, e.g.
// dbstand_t_account_receipt); columns follow GORM's snake_case except where the
// spec's names need a tag. Money is decimal(16,6); timestamps hold the local
// wall clock (pricing.go).

import (
	"time"

	"github.com/shopspring/decimal"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Product is a car park.
type Product struct {
	ID          int64
	Name        string
	DisplayName *string
	PlacesAvail int64
	Price       decimal.Decimal `gorm:"type:decimal(16,6)"`
}

// Order is a parking session: a plate paid ahead, or a ticket paid on leaving.
type Order struct {
	ID           int64
	ProductID    int64
	UserEID      *string `gorm:"column:user_eid"`
	TicketNumber *string
	PlateNumber  *string
	StartTS      time.Time  `gorm:"column:start_ts"`
	PaidUntilTS  time.Time  `gorm:"column:paid_until_ts"`
	FinishTS     *time.Time `gorm:"column:finish_ts"`
	PaidAmount   decimal.Decimal
	Price        decimal.NullDecimal // the hourly price captured when a ticket is issued
}

// Payment is a reservation of paid time, paid or cancelled later.
type Payment struct {
	ID          int64
	TransNumber string
	OrderID     int64
	TS          time.Time `gorm:"column:ts"`
	Hours       decimal.Decimal
	Amount      decimal.Decimal
	PaymentTS   *time.Time `gorm:"column:payment_ts"`
	CancelTS    *time.Time `gorm:"column:cancel_ts"`
}

// Account is a user's balance, part of it possibly reserved for payments.
type Account struct {
	ID       int64
	UserEID  string `gorm:"column:user_eid"`
	Balance  decimal.Decimal
	Reserved decimal.Decimal
}

// AccountReceipt is a refund credited to an account.
type AccountReceipt struct {
	ID         int64
	TS         time.Time `gorm:"column:ts"`
	AccountID  int64
	SrcOrderID int64
	Amount     decimal.Decimal
}

// AccountConsume is balance spent on a payment (reserved until it is paid).
type AccountConsume struct {
	ID           int64
	TS           time.Time `gorm:"column:ts"`
	AccountID    int64
	DstPaymentID int64
	Amount       decimal.Decimal
	IsReserved   int
}

// AccountTransfer moves a whole balance from one account to another.
type AccountTransfer struct {
	ID           int64
	TS           time.Time `gorm:"column:ts"`
	TransNumber  string
	SrcAccountID int64
	DstAccountID int64
	Amount       decimal.Decimal
}

// forUpdate adds FOR UPDATE to the query when lock is set.
func forUpdate(tx *gorm.DB, lock bool) *gorm.DB {
	if lock {
		return tx.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	return tx
}
