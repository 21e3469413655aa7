package docs

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// labGuard bounds the whole lab: the failover alone waits out the
// sentinels' 5 s. It is not a speed assertion.
const labGuard = 4 * time.Minute

// labScript is the shell blocks of deployment.md's "Try it on one
// machine", in order.
func labScript(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("deployment.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "\n## Try it on one machine\n")
	if i < 0 {
		t.Fatal(`deployment.md has no section "Try it on one machine"`)
	}
	section := doc[i+1:]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```\n").FindAllStringSubmatch(section, -1)
	if len(blocks) < 9 {
		t.Fatalf("the lab has %d shell blocks, want 9", len(blocks))
	}
	var script strings.Builder
	for _, m := range blocks {
		script.WriteString(m[1])
	}
	return script.String()
}

// TestDeploymentLab follows deployment.md's lab literally: its shell
// blocks run as they stand, in one bash with -euo pipefail, from a
// directory holding only the built bin/ (standing in for the
// repository after `make build`), with real redis-server, redis-sentinel,
// coturn and two instances. It checks what the doc says they print, that
// nothing was written beside bin/ (the secrets live in $lab) and that the
// last block removed $lab.
func TestDeploymentLab(t *testing.T) {
	if testing.Short() {
		t.Skip("the lab runs Redis, Sentinel, coturn and two instances for half a minute")
	}
	for _, tool := range []string{"redis-server", "redis-sentinel", "redis-cli", "turnserver", "curl", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (.ci/run installs it): the lab needs it", tool)
		}
	}
	script := labScript(t)
	repo := t.TempDir()
	buildBin(t, repo)
	tmp := t.TempDir() // mktemp -d makes $lab here

	ctx, cancel := context.WithTimeout(context.Background(), labGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = repo
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "TMPDIR=" + tmp, "LANG=C.UTF-8"}
	// The servers run in the script's background, in its process group:
	// whatever the script leaves behind (it failed half-way) is killed
	// with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A script that stops half-way leaves its servers holding the output
	// pipe: Wait gives up on it shortly after the script itself ends.
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	err := cmd.Wait()
	text := out.String()
	if err != nil {
		t.Fatalf("the lab failed: %v\n%s", err, text)
	}

	for _, want := range []string{
		"min_slaves_good_slaves:2",
		`{"status":"ready"}{"status":"ready"}`,
		"redis_sentinels=127.0.0.1:26390,127.0.0.1:26391,127.0.0.1:26392 redis_master=rdv-primary redis_primary=127.0.0.1:6390",
		"punched: direct path to 127.0.0.1:",
		"host says: echo: hi there",
		"introduced to host: relay-only (no peer address revealed)",
		"connected: relayed path through the TURN relay",
		"host says: echo: relayed",
		`msg="following the Redis primary the sentinels promoted" component=redisstore redis_master=rdv-primary redis_primary=127.0.0.1:639`,
		"previous=127.0.0.1:6390",
		"host says: echo: after the failover",
		`{"loaded":2}` + "\n401\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the lab did not print %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, `msg="following the Redis primary the sentinels promoted"`); n != 2 {
		t.Errorf("%d promotion lines, want one per instance:\n%s", n, text)
	}
	hashes := regexp.MustCompile(`(?m)^rendezvous_principals_info\{sha256_prefix="([0-9a-f]+)"\} 1$`).FindAllStringSubmatch(text, -1)
	if len(hashes) != 2 || hashes[0][1] != hashes[1][1] {
		t.Errorf("principals hashes %v, want the same on both instances", hashes)
	}
	for _, dir := range []string{repo, tmp} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if dir == repo && e.Name() == "bin" {
				continue
			}
			t.Errorf("the lab left %s in %s", e.Name(), dir)
		}
	}
}
