package main

// The wire protocol of the parking service (spec "Transport" and "How refusals
// are spelled"): GET or POST /<function>, JSON answers with `status` and `ts`,
// protocol versions 0..2, the default error status of each function, and the
// request cycle around one transaction with lock conflicts run again.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shopspring/decimal"
)

const (
	success        = "success"
	notAvailable   = "not_available"
	badTransaction = "bad_transaction"
	badProtocol    = "bad_protocol"
	wrongPrice     = "wrong_price"
	notEnoughPaid  = "not_enough_paid"
	retries        = 5 // attempts of a request picked as a deadlock victim
)

// info is the `info` object of get_service_info and create_reservation.
type info struct {
	AvailablePlaces *int64 `json:"available_places,omitempty"`
	StartTS         string `json:"start_ts,omitempty"`
	Duration        *int64 `json:"duration,omitempty"`
	PaidDuration    *int64 `json:"paid_duration,omitempty"`
	Balance         string `json:"balance,omitempty"`
}

// reply is every answer the service gives; empty fields are left out.
type reply struct {
	Status          string `json:"status"`
	StatusCode      string `json:"status_code,omitempty"`
	Error           string `json:"error,omitempty"`
	Price           string `json:"price,omitempty"`
	Info            *info  `json:"info,omitempty"`
	Balance         string `json:"balance,omitempty"`
	DeltaAmount     string `json:"delta_amount,omitempty"`
	UserTicket      string `json:"user_ticket,omitempty"`
	AvailablePlaces *int64 `json:"available_places,omitempty"`
	Paid            string `json:"paid,omitempty"`
	TS              string `json:"ts"`
}

// answered is an answer decided before the end of a function: it leaves the
// rules as an error so that its transaction rolls back (every refusal, and the
// successes that write nothing: idempotent replays, status_code paths).
type answered struct{ reply *reply }

func (a *answered) Error() string { return "answered early: " + a.reply.Status }

// refuse answers a status, with status_code when code is not empty.
func refuse(status, code string) error {
	return &answered{&reply{Status: status, StatusCode: code}}
}

// invalid is a validation refusal: status not_available, the reason in status_code.
func invalid(reason string) error { return refuse(notAvailable, reason) }

// early answers r and rolls back.
func early(r *reply) error { return &answered{r} }

// call is one request as the rules see it.
type call struct {
	ctx     context.Context
	version int
	params  map[string]string
	descr   map[string]string
	now     time.Time
}

// descrKeys: logical field -> service_descr key, by protocol version.
var descrKeys = [3]map[string]string{
	{"parking": "parking_object_id", "plate": "plate_number", "duration": "hours", "ticket": "user_ticket"},
	{"parking": "parking_id", "plate": "registration_plate", "duration": "duration", "ticket": "user_ticket"},
	{"parking": "parking_id", "plate": "registration_plate", "duration": "duration", "ticket": "user_ticket"},
}

func (c *call) param(name string) string { return c.params[name] }
func (c *call) field(name string) string { return c.descr[descrKeys[c.version][name]] }

// function is one entry of the dispatch table.
type function struct {
	params       map[string]bool // accepted besides `version`
	defaultError string          // unexpected parameter or failure
	run          func(*call) (*reply, error)
}

func newFunction(params, defaultError string, run func(*call) (*reply, error)) function {
	accepted := map[string]bool{}
	for _, p := range strings.Fields(params) {
		accepted[p] = true
	}
	return function{accepted, defaultError, run}
}

// parseVersion is the protocol version: absent or empty is 0; ok false when not 0..2.
func parseVersion(text string) (int, bool) {
	if text == "" {
		return 0, true
	}
	for _, r := range text {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	v, err := strconv.Atoi(text)
	if err != nil || v > 2 {
		return 0, false
	}
	return v, true
}

// parseDescr reads service_descr: a JSON object whose values are all strings.
func parseDescr(text string) (map[string]string, error) {
	var raw map[string]any
	if err := json.Unmarshal([]byte(text), &raw); err != nil || raw == nil {
		return nil, errors.New("malformed service_descr: expected a JSON object")
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		s, ok := v.(string)
		if !ok {
			return nil, errors.New("malformed service_descr: expected a JSON object of strings")
		}
		out[k] = s
	}
	return out, nil
}

// parseDecimal is a finite decimal number; ok false otherwise.
func parseDecimal(text string) (decimal.Decimal, bool) {
	d, err := decimal.NewFromString(strings.TrimSpace(text))
	return d, err == nil
}

// parsePositiveInt is an integer of digits only, > 0.
func parsePositiveInt(text string) (int64, bool) {
	if text == "" {
		return 0, false
	}
	for _, r := range text {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(text, 10, 64)
	return n, err == nil && n > 0
}

func textLen(s string) int { return utf8.RuneCountInString(s) }

// isConflict: a deadlock or lock wait timeout (MariaDB 1213/1205) or a deadlock
// or serialization failure (PostgreSQL 40P01/40001): the request is run again.
func isConflict(err error) bool {
	var my *mysql.MySQLError
	if errors.As(err, &my) {
		return my.Number == 1213 || my.Number == 1205
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "40P01" || pg.Code == "40001"
	}
	return false
}

// service answers requests from its dispatch table.
type service struct {
	functions map[string]function
	reqLog    *log.Logger // nil when logging is off
}

// handle answers one call: HTTP status and answer (without `ts`).
func (s *service) handle(ctx context.Context, name string, params map[string]string) (int, *reply) {
	f, ok := s.functions[name]
	if !ok {
		return http.StatusInternalServerError, &reply{Status: "error", Error: fmt.Sprintf("unknown function %q", name)}
	}
	var descr map[string]string
	if text, given := params["service_descr"]; given && f.params["service_descr"] {
		var err error
		if descr, err = parseDescr(text); err != nil {
			return http.StatusInternalServerError, &reply{Status: "error", Error: err.Error()}
		}
	}
	for p := range params {
		if p != "version" && !f.params[p] {
			return http.StatusOK, &reply{Status: f.defaultError}
		}
	}
	version, ok := parseVersion(params["version"])
	if !ok {
		return http.StatusOK, &reply{Status: badProtocol}
	}
	c := &call{ctx: ctx, version: version, params: params, descr: descr, now: wallNow()}
	for attempt := 1; attempt <= retries; attempt++ {
		r, err := f.run(c)
		if err == nil {
			return http.StatusOK, r
		}
		var a *answered
		if errors.As(err, &a) {
			return http.StatusOK, a.reply
		}
		if attempt < retries && isConflict(err) {
			log.Printf("%s: lock conflict, running it again (%v)", name, err)
			s.logf("%s: lock conflict, running it again (%v)", name, err)
			continue
		}
		log.Printf("%s failed: %v", name, err)
		break
	}
	return http.StatusOK, &reply{Status: f.defaultError}
}

func (s *service) logf(format string, args ...any) {
	if s.reqLog != nil {
		s.reqLog.Printf(format, args...)
	}
}

// requestParams: the query string, then a POST form body (the last value of a
// repeated name wins, the body over the query).
func requestParams(r *http.Request) map[string]string {
	params := map[string]string{}
	query, _ := url.ParseQuery(r.URL.RawQuery)
	for k, v := range query {
		params[k] = v[len(v)-1]
	}
	if r.Method == http.MethodPost {
		_ = r.ParseForm()
		for k, v := range r.PostForm {
			params[k] = v[len(v)-1]
		}
	}
	return params
}

func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.reqLog != nil {
		s.reqLog.Printf("request %s %s?%s", r.Method, r.URL.Path, r.URL.RawQuery)
	}
	code, answer := http.StatusMethodNotAllowed, &reply{Status: "error", Error: "method " + r.Method + " not allowed"}
	if r.Method == http.MethodGet || r.Method == http.MethodPost {
		code, answer = s.handle(r.Context(), strings.TrimPrefix(r.URL.Path, "/"), requestParams(r))
	}
	answer.TS = strconv.FormatFloat(float64(time.Now().UnixNano())/1e9, 'f', 3, 64)
	body, err := json.Marshal(answer)
	if err != nil {
		code, body = http.StatusInternalServerError, []byte(`{"status":"error"}`)
	}
	if s.reqLog != nil {
		s.reqLog.Printf("answer %d %s", code, body)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// requestedMinutes: the rounded minutes of a session without ticket.
func requestedMinutes(c *call) (int64, error) {
	text := c.field("duration")
	var minutes int64
	if c.version == 0 {
		hours, ok := parseDecimal(text)
		if !ok || !hours.IsPositive() {
			return 0, invalid("invalid_duration")
		}
		minutes = minutesOfHours(hours)
	} else {
		n, ok := parsePositiveInt(text)
		if !ok {
			return 0, invalid("invalid_duration")
		}
		minutes = n
	}
	return roundedMinutes(minutes, true), nil
}

func startTS(t time.Time) string { return strconv.FormatInt(unixSeconds(t), 10) + ".000" }

func ptr(n int64) *int64 { return &n }
