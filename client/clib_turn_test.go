package client

import (
	"net/netip"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCLibTURNAgainstCoturn runs the C library's TURN client
// (sdk/c/tests/turn_coturn.c, built here under ASan and UBSan) against a
// real coturn with the credential scheme the server grants: two
// allocations, a permission and a channel each way, ChannelData both ways,
// a timed Refresh. A wrong credential must fail once with 401, not loop.
func TestCLibTURNAgainstCoturn(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Fatalf("no C compiler: %v", err)
	}
	root := filepath.Join("..", "sdk", "c")
	srcs, _ := filepath.Glob(filepath.Join(root, "src", "*.c"))
	bin := filepath.Join(t.TempDir(), "turn_coturn")
	args := append([]string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-g", "-fsanitize=address,undefined",
		"-fno-sanitize-recover=all", "-I" + filepath.Join(root, "include"), "-I" + filepath.Join(root, "src"),
		"-o", bin, filepath.Join(root, "tests", "turn_coturn.c")}, srcs...)
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("building turn_coturn: %v\n%s", err, out)
	}
	const secret = "clib-turn-secret"
	relay := startCoturn(t, nil, netip.MustParseAddr("127.0.0.1"), freeUDPPort(t), secret)
	user, pass := turnCredential(secret, "clib-attempt.h", time.Now().Add(10*time.Minute))

	out, err := exec.Command(bin, relay.addr.String(), user, pass).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "relay ok") {
		t.Fatalf("turn_coturn: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, relay.addr.String(), user, "d3Jvbmc=").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "code 401") || strings.Contains(string(out), "Sanitizer") {
		t.Fatalf("a wrong credential: %v\n%s", err, out)
	}
}
