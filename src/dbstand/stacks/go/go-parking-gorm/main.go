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
	"log"
	"os"

	"gorm.io/driver/mysql"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	"gorm.io/gorm/schema"
)

// openDB opens GORM on DBSTAND_DB_KIND's dialector, its pool sized to workers.
func openDB(kind, prefix string, workers int, sqlLog *log.Logger) (*gorm.DB, error) {
	target, err := databaseTarget(kind)
	if err != nil {
		return nil, err
	}
	var dialector gorm.Dialector
	if target.mysql != nil {
		dialector = mysql.Open(target.mysql.FormatDSN())
	} else {
		dialector = postgres.Open(target.postgres)
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

func main() {
	workers := workersOf("go-parking-gorm")
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
	serve(&service{functions: functions(db), reqLog: reqLog}, kind, workers)
}
