package netio

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestInteropCoturnClient: coturn's turnutils_stunclient, an unmodified
// second STUN client, learns its reflexive address from a plain Binding.
// It needs the coturn package (apt-get install coturn); without it the test
// is skipped and says so.
func TestInteropCoturnClient(t *testing.T) {
	bin, err := exec.LookPath("turnutils_stunclient")
	if err != nil {
		t.Skip("turnutils_stunclient not installed (Debian package coturn)")
	}
	f := newFixture(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-p", strconv.Itoa(int(f.addr.Port())), "127.0.0.1").CombinedOutput()
	if err != nil {
		t.Fatalf("turnutils_stunclient: %v\n%s", err, out)
	}
	// A reader counts its answers after sending them: Close waits for the
	// readers, so every answer sent is counted once it returns.
	if err := f.med.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if !strings.Contains(string(out), "reflexive addr: 127.0.0.1:") || f.med.met.answers[methodBinding][resOK].Get() == 0 {
		t.Fatalf("no reflexive address in coturn's output:\n%s", out)
	}
	t.Logf("%s", out)
}
