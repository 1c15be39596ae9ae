// Command server is dbstand's parking service (specs/parking.md) in Go: net/http
// from the standard library and database/sql, with go-sql-driver/mysql for
// MariaDB and pgx's database/sql driver for PostgreSQL, chosen by DBSTAND_DB_KIND.
// Each request is one explicit transaction; locking reads are SELECT ... FOR
// UPDATE. Requests are served concurrently (one goroutine each) over a pool of
// DBSTAND_WORKERS connections. The tables exist before it starts: dbstand
// creates them as `${DBSTAND_PREFIX}t_product` ... `t_account_transfer`.
package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// password reads DBSTAND_DB_PASSWORD_FILE: the password never travels in the
// environment or on a command line.
func password() (string, error) {
	path := os.Getenv("DBSTAND_DB_PASSWORD_FILE")
	if path == "" {
		return "", nil
	}
	secret, err := os.ReadFile(path)
	return strings.TrimRight(string(secret), "\r\n"), err
}

// openDB opens the pool for DBSTAND_DB_KIND.
func openDB(kind string, workers int) (*sql.DB, error) {
	secret, err := password()
	if err != nil {
		return nil, err
	}
	host := env("DBSTAND_DB_HOST", "127.0.0.1")
	user, name := os.Getenv("DBSTAND_DB_USER"), os.Getenv("DBSTAND_DB_NAME")
	var db *sql.DB
	switch kind {
	case "mysql":
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net = user, secret, "tcp"
		cfg.Addr = net.JoinHostPort(host, env("DBSTAND_DB_PORT", "3306"))
		cfg.DBName = name
		cfg.ParseTime = true         // DATETIME as time.Time ...
		cfg.Loc = time.UTC           // ... holding the local wall clock (pricing.go)
		cfg.InterpolateParams = true // one text query per statement, as PyMySQL sends
		connector, err := mysql.NewConnector(cfg)
		if err != nil {
			return nil, err
		}
		db = sql.OpenDB(connector)
	case "postgresql":
		dsn := url.URL{Scheme: "postgres", User: url.UserPassword(user, secret),
			Host: net.JoinHostPort(host, env("DBSTAND_DB_PORT", "5432")), Path: "/" + name}
		if db, err = sql.Open("pgx", dsn.String()); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("DBSTAND_DB_KIND must be mysql or postgresql, not %q", kind)
	}
	db.SetMaxOpenConns(workers)
	db.SetMaxIdleConns(workers)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// requestLog is the service log when DBSTAND_LOGGING=1: every request, every
// answer and every SQL statement with its parameters; nil otherwise.
func requestLog() (*log.Logger, *os.File, error) {
	if os.Getenv("DBSTAND_LOGGING") != "1" {
		return nil, nil, nil
	}
	path := os.Getenv("DBSTAND_LOG_FILE")
	if path == "" {
		return nil, nil, errors.New("DBSTAND_LOGGING=1 needs DBSTAND_LOG_FILE")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	prefix := fmt.Sprintf("%d parking ", os.Getpid())
	return log.New(f, prefix, log.Ldate|log.Ltime|log.Lmicroseconds|log.Lmsgprefix), f, nil
}

func main() {
	log.SetPrefix("go-parking-sql: ")
	workers, err := strconv.Atoi(env("DBSTAND_WORKERS", strconv.Itoa(runtime.NumCPU())))
	if err != nil || workers < 1 {
		log.Fatalf("DBSTAND_WORKERS must be a positive integer, not %q", os.Getenv("DBSTAND_WORKERS"))
	}
	runtime.GOMAXPROCS(workers)
	kind := os.Getenv("DBSTAND_DB_KIND")
	db, err := openDB(kind, workers)
	if err != nil {
		log.Fatalf("cannot open the database: %v", err)
	}
	defer db.Close()
	reqLog, logFile, err := requestLog()
	if err != nil {
		log.Fatalf("cannot open the log: %v", err)
	}
	if logFile != nil {
		defer logFile.Close()
	}
	st := newStore(db, kind, env("DBSTAND_PREFIX", "dbstand_"), reqLog)
	srv := &http.Server{
		Addr:              net.JoinHostPort(env("DBSTAND_HOST", "127.0.0.1"), env("DBSTAND_PORT", "8080")),
		Handler:           &service{functions: st.functions(), reqLog: reqLog},
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan struct{})
	go func() {
		<-stop
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		close(done)
	}()
	log.Printf("listening on %s (%s, %d connections)", srv.Addr, kind, workers)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("%v", err)
	}
	<-done
}
