// Command server is dbstand's webtech stack for Go: net/http from the standard
// library and database/sql with go-sql-driver/mysql, written the way a Go
// programmer would write a small site without a framework.
package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

const (
	hello     = "Hello, World"
	loopCount = 5462 // 5,462 x 12 bytes = 65,544 bytes, just past 64 KiB
	worldRows = 10000
	cacheTTL  = 15 * time.Second
	poolSize  = 20
)

// app holds what the handlers share: built once at start-up.
type app struct {
	db       *sql.DB // nil when the stack runs without a database
	rowSQL   string
	countSQL string
	filePath string
	big      []byte

	mu         sync.Mutex // guards the /cache entry below
	cacheBody  []byte
	cacheUntil time.Time
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// openDB connects to MariaDB; the password is read from its file so that it
// never appears in the environment or on a command line.
func openDB() (*sql.DB, error) {
	if os.Getenv("DBSTAND_DB_KIND") != "mysql" {
		return nil, nil
	}
	secret, err := os.ReadFile(os.Getenv("DBSTAND_DB_PASSWORD_FILE"))
	if err != nil {
		return nil, err
	}
	cfg := mysql.NewConfig()
	cfg.User = os.Getenv("DBSTAND_DB_USER")
	cfg.Passwd = strings.TrimRight(string(secret), "\r\n")
	cfg.Net = "tcp"
	cfg.Addr = env("DBSTAND_DB_HOST", "127.0.0.1") + ":" + env("DBSTAND_DB_PORT", "3306")
	cfg.DBName = os.Getenv("DBSTAND_DB_NAME")
	// Client-side interpolation: one text-protocol round trip per query, as
	// the Python drivers do, instead of prepare + execute + close.
	cfg.InterpolateParams = true
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(poolSize)
	db.SetMaxIdleConns(poolSize)
	return db, db.Ping()
}

// withHeaders adds the Server header every answer must carry (net/http adds
// Date on its own).
func withHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "Go-net/http")
		next.ServeHTTP(w, r)
	})
}

// statusWriter remembers the status and size for the access log.
type statusWriter struct {
	http.ResponseWriter
	status int
	size   int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	n, err := s.ResponseWriter.Write(b)
	s.size += n
	return n, err
}

// withAccessLog writes one line per request, only when logging is on.
func withAccessLog(next http.Handler, logger *log.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		logger.Printf("%s - - [%s] \"%s %s %s\" %d %d %.3fms", r.RemoteAddr,
			start.Format("02/Jan/2006:15:04:05 -0700"), r.Method, r.RequestURI, r.Proto,
			sw.status, sw.size, float64(time.Since(start).Microseconds())/1000)
	})
}

func (a *app) file(w http.ResponseWriter, r *http.Request) {
	http.ServeFile(w, r, a.filePath)
}

func (a *app) hello(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write([]byte(hello))
}

// loop writes the greeting one piece at a time: the test measures the cost
// of many small writes, so the body is never prebuilt.
func (a *app) loop(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	piece := []byte(hello)
	for i := 0; i < loopCount; i++ {
		if _, err := w.Write(piece); err != nil {
			return
		}
	}
}

func (a *app) bigBlock(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Length", strconv.Itoa(len(a.big)))
	w.Write(a.big)
}

// page runs the two SELECTs of the db test and renders them.
func (a *app) page() ([]byte, error) {
	if a.db == nil {
		return nil, fmt.Errorf("no database configured")
	}
	id := rand.IntN(worldRows) + 1
	var rowID, number, count int
	if err := a.db.QueryRow(a.rowSQL, id).Scan(&rowID, &number); err != nil {
		return nil, err
	}
	if err := a.db.QueryRow(a.countSQL).Scan(&count); err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "<!DOCTYPE html><html><head><title>db</title></head><body>"+
		"<p>world id=%d randomnumber=%d</p><p>count=%d</p></body></html>\n", rowID, number, count), nil
}

func (a *app) dbPage(w http.ResponseWriter, r *http.Request) {
	body, err := a.page()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(body)
}

// cached serves the db page from memory while it is younger than 15 s, so a
// fresh answer costs no query; Expires is always 15 s past this answer.
func (a *app) cached(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	a.mu.Lock()
	body := a.cacheBody
	if body == nil || !now.Before(a.cacheUntil) {
		var err error
		if body, err = a.page(); err != nil {
			a.mu.Unlock()
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		a.cacheBody, a.cacheUntil = body, now.Add(cacheTTL)
	}
	a.mu.Unlock()
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "max-age=15")
	h.Set("Expires", now.Add(cacheTTL).UTC().Format(http.TimeFormat))
	w.Write(body)
}

func (a *app) jsonPage(w http.ResponseWriter, r *http.Request) {
	body, _ := json.Marshal(struct {
		Message string `json:"message"`
	}{"Hello, World!"})
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

func (a *app) plaintext(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	w.Write([]byte("Hello, World!"))
}

func main() {
	if n, err := strconv.Atoi(os.Getenv("DBSTAND_WORKERS")); err == nil && n > 0 {
		runtime.GOMAXPROCS(n)
	}
	db, err := openDB()
	if err != nil {
		log.Fatalf("database: %v", err)
	}
	table := env("DBSTAND_PREFIX", "dbstand_") + "world"
	a := &app{
		db:       db,
		rowSQL:   "SELECT id, randomnumber FROM " + table + " WHERE id = ?",
		countSQL: "SELECT COUNT(*) FROM " + table,
		filePath: filepath.Join(os.Getenv("DBSTAND_STATIC_DIR"), "file.html"),
		big:      []byte(strings.Repeat("0123456789abcdef", 4096)),
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /file", a.file)
	mux.HandleFunc("GET /hello", a.hello)
	mux.HandleFunc("GET /loop", a.loop)
	mux.HandleFunc("GET /big", a.bigBlock)
	mux.HandleFunc("GET /db", a.dbPage)
	mux.HandleFunc("GET /cache", a.cached)
	mux.HandleFunc("GET /json", a.jsonPage)
	mux.HandleFunc("GET /plaintext", a.plaintext)
	handler := withHeaders(mux)
	if os.Getenv("DBSTAND_LOGGING") == "1" {
		f, err := os.OpenFile(os.Getenv("DBSTAND_LOG_FILE"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			log.Fatalf("log file: %v", err)
		}
		defer f.Close()
		handler = withAccessLog(handler, log.New(f, "", 0))
	}

	addr := env("DBSTAND_HOST", "127.0.0.1") + ":" + os.Getenv("DBSTAND_PORT")
	log.Printf("go-nethttp listening on %s (GOMAXPROCS=%d)", addr, runtime.GOMAXPROCS(0))
	log.Fatal(http.ListenAndServe(addr, handler))
}
