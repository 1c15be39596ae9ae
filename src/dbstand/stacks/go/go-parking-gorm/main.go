// Command server is dbstand's parking service (specs/parking.md) in Go with an
// ORM: net/http from the standard library and GORM, on gorm.io/driver/mysql for
// MariaDB or gorm.io/driver/postgres (pgx) for PostgreSQL, chosen by
// DBSTAND_DB_KIND. Entities are mapped structs (models.go); each request runs in
// db.Transaction, locking reads with clause.Locking{Strength: "UPDATE"}. Requests
// are served concurrently (one goroutine each) over a pool of DBSTAND_WORKERS
// connections. The tables exist before it starts: dbstand creates them as
// `${DBSTAND_PREFIX}t_product` ... `t_account_transfer` (no AutoMigrate).
package main

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

	drivermysql "github.com/go-sql-driver/mysql"
	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	"gorm.io/gorm/schema"
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

// openDB opens GORM on DBSTAND_DB_KIND's dialector, its pool sized to workers.
func openDB(kind, prefix string, workers int, sqlLog *log.Logger) (*gorm.DB, error) {
	secret, err := password()
	if err != nil {
		return nil, err
	}
	host := env("DBSTAND_DB_HOST", "127.0.0.1")
	user, name := os.Getenv("DBSTAND_DB_USER"), os.Getenv("DBSTAND_DB_NAME")
	var dialector gorm.Dialector
	switch kind {
	case "mysql":
		cfg := drivermysql.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net = user, secret, "tcp"
		cfg.Addr = net.JoinHostPort(host, env("DBSTAND_DB_PORT", "3306"))
		cfg.DBName = name
		cfg.ParseTime = true         // DATETIME as time.Time ...
		cfg.Loc = time.UTC           // ... holding the local wall clock (pricing.go)
		cfg.InterpolateParams = true // one text query per statement, as PyMySQL sends
		dialector = mysql.Open(cfg.FormatDSN())
	case "postgresql":
		dsn := url.URL{Scheme: "postgres", User: url.UserPassword(user, secret),
			Host: net.JoinHostPort(host, env("DBSTAND_DB_PORT", "5432")), Path: "/" + name}
		dialector = postgres.Open(dsn.String())
	default:
		return nil, fmt.Errorf("DBSTAND_DB_KIND must be mysql or postgresql, not %q", kind)
	}
	// statements go to the service log at Info level when logging is on; otherwise
	// only failed statements, to stderr (the launcher's log)
	gormLog := logger.New(log.New(os.Stderr, "go-parking-gorm: ", log.LstdFlags),
		logger.Config{LogLevel: logger.Error, IgnoreRecordNotFoundError: true})
	if sqlLog != nil {
		gormLog = logger.New(sqlLog, logger.Config{LogLevel: logger.Info, IgnoreRecordNotFoundError: true})
	}
	db, err := gorm.Open(dialector, &gorm.Config{
		NamingStrategy: schema.NamingStrategy{TablePrefix: prefix + "t_", SingularTable: true},
		Logger:         gormLog,
	})
	if err != nil {
		return nil, err
	}
	pool, err := db.DB()
	if err != nil {
		return nil, err
	}
	pool.SetMaxOpenConns(workers)
	pool.SetMaxIdleConns(workers)
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
	log.SetPrefix("go-parking-gorm: ")
	workers, err := strconv.Atoi(env("DBSTAND_WORKERS", strconv.Itoa(runtime.NumCPU())))
	if err != nil || workers < 1 {
		log.Fatalf("DBSTAND_WORKERS must be a positive integer, not %q", os.Getenv("DBSTAND_WORKERS"))
	}
	runtime.GOMAXPROCS(workers)
	reqLog, logFile, err := requestLog()
	if err != nil {
		log.Fatalf("cannot open the log: %v", err)
	}
	if logFile != nil {
		defer logFile.Close()
	}
	kind := os.Getenv("DBSTAND_DB_KIND")
	db, err := openDB(kind, env("DBSTAND_PREFIX", "dbstand_"), workers, reqLog)
	if err != nil {
		log.Fatalf("cannot open the database: %v", err)
	}
	if pool, err := db.DB(); err == nil {
		defer pool.Close()
	}
	srv := &http.Server{
		Addr:              net.JoinHostPort(env("DBSTAND_HOST", "127.0.0.1"), env("DBSTAND_PORT", "8080")),
		Handler:           &service{functions: functions(db), reqLog: reqLog},
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
