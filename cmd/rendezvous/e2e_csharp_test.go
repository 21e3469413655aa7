package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The C# binding (sdk/csharp) against the real server: its host example,
// compiled with mcs and run by mono over librendezvous.so built here, keeps
// its presence, accepts the Go joiner and punches on loopback; the joiner's
// datagram comes back through the C# echo.
func TestCSharpHostGoJoiner(t *testing.T) {
	for _, tool := range []string{"cc", "mcs", "mono"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (.ci/run installs it): %v", tool, err)
		}
	}
	dir := t.TempDir()
	root := filepath.Join("..", "..", "sdk")
	srcs, _ := filepath.Glob(filepath.Join(root, "c", "src", "*.c"))
	args := append([]string{"-std=c99", "-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-DRDV_SHARED_BUILD",
		"-I" + filepath.Join(root, "c", "include"), "-o", filepath.Join(dir, "librendezvous.so")}, srcs...)
	run := func(name string, args ...string) {
		t.Helper()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
	}
	run("cc", args...)
	run("mcs", "-target:library", "-out:"+filepath.Join(dir, "Rendezvous.dll"), filepath.Join(root, "csharp", "Rendezvous.cs"))
	run("mcs", "-r:"+filepath.Join(dir, "Rendezvous.dll"), "-out:"+filepath.Join(dir, "Host.exe"),
		filepath.Join(root, "csharp", "examples", "Host.cs"))

	p := startProc(t)
	pub := p.publish("csharp-host-1", "C# host")
	cmd := exec.Command("mono", filepath.Join(dir, "Host.exe"), pub.Presence.Mediator, pub.Presence.Handle,
		pub.Presence.Token, strconv.Itoa(pub.Presence.Interval), "40")
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir)
	host := startPeerCmd(t, cmd, "C# host")
	host.expect(t, "presence ")

	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	j, path := goJoinAndPunch(ctx, t, p, pub.ListingID)
	defer j.Close()
	if l := host.expect(t, "connected "); !strings.Contains(l, "path=1") || path.Relayed {
		t.Fatalf("C# host: %q (Go path relayed %v), want a direct path", l, path.Relayed)
	}
	if got, _ := pingUntilAnswered(ctx, t, j.Socket(), path.Peer, "the C# host"); got != "echo: ping from go" {
		t.Fatalf("got %q, want the C# host's echo", got)
	}
	host.expect(t, "reported ")
}
