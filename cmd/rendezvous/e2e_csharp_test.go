package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/client"
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
	api, err := client.NewAPI("http://"+p.httpAddr, p.tokens["client"], nil)
	if err != nil {
		t.Fatal(err)
	}
	j, err := client.NewJoiner(client.JoinerConfig{API: api, ProtocolVersion: 7, ListenAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	id, err := client.ParseListingID(pub.ListingID)
	if err != nil {
		t.Fatal(err)
	}
	_, path, err := j.JoinAndPunch(ctx, id, client.PunchConfig{})
	if err != nil {
		t.Fatalf("Go joiner: %v", err)
	}
	if l := host.expect(t, "connected "); !strings.Contains(l, "path=1") || path.Relayed {
		t.Fatalf("C# host: %q (Go path relayed %v), want a direct path", l, path.Relayed)
	}
	buf := make([]byte, 1500)
	for {
		if _, err := j.Socket().WriteTo([]byte("ping from go"), path.Peer); err != nil {
			t.Fatal(err)
		}
		wait, stop := context.WithTimeout(ctx, 250*time.Millisecond)
		n, _, err := j.Socket().ReadFrom(wait, buf)
		stop()
		if err == nil {
			if got := string(buf[:n]); got != "echo: ping from go" {
				t.Fatalf("got %q, want the C# host's echo", got)
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the C# host never echoed")
		}
	}
	host.expect(t, "reported ")
}
