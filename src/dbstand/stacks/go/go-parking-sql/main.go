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
	"log"
	"os"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// openDB opens the pool for DBSTAND_DB_KIND.
func openDB(kind string, workers int) (*sql.DB, error) {
	target, err := databaseTarget(kind)
	if err != nil {
		return nil, err
	}
	var db *sql.DB
	if target.mysql != nil {
		connector, err := mysql.NewConnector(target.mysql)
		if err != nil {
			return nil, err
		}
		db = sql.OpenDB(connector)
	} else if db, err = sql.Open("pgx", target.postgres); err != nil {
		return nil, err
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

func main() {
	workers := workersOf("go-parking-sql")
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
	serve(&service{functions: st.functions(), reqLog: reqLog}, kind, workers)
}
