package main

import (
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestE2ESlowloris: many connections that send their headers one byte at a
// time are closed by the server's read timeout (10 s, httpapi/server.go)
// without ever being answered as a request, while other clients are served
// throughout and the process stays up. The test takes about one read
// timeout.
func TestE2ESlowloris(t *testing.T) {
	eachStoreInParallel(t, func(t *testing.T, storeArgs []string) {
		const conns = 50
		p := startProc(t, storeArgs...)
		dialer := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3)}, Timeout: hangGuard}
		type result struct {
			got  string
			sent int
		}
		results := make([]result, conns)
		var wg sync.WaitGroup
		for i := range conns {
			c, err := dialer.Dial("tcp", p.httpAddr)
			if err != nil {
				t.Fatalf("connection %d: %v", i, err)
			}
			defer c.Close()
			closed := make(chan struct{})
			wg.Go(func() { // the dribbler: one byte every 200 ms, never a whole header
				_, _ = io.WriteString(c, "GET /v1/whoami HTTP/1.1\r\nHost: x\r\nX-Slow: ")
				for n := 0; ; n++ {
					select {
					case <-closed:
						results[i].sent = n
						return
					case <-time.After(200 * time.Millisecond):
					}
					if _, err := c.Write([]byte{'a'}); err != nil {
						results[i].sent = n
						<-closed
						return
					}
				}
			})
			wg.Go(func() { // the reader: returns when the server closes
				defer close(closed)
				if err := c.SetReadDeadline(time.Now().Add(hangGuard)); err != nil {
					t.Error(err)
					return
				}
				b, err := io.ReadAll(c)
				results[i].got = string(b)
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Errorf("connection %d: the server never closed it", i)
				}
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()

		// Other clients are served while the slow connections are held.
		served := 0
		for waiting := true; waiting; {
			select {
			case <-done:
				waiting = false
			case <-time.After(100 * time.Millisecond):
			}
			p.call("GET", "/livez", "", nil).expect(t, "livez during slowloris", http.StatusOK, nil)
			p.call("GET", "/v1/whoami", p.tokens["client"], nil).expect(t, "whoami during slowloris", http.StatusOK, nil)
			served++
		}
		timedOut := 0
		for i, r := range results {
			// Closed silently or with 408; never answered as a request.
			if r.got != "" && !strings.HasPrefix(r.got, "HTTP/1.1 408") {
				t.Fatalf("connection %d got %q", i, r.got)
			}
			if r.got != "" {
				timedOut++
			}
			if r.sent == 0 {
				t.Fatalf("connection %d was closed before it sent a byte of its header", i)
			}
		}
		t.Logf("%d slow connections closed by the server (%d with a 408); %d rounds of other requests served meanwhile", conns, timedOut, served)
		p.call("GET", "/readyz", "", nil).expect(t, "readyz after slowloris", http.StatusOK, nil)
		select {
		case <-p.exited:
			t.Fatalf("the server exited")
		default:
		}
	})
}
