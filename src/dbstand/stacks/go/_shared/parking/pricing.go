package main

// Pricing, refunds and the clock, as the spec's "Pricing" section and
// stop_service say. Money is exact (shopspring/decimal); answers carry it as
// 2-decimal strings.
//
// Timestamps are local time in whole seconds, stored in DATETIME / TIMESTAMP(0)
// columns without a zone. The service keeps them as the local wall clock held in
// a UTC time.Time: both drivers then write and read the wall clock unchanged, and
// differences between two of them are plain wall-clock differences, as the
// Python services' naive datetimes are.

import (
	"time"

	"github.com/shopspring/decimal"
)

const quarter = 15 // minutes

var (
	sixty = decimal.NewFromInt(60)
	zero  = decimal.Zero
)

// wallNow is the local wall clock, whole seconds, held in UTC.
func wallNow() time.Time {
	t := time.Now()
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
}

// unixSeconds reads a wall-clock stamp as local time, as Unix seconds.
func unixSeconds(wall time.Time) int64 {
	return time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(),
		wall.Second(), 0, time.Local).Unix()
}

// floorDiv is integer division rounding towards minus infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// roundedMinutes rounds up to a quarter hour; 0 counts as 1 minute in a first hour.
func roundedMinutes(minutes int64, firstHour bool) int64 {
	if minutes == 0 && firstHour {
		minutes = 1
	}
	return -floorDiv(-minutes, quarter) * quarter
}

// minutesOfHours is floor(hours * 60), the whole minutes of a version-0 `hours`.
func minutesOfHours(hours decimal.Decimal) int64 {
	return hours.Mul(sixty).Floor().IntPart()
}

// neverPaid: no paid time on an order (PAID_UNTIL still at START).
func neverPaid(start, paidUntil time.Time) bool { return !paidUntil.After(start) }

// ticketMinutes is the rounded minutes a ticket owes now: the time overdue past
// PAID_UNTIL, a first hour's when never paid.
func ticketMinutes(start, paidUntil, now time.Time) int64 {
	return roundedMinutes(overdueMinutes(paidUntil, now), neverPaid(start, paidUntil))
}

// overdueMinutes is the whole minutes past paidUntil (0 if not passed).
func overdueMinutes(paidUntil, now time.Time) int64 {
	seconds := int64(now.Sub(paidUntil) / time.Second)
	if seconds < 0 {
		return 0
	}
	return seconds / 60
}

func minutesBetween(start, end time.Time) int64 {
	return floorDiv(int64(end.Sub(start)/time.Second), 60)
}

// money rounds to cents, half away from zero (Python's ROUND_HALF_UP).
func money(d decimal.Decimal) decimal.Decimal { return d.Round(2) }

// cost of `minutes` at an hourly price, in cents.
func cost(minutes int64, perHour decimal.Decimal) decimal.Decimal {
	return money(decimal.NewFromInt(minutes).Mul(perHour).Div(sixty))
}

// fmtMoney is money in answers: a 2-decimal string.
func fmtMoney(d decimal.Decimal) string { return money(d).StringFixed(2) }

// hoursOf is minutes as the HOURS of a payment (exact for quarter hours).
func hoursOf(minutes int64) decimal.Decimal {
	return decimal.NewFromInt(minutes).DivRound(sixty, 6)
}

// hoursDelta is a payment's HOURS as a duration, in whole seconds.
func hoursDelta(hours decimal.Decimal) time.Duration {
	return time.Duration(hours.Mul(decimal.NewFromInt(3600)).RoundBank(0).IntPart()) * time.Second
}

// refund is stop_service's delta: the unused whole quarter hours at the price per
// minute actually paid, in cents. ok is false when the order has no paid minutes.
func refund(paid decimal.Decimal, start, paidUntil, now time.Time) (decimal.Decimal, bool) {
	secondsLeft := int64(paidUntil.Sub(now) / time.Second)
	minutesLeft := floorDiv(secondsLeft-1, 900) * quarter
	paidMinutes := minutesBetween(start, paidUntil)
	if paidMinutes == 0 {
		return zero, false
	}
	return money(paid.Mul(decimal.NewFromInt(minutesLeft)).Div(decimal.NewFromInt(paidMinutes))), true
}
