// Command ferretdb runs FerretDB 1.x, embedded as a Go module, as dbstand's managed
// MongoDB-wire server.
//
// MongoDB itself is not in Debian; FerretDB speaks the MongoDB wire protocol and
// stores documents in SQLite or PostgreSQL. This wrapper exists so that dbstand
// builds it with the ordinary Go toolchain from the module proxy, pinned by go.sum,
// and controls exactly what it listens on: one TCP address on 127.0.0.1, nothing
// else (no debug HTTP handler, no telemetry, no state file).
//
// The PostgreSQL password is read from a file (or stdin with "-"), never from argv,
// so that it does not show in the process list.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

const modulePath = "github.com/FerretDB/FerretDB"

// ferretVersion is the version of the FerretDB module linked in ("v1.24.0").
// The embeddable package reports "unknown" itself, so it is read from the build info.
func ferretVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, dep := range info.Deps {
		if dep.Path == modulePath {
			if dep.Replace != nil {
				return dep.Replace.Version
			}
			return dep.Version
		}
	}
	return "unknown"
}

// readPassword reads the first line of path ("-" = stdin), without its line ending.
func readPassword(path string) (string, error) {
	var r io.Reader
	if path == "-" {
		r = os.Stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		r = f
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// postgresURL adds the password to a postgres:// URL that must not carry one.
func postgresURL(raw, passwordFile string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("bad -postgresql-url: %v", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return "", errors.New("-postgresql-url must start with postgres:// or postgresql://")
	}
	if _, has := u.User.Password(); has {
		return "", errors.New("-postgresql-url must not hold a password: use -postgresql-password-file")
	}
	if passwordFile == "" {
		return u.String(), nil
	}
	password, err := readPassword(passwordFile)
	if err != nil {
		return "", fmt.Errorf("cannot read the password: %v", err)
	}
	user := "postgres"
	if u.User != nil && u.User.Username() != "" {
		user = u.User.Username()
	}
	u.User = url.UserPassword(user, password)
	return u.String(), nil
}

func parseLevel(text string) (slog.Level, error) {
	var level slog.Level
	err := level.UnmarshalText([]byte(text))
	return level, err
}

func run() error {
	port := flag.Int("port", 0, "TCP port to listen on, on 127.0.0.1 only (required)")
	handler := flag.String("handler", "sqlite", "storage backend: sqlite or postgresql")
	sqliteDir := flag.String("sqlite-dir", "", "data folder of the sqlite backend")
	pgURL := flag.String("postgresql-url", "", "postgres:// URL of the postgresql backend, without password")
	pgPasswordFile := flag.String("postgresql-password-file", "", "file holding the PostgreSQL password, or - for stdin")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	showVersion := flag.Bool("version", false, "print the FerretDB version and exit")
	flag.Parse()

	if *showVersion {
		fmt.Printf("FerretDB %s\n", strings.TrimPrefix(ferretVersion(), "v"))
		return nil
	}
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", flag.Args())
	}
	if *port <= 0 || *port > 65535 {
		return errors.New("-port is required (1..65535)")
	}
	level, err := parseLevel(*logLevel)
	if err != nil {
		return fmt.Errorf("bad -log-level %q", *logLevel)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	config := ferretdb.Config{
		Listener: ferretdb.ListenerConfig{TCP: net.JoinHostPort("127.0.0.1", strconv.Itoa(*port))},
		Logger:   logger,
		Handler:  *handler,
	}
	switch *handler {
	case "sqlite":
		if *sqliteDir == "" {
			return errors.New("the sqlite handler needs -sqlite-dir")
		}
		if err := os.MkdirAll(*sqliteDir, 0o700); err != nil {
			return err
		}
		config.SQLiteURL = (&url.URL{Scheme: "file", Opaque: strings.TrimSuffix(*sqliteDir, "/") + "/"}).String()
	case "postgresql":
		if *pgURL == "" {
			return errors.New("the postgresql handler needs -postgresql-url")
		}
		if config.PostgreSQLURL, err = postgresURL(*pgURL, *pgPasswordFile); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown -handler %q (sqlite or postgresql)", *handler)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	f, err := ferretdb.New(&config)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "FerretDB %s (%s backend) listening on %s\n",
		strings.TrimPrefix(ferretVersion(), "v"), *handler, config.Listener.TCP)
	if err := f.Run(ctx); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "FerretDB stopped")
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: %v\n", err)
		os.Exit(1)
	}
}
