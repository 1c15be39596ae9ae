// The Toxiproxy server as dbstand runs it: Toxiproxy v2.5.0's own API server and
// toxics, plus one toxic of dbstand's, "delay", registered through Toxiproxy's toxic
// registry (its documented way to extend it). Toxiproxy's "latency" toxic counts whole
// milliseconds; a round trip of 0.2 ms needs 100 µs each way, so "delay" takes
// microseconds. Like "latency", each chunk leaves `delay_us` after it was read, so
// chunks in flight overlap (a delay, not a bandwidth limit).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// maxLate bounds one wake-up's lateness as the toxic's running mean counts it.
const maxLate = 100 * time.Microsecond

// DelayToxic holds every chunk until DelayUs microseconds after it was read. With a
// Meter name, the toxics of both directions of a proxy also count its turns: an
// answer chunk after a request chunk is one round trip of a client that waits for
// each answer (read back as the "turns" attribute).
type DelayToxic struct {
	DelayUs   int64  `json:"delay_us"`
	Meter     string `json:"meter"`
	Direction string `json:"direction"` // "request" or "answer"
}

// turnMeter counts the request-then-answer alternations of one proxy.
type turnMeter struct {
	mu          sync.Mutex
	lastRequest bool
	turns       int64
}

var meters sync.Map // meter name -> *turnMeter

func meterOf(name string) *turnMeter {
	m, _ := meters.LoadOrStore(name, &turnMeter{})
	return m.(*turnMeter)
}

func (m *turnMeter) see(request bool) {
	m.mu.Lock()
	if request {
		m.lastRequest = true
	} else if m.lastRequest {
		m.turns++
		m.lastRequest = false
	}
	m.mu.Unlock()
}

func (m *turnMeter) count() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.turns
}

// MarshalJSON shows the attributes and the meter's count of turns so far.
func (t *DelayToxic) MarshalJSON() ([]byte, error) {
	type attributes DelayToxic
	var turns int64
	if t.Meter != "" {
		turns = meterOf(t.Meter).count()
	}
	return json.Marshal(struct {
		attributes
		Turns int64 `json:"turns"`
	}{attributes(*t), turns})
}

// GetBufferSize lets chunks queue while earlier ones wait, as "latency" does.
func (t *DelayToxic) GetBufferSize() int { return 1024 }

// Pipe forwards each chunk once its delay has passed. The wait is a nanosleep of
// the goroutine's thread with a 1 ns timer slack, not a Go timer: the runtime's
// timers wake an idle process no sooner than the next whole millisecond, which would
// turn 100 µs into 1 ms. The thread sleeps (no CPU spent) and Go runs other
// goroutines on other threads meanwhile. A thread wakes some microseconds late; the
// toxic keeps a running mean of that lateness and goes to sleep that much earlier,
// so the chunk leaves on time on average rather than late every time.
func (t *DelayToxic) Pipe(stub *toxics.ToxicStub) {
	delay := time.Duration(t.DelayUs) * time.Microsecond
	var late time.Duration
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if t.Meter != "" {
				meterOf(t.Meter).see(t.Direction == "request")
			}
			due := c.Timestamp.Add(delay)
			if delay <= 0 {
				stub.Output <- c
				continue
			}
			if woke, slept := sleepUntil(due.Add(-late)); slept {
				// an exponentially weighted mean (1/8) of how late the thread woke;
				// one wake-up delayed by a busy machine counts as at most maxLate
				sample := min(max(woke.Sub(due.Add(-late)), 0), maxLate)
				late = min(late+(sample-late)/8, delay/4)
			} else {
				late -= late / 8 // the chunk was already due: lean back to plain sleeps
			}
			c.Timestamp = due
			stub.Output <- c
		}
	}
}

// sleepUntil sleeps the calling thread until `wake`; when it woke, and whether it
// slept at all.
func sleepUntil(wake time.Time) (time.Time, bool) {
	wait := time.Until(wake)
	if wait <= 0 {
		return time.Now(), false
	}
	// PR_SET_TIMERSLACK applies to the calling thread only, hence before each sleep
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	ts := unix.NsecToTimespec(wait.Nanoseconds())
	for unix.Nanosleep(&ts, &ts) == unix.EINTR {
	}
	return time.Now(), true
}

func moduleVersion() string {
	info, ok := debug.ReadBuildInfo()
	if ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/Shopify/toxiproxy/v2" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func main() {
	host := flag.String("host", "127.0.0.1", "address of the HTTP API")
	port := flag.String("port", "8474", "port of the HTTP API")
	version := flag.Bool("version", false, "print the Toxiproxy version and exit")
	flag.Parse()
	if *version {
		fmt.Printf("Toxiproxy %s\n", moduleVersion())
		return
	}
	toxiproxy.Version = moduleVersion()
	toxics.Register("delay", new(DelayToxic))

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		os.Exit(0)
	}()

	logger := zerolog.New(os.Stderr).With().Timestamp().Logger().Level(zerolog.WarnLevel)
	metrics := toxiproxy.NewMetricsContainer(prometheus.NewRegistry())
	server := toxiproxy.NewServer(metrics, logger)
	server.Listen(*host, *port)
}
