package turncred

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/pion/stun/v3"
)

// A stock coturn started with --use-auth-secret accepts an allocation with
// an issued credential and refuses one made with another secret or one whose
// expiry has passed. It needs the coturn package (apt-get install coturn);
// without it the test is skipped and says so.
func TestCoturnAcceptsIssuedCredentials(t *testing.T) {
	const secret = "relay-test-secret"
	relay := startCoturn(t, secret)

	good, err := New([]string{"turn:" + relay}, []byte(secret), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, side := range []byte{SideHost, SideClient} {
		c := good.Issue(now, "0b5e1f3c-7d2a-4c11-9e57-3f0a8d6b2c41", side)
		relayed, code := allocate(t, relay, c.Username, c.Credential)
		if code != 0 || !relayed.IP.IsLoopback() || relayed.Port == 0 {
			t.Fatalf("side %c: allocation answered error %d, relayed %v; want success with a relayed address", side, code, relayed)
		}
	}

	wrong, err := New([]string{"turn:" + relay}, []byte("another-secret"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	c := wrong.Issue(now, "0b5e1f3c-7d2a-4c11-9e57-3f0a8d6b2c41", SideClient)
	if _, code := allocate(t, relay, c.Username, c.Credential); code != int(stun.CodeUnauthorized) {
		t.Fatalf("wrong secret: answer %d, want 401", code)
	}

	// Issued with the right secret but expired a minute ago.
	c = good.Issue(now.Add(-2*time.Minute), "0b5e1f3c-7d2a-4c11-9e57-3f0a8d6b2c41", SideClient)
	if _, code := allocate(t, relay, c.Username, c.Credential); code != int(stun.CodeUnauthorized) {
		t.Fatalf("expired username: answer %d, want 401", code)
	}
}

// startCoturn runs turnserver on a free loopback port with the shared
// secret and returns its "127.0.0.1:port" once it answers a Binding.
func startCoturn(t *testing.T, secret string) string {
	t.Helper()
	bin, err := exec.LookPath("turnserver")
	if err != nil {
		t.Skip("turnserver not installed (Debian package coturn)")
	}
	dir := t.TempDir()
	for try := 0; ; try++ {
		port := freePort(t)
		ctx, cancel := context.WithCancel(context.Background())
		cmd := exec.CommandContext(ctx, bin, "-n",
			"--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", "--listening-port="+strconv.Itoa(port),
			"--min-port=49152", "--max-port=65535",
			"--use-auth-secret", "--static-auth-secret="+secret, "--realm=rdv.test",
			"--no-tls", "--no-dtls", "--no-cli", "--no-software-attribute",
			"--db="+filepath.Join(dir, "turndb"), "--pidfile="+filepath.Join(dir, "turnserver.pid"),
			"--log-file=stdout", "--simple-log")
		var log bytes.Buffer // read only after Wait
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatalf("start turnserver: %v", err)
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		if answers(addr, 5*time.Second) {
			t.Cleanup(func() { cancel(); _ = cmd.Wait() })
			return addr
		}
		cancel()
		_ = cmd.Wait()
		if try == 2 {
			t.Fatalf("turnserver did not answer on %s:\n%s", addr, log.Bytes())
		}
	}
}

func freePort(t *testing.T) int {
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// answers reports whether addr answers a plain Binding within d.
func answers(addr string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		m := stun.MustBuild(stun.TransactionID, stun.BindingRequest)
		if res, err := roundTrip(addr, m, 200*time.Millisecond); err == nil && res.Type == stun.BindingSuccess {
			return true
		}
		time.Sleep(20 * time.Millisecond) // not listening yet: the read failed at once
	}
	return false
}

// allocate runs the TURN long-term credential exchange (RFC 8656 §9.2): an
// Allocate without credentials gets 401 with REALM and NONCE, the signed
// retry gets the relayed address or an error code.
func allocate(t *testing.T, server, username, password string) (relayed stun.XORMappedAddress, code int) {
	t.Helper()
	allocType := stun.NewType(stun.MethodAllocate, stun.ClassRequest)
	transport := stun.RawAttribute{Type: stun.AttrRequestedTransport, Value: []byte{17, 0, 0, 0}}
	// One socket for both requests: coturn binds the nonce to the 5-tuple.
	conn, err := net.Dial("udp4", server)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	res, err := exchange(conn, stun.MustBuild(stun.TransactionID, allocType, &transport, stun.Fingerprint))
	if err != nil {
		t.Fatalf("first allocate: %v", err)
	}
	var realm stun.Realm
	var nonce stun.Nonce
	if realm.GetFrom(res) != nil || nonce.GetFrom(res) != nil {
		t.Fatalf("first allocate: no realm or nonce in %v", res)
	}
	req := stun.MustBuild(stun.TransactionID, allocType, &transport,
		stun.NewUsername(username), realm, nonce,
		stun.NewLongTermIntegrity(username, realm.String(), password), stun.Fingerprint)
	if res, err = exchange(conn, req); err != nil {
		t.Fatalf("signed allocate: %v", err)
	}
	if res.Type.Class == stun.ClassErrorResponse {
		var ec stun.ErrorCodeAttribute
		if ec.GetFrom(res) != nil {
			t.Fatalf("error answer without ERROR-CODE: %v", res)
		}
		return relayed, int(ec.Code)
	}
	if err := relayed.GetFromAs(res, stun.AttrXORRelayedAddress); err != nil {
		t.Fatalf("success without XOR-RELAYED-ADDRESS: %v", res)
	}
	return relayed, 0
}

func roundTrip(addr string, m *stun.Message, d time.Duration) (*stun.Message, error) {
	conn, err := net.Dial("udp4", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(d))
	return exchangeOnce(conn, m)
}

// exchange sends m and reads its answer, re-sending a few times (UDP).
func exchange(conn net.Conn, m *stun.Message) (*stun.Message, error) {
	for try := 0; try < 5; try++ {
		_ = conn.SetDeadline(time.Now().Add(time.Second))
		res, err := exchangeOnce(conn, m)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			continue
		}
		return res, err
	}
	return nil, fmt.Errorf("no answer from %s", conn.RemoteAddr())
}

func exchangeOnce(conn net.Conn, m *stun.Message) (*stun.Message, error) {
	if _, err := conn.Write(m.Raw); err != nil {
		return nil, err
	}
	buf := make([]byte, 1500)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			return nil, err
		}
		res := &stun.Message{Raw: append([]byte(nil), buf[:n]...)}
		if res.Decode() != nil || res.TransactionID != m.TransactionID {
			continue // a stray or late answer
		}
		return res, nil
	}
}
