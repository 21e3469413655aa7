package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/httpapi/openapitest"
	"github.com/rendezvous/rendezvous/internal/e2e"
)

// runInProcess starts run in a goroutine and waits for its first log line.
// Cancelling the returned cancel starts the drain; the channel yields the
// exit status.
func runInProcess(t *testing.T, stdout io.Writer, args ...string) (first map[string]any, stderr *e2e.LockedBuffer, cancel func(), status <-chan int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &e2e.LockedBuffer{}
	ch := make(chan int, 1)
	go func() {
		ch <- run(ctx, append([]string{"--dev", "--log-format", "json"}, args...), envOf(nil), stdout, stderr)
	}()
	t.Cleanup(cancel)
	for i := 0; i < 4000; i++ {
		if line, _, ok := strings.Cut(stderr.String(), "\n"); ok {
			if err := json.Unmarshal([]byte(line), &first); err != nil {
				t.Fatalf("first log line %q: %v", line, err)
			}
			return first, stderr, cancel, ch
		}
		select {
		case code := <-ch:
			t.Fatalf("run returned %d before logging; stderr %s", code, stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	t.Fatalf("run logged nothing")
	return nil, nil, nil, nil
}

func waitStatus(t *testing.T, ch <-chan int) int {
	t.Helper()
	select {
	case code := <-ch:
		return code
	case <-time.After(hangGuard):
		t.Fatalf("run did not return")
		return -1
	}
}

func TestRunInProcessServesAndDrains(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		banner := &e2e.LockedBuffer{}
		first, stderr, cancel, status := runInProcess(t, banner, append(storeArgs, "--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0")...)
		if first["msg"] != "listening" {
			t.Fatalf("first log line %v", first)
		}
		base := "http://" + first["http"].(string)
		hc := openapitest.Client(t, httpClient)
		// The API listener's /metrics takes the global operator's token,
		// which the --dev banner prints.
		gop := ""
		for deadline := time.Now().Add(hangGuard); gop == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			for _, line := range strings.Split(banner.String(), "\n") {
				if f := strings.Fields(line); len(f) == 2 && f[0] == "global-operator" {
					gop = f[1]
				}
			}
		}
		f := func(path string, want int, contains string) {
			t.Helper()
			req, err := http.NewRequest("GET", base+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if path == "/metrics" {
				req.Header.Set("Authorization", "Bearer "+gop)
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body) // a short read fails the Contains check below
			resp.Body.Close()
			if resp.StatusCode != want || !strings.Contains(string(body), contains) {
				t.Fatalf("GET %s: %d %q, want %d containing %q", path, resp.StatusCode, body, want, contains)
			}
		}
		f("/livez", http.StatusOK, "")
		f("/readyz", http.StatusOK, "ready")
		// Every metrics set is wired into /metrics.
		f("/metrics", http.StatusOK, "process_cpu_seconds_total")
		f("/metrics", http.StatusOK, "rendezvous_attempts_in_flight 0")
		f("/metrics", http.StatusOK, `rendezvous_pool_ceiling{pool="listings"} 25000`)
		f("/metrics", http.StatusOK, "rendezvous_udp_datagrams_in_total")
		cancel()
		if code := waitStatus(t, status); code != exitOK {
			t.Fatalf("status %d, want 0; stderr %s", code, stderr.String())
		}
		// The sockets are closed: the HTTP port refuses connections.
		if c, err := net.Dial("tcp", first["http"].(string)); err == nil {
			c.Close()
			t.Fatalf("the HTTP port still accepts connections after run returned")
		}
	})
}

// freeUDPPort returns a loopback UDP port that was free a moment ago.
func freeUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	port := c.LocalAddr().(*net.UDPAddr).Port
	c.Close()
	return port
}

func TestRunBindFailures(t *testing.T) {
	f := func(args []string, setting string, udpPort int) {
		t.Helper()
		var errb e2e.LockedBuffer
		code := run(context.Background(), append([]string{"--dev", "--log-format", "json"}, args...), envOf(nil), io.Discard, &errb)
		if code != exitFailure {
			t.Fatalf("%v: status %d, want %d; stderr %s", args, code, exitFailure, errb.String())
		}
		if !strings.Contains(errb.String(), "invalid "+setting) || strings.Contains(errb.String(), `"listening"`) {
			t.Fatalf("%v: stderr %s does not name %s (or started anyway)", args, errb.String(), setting)
		}
		// Whatever was bound before the failure is released again.
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: udpPort})
		if err != nil {
			t.Fatalf("%v: UDP port %d is still bound after the failed start: %v", args, udpPort, err)
		}
		c.Close()
	}
	// The HTTP port is taken: the UDP socket bound before must be closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := freeUDPPort(t)
	f([]string{"--http-addr", ln.Addr().String(), "--udp-addr", "127.0.0.1:" + strconv.Itoa(port)}, "http-addr", port)

	// The UDP port is taken (by a socket without SO_REUSEPORT, so the
	// server cannot share it); the address bound before it is released.
	taken, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.LocalAddr().(*net.UDPAddr).Port
	other := freeUDPPort(t)
	f([]string{"--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:" + strconv.Itoa(other) + ",127.0.0.1:" + strconv.Itoa(takenPort)}, "udp-addr", other)
}

func TestRunPrincipalsFileErrors(t *testing.T) {
	var errb e2e.LockedBuffer
	code := run(context.Background(), []string{"--principals", "/nonexistent/principals.json", "--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0"}, envOf(nil), io.Discard, &errb)
	if code != exitFailure || !strings.Contains(errb.String(), "invalid principals") {
		t.Fatalf("status %d, stderr %s; want %d naming principals", code, errb.String(), exitFailure)
	}
}

func TestRunPrincipalsAndCapabilityKeyFiles(t *testing.T) {
	dir := t.TempDir()
	const token = "publisher-token-for-the-in-process-test"
	sum := sha256.Sum256([]byte(token))
	principals := filepath.Join(dir, "principals.json")
	if err := os.WriteFile(principals, []byte(`{"principals":[{"subject":"pub-1","game_id":"demo","environment_id":"prod",
		"roles":["publisher"],"token_sha256":"`+hex.EncodeToString(sum[:])+`"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var key [32]byte
	for i := range key {
		key[i] = byte(i * 7)
	}
	keyFile := filepath.Join(dir, "capability.key")
	if err := os.WriteFile(keyFile, key[:], 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout e2e.LockedBuffer
	first, stderr, cancel, status := runInProcess(t, &stdout, "--principals", principals, "--capability-key-file", keyFile,
		"--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0", "--mediator-addr", "rdv.example.com:3478")
	if first["mediator"] != "rdv.example.com:3478" {
		t.Fatalf("first log line names mediator %v, want the configured one", first["mediator"])
	}
	p := &proc{t: t, httpAddr: first["http"].(string), client: openapitest.Client(t, httpClient), tokens: map[string]string{"publisher": token}}
	var who struct{ Subject, GameID string }
	p.call("GET", "/v1/whoami", token, nil).expect(t, "whoami", http.StatusOK, &who)
	if who.Subject != "pub-1" {
		t.Fatalf("whoami: %+v, want the file's principal", who)
	}
	pub := p.publish("key-file-1", "Key file host")
	if pub.Presence.Mediator != "rdv.example.com:3478" {
		t.Fatalf("publish names mediator %q, want the configured one", pub.Presence.Mediator)
	}
	// With a configured key the capability is HMAC(key, "lease" 0x00 id).
	leaseID, ok := engine.ParseUUID(pub.Lease.LeaseID)
	if !ok {
		t.Fatalf("lease_id %q", pub.Lease.LeaseID)
	}
	want := engine.NewKeyring(key).Lease(engine.LeaseID{UUID: leaseID})
	if got := mustToken(t, pub.Lease.Token); got != want {
		t.Fatalf("the lease capability is not derived from the configured key")
	}
	cancel()
	if code := waitStatus(t, status); code != exitOK {
		t.Fatalf("status %d; stderr %s", code, stderr.String())
	}
	if stdout.String() != "" {
		t.Fatalf("with a principals file nothing goes to stdout, got %q", stdout.String())
	}
	if strings.Contains(stderr.String(), token) || strings.Contains(stderr.String(), pub.Lease.Token) {
		t.Fatalf("the log contains a token")
	}
}
