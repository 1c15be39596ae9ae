package main

// What both Go parking stacks do around their rules: read the launcher's DBSTAND_*
// environment (docs/stack-manifest.md), open the request log, and serve HTTP until
// SIGTERM or SIGINT.

import (
	"context"
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

// dbTarget is where DBSTAND_DB_KIND's database is: a driver configuration for
// MariaDB/MySQL, or a URL for PostgreSQL (exactly one of them is set).
type dbTarget struct {
	mysql    *mysql.Config
	postgres string
}

func databaseTarget(kind string) (*dbTarget, error) {
	secret, err := password()
	if err != nil {
		return nil, err
	}
	host := env("DBSTAND_DB_HOST", "127.0.0.1")
	user, name := os.Getenv("DBSTAND_DB_USER"), os.Getenv("DBSTAND_DB_NAME")
	switch kind {
	case "mysql":
		cfg := mysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net = user, secret, "tcp"
		cfg.Addr = net.JoinHostPort(host, env("DBSTAND_DB_PORT", "3306"))
		cfg.DBName = name
		cfg.ParseTime = true         // DATETIME as time.Time ...
		cfg.Loc = time.UTC           // ... holding the local wall clock (pricing.go)
		cfg.InterpolateParams = true // one text query per statement, as PyMySQL sends
		return &dbTarget{mysql: cfg}, nil
	case "postgresql":
		dsn := url.URL{Scheme: "postgres", User: url.UserPassword(user, secret),
			Host: net.JoinHostPort(host, env("DBSTAND_DB_PORT", "5432")), Path: "/" + name}
		return &dbTarget{postgres: dsn.String()}, nil
	}
	return nil, fmt.Errorf("DBSTAND_DB_KIND must be mysql or postgresql, not %q", kind)
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

// workersOf names the process's log lines and reads DBSTAND_WORKERS (the goroutines
// that run at once, GOMAXPROCS, and the connection pool's size).
func workersOf(name string) int {
	log.SetPrefix(name + ": ")
	workers, err := strconv.Atoi(env("DBSTAND_WORKERS", strconv.Itoa(runtime.NumCPU())))
	if err != nil || workers < 1 {
		log.Fatalf("DBSTAND_WORKERS must be a positive integer, not %q", os.Getenv("DBSTAND_WORKERS"))
	}
	runtime.GOMAXPROCS(workers)
	return workers
}

// serve answers on DBSTAND_HOST:DBSTAND_PORT until SIGTERM or SIGINT, then shuts down
// within 5 s.
func serve(handler http.Handler, kind string, workers int) {
	srv := &http.Server{
		Addr:              net.JoinHostPort(env("DBSTAND_HOST", "127.0.0.1"), env("DBSTAND_PORT", "8080")),
		Handler:           handler,
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
