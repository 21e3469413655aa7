package httpapi

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/memstore"
	"github.com/rendezvous/rendezvous/internal/e2e"
)

// failingListener fails its first n accepts with err, then hands out one
// end of a pipe per accept; it reports every accept attempt on tries.
type failingListener struct {
	n     int
	err   error
	tries chan struct{}
	done  chan struct{}
}

func (f *failingListener) Accept() (net.Conn, error) {
	f.tries <- struct{}{}
	if f.n > 0 {
		f.n--
		return nil, f.err
	}
	select {
	case <-f.done:
		return nil, net.ErrClosed
	default:
	}
	c, _ := net.Pipe()
	return c, nil
}

func (f *failingListener) Close() error   { close(f.done); return nil }
func (f *failingListener) Addr() net.Addr { return &net.TCPAddr{} }

// listenerAPI is an API (no server) logging as JSON into logs.
func listenerAPI(t *testing.T) (*API, *e2e.LockedBuffer) {
	t.Helper()
	st, err := memstore.New(testLimits(), engine.NewManualClock(), engine.RandomKeyring())
	if err != nil {
		t.Fatal(err)
	}
	logs := &e2e.LockedBuffer{}
	a, err := New(Config{Store: st, Keys: engine.RandomKeyring(), Limits: testLimits(), Principals: testPrincipals(t),
		Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return a, logs
}

// An accept error (here: no file descriptor left) is retried after a
// back-off instead of ending Serve, counted, and logged once a second at
// most without client data.
func TestListenerRetriesAcceptErrors(t *testing.T) {
	api, logs := listenerAPI(t)
	emfile := &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}
	fl := &failingListener{n: 5, err: emfile, tries: make(chan struct{}, 100), done: make(chan struct{})}
	l, err := api.NewListener(fl, ConnLimits{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.Accept()
	if err != nil {
		t.Fatalf("Accept after transient errors: %v", err)
	}
	if len(fl.tries) != 6 {
		t.Fatalf("%d accept attempts, want 6", len(fl.tries))
	}
	if n := l.acceptErrors.Get(); n != 5 {
		t.Fatalf("%d accept errors counted, want 5", n)
	}
	if n := strings.Count(logs.String(), "cannot accept HTTP connections; retrying"); n != 1 {
		t.Fatalf("%d log lines for 5 errors within a second, want 1:\n%s", n, logs.String())
	}
	if l.Open() != 1 {
		t.Fatalf("%d open, want 1", l.Open())
	}
	_ = c.Close()
	_ = c.Close() // a second close must not free a second slot
	if l.Open() != 0 {
		t.Fatalf("%d open after close, want 0", l.Open())
	}

	// Close ends a back-off wait: Accept returns net.ErrClosed, which
	// fasthttp's Serve takes for a clean stop.
	fl.n, fl.err = 1<<30, errors.New("accept: permanent failure")
	res := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		res <- err
	}()
	for range 3 {
		<-fl.tries // it keeps retrying
	}
	_ = l.Close()
	select {
	case err := <-res:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Accept after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Accept did not return after Close")
	}
}

// Connections over MaxConns are closed on accept and counted; closing an
// admitted one frees its slot.
func TestListenerMaxConns(t *testing.T) {
	api, logs := listenerAPI(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := api.NewListener(ln, ConnLimits{MaxConns: 2, MaxConnsPerIP: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	var admitted []net.Conn
	for range 2 {
		dial()
		c, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		admitted = append(admitted, c)
	}
	refused := dial()
	got := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		got <- c
	}()
	// The refused connection is closed by the server without a byte.
	_ = refused.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := refused.Read(make([]byte, 1)); n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("refused connection read %d, %v; want it closed", n, err)
	}
	if n := l.refused[refusedMaxConns].Get(); n < 1 {
		t.Fatalf("%d refusals counted", n)
	}
	_ = admitted[0].Close()
	dial()
	select {
	case c := <-got:
		if c == nil {
			t.Fatal("Accept failed")
		}
		_ = c.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("a freed slot did not admit the next connection")
	}
	if !strings.Contains(logs.String(), `"reason":"max_conns"`) {
		t.Fatalf("no refusal logged:\n%s", logs.String())
	}
}

func TestNewListenerRejectsLimits(t *testing.T) {
	api, _ := listenerAPI(t)
	for _, lim := range []ConnLimits{{MaxConns: 0}, {MaxConns: 1, MaxConnsPerIP: -1}} {
		if _, err := api.NewListener(&failingListener{}, lim); err == nil {
			t.Errorf("NewListener(%+v) accepted", lim)
		}
	}
}
