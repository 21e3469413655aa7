//go:build linux

package netnslab

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLab links two namespaces, reads a counter of a loaded ruleset, and
// finds the namespaces gone after the cleanup.
func TestLab(t *testing.T) {
	Require(t)
	prefix := fmt.Sprintf("rdvlab%d-", os.Getpid()%100000)
	t.Run("build", func(t *testing.T) {
		l := New(t, prefix, "a", "b")
		l.Link("a", "va", "10.77.0.1/24", "b", "vb", "10.77.0.2/24")
		if out := l.In("b", "ip", "-4", "addr", "show", "dev", "vb"); !strings.Contains(out, "10.77.0.2/24") {
			t.Fatalf("vb in b: %s", out)
		}
		l.NFT("a", "table ip t {\n\tcounter c {}\n}\n")
		if n := l.Counter("a", "ip", "t", "c"); n != 0 {
			t.Fatalf("counter %d, want 0", n)
		}
	})
	out, _ := exec.Command("ip", "netns", "list").CombinedOutput()
	if strings.Contains(string(out), prefix) {
		t.Fatalf("namespaces left after the cleanup:\n%s", out)
	}
}
