package docs

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/internal/e2e"
)

// buildBin builds the server and rendezvous-peer into dir/bin, standing in
// for the repository after `make build`.
func buildBin(t *testing.T, dir string) {
	t.Helper()
	build := exec.Command(e2e.GoTool(), "build", "-o", filepath.Join(dir, "bin")+"/", "./cmd/rendezvous", "./cmd/rendezvous-peer")
	build.Dir = e2e.ModuleRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
}

// indentedBlockAfter is the indented code block that first follows marker
// in doc, its indentation removed.
func indentedBlockAfter(t *testing.T, doc, marker string) string {
	t.Helper()
	i := strings.Index(doc, marker)
	if i < 0 {
		t.Fatalf("walkthrough.md lacks %q", marker)
	}
	var block []string
	for _, line := range strings.Split(doc[i:], "\n")[1:] {
		if rest, ok := strings.CutPrefix(line, "    "); ok {
			block = append(block, rest)
		} else if len(block) > 0 {
			break
		}
	}
	return strings.Join(block, "\n") + "\n"
}

// docLine is the first indented line of doc that holds what.
func docLine(t *testing.T, doc, what string) string {
	t.Helper()
	for _, line := range strings.Split(doc, "\n") {
		if rest, ok := strings.CutPrefix(line, "    "); ok && strings.Contains(rest, what) {
			return rest
		}
	}
	t.Fatalf("walkthrough.md has no command with %q", what)
	return ""
}

// shell runs a command of the walkthrough in its own process group, in
// dir, as a terminal of its own would; everything it started is killed
// with the test.
func shell(t *testing.T, ctx context.Context, dir, tmp, script string, env ...string) (*exec.Cmd, *e2e.LockedBuffer) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "bash", "-eu", "-c", script)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "TMPDIR=" + tmp, "LANG=C.UTF-8"}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second // servers it left hold the output pipe
	out := &e2e.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL); _ = cmd.Wait() })
	return cmd, out
}

// waitFor polls out until it holds want (bounded by ctx).
func waitFor(t *testing.T, ctx context.Context, out *e2e.LockedBuffer, want, what string) {
	t.Helper()
	for !strings.Contains(out.String(), want) {
		if ctx.Err() != nil {
			t.Fatalf("%s never printed %q:\n%s", what, want, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestWalkthroughRelay follows section 5 of walkthrough.md literally: its
// block (secret in a temporary directory, coturn in the background, the
// server in the foreground) in one terminal, the host of section 2 in a
// second, the relay-only join of section 5 in a third, with the tokens the
// server printed exported as section 1 says. The join connects through the
// relay, and nothing is written beside bin/.
func TestWalkthroughRelay(t *testing.T) {
	if testing.Short() {
		t.Skip("the walkthrough runs coturn, the server and two peers")
	}
	for _, tool := range []string{"turnserver", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (.ci/run installs it)", tool)
		}
	}
	b, err := os.ReadFile("walkthrough.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := indentedBlockAfter(t, doc, "The secret goes into a directory of its own")
	host := docLine(t, doc, "rendezvous-peer host --name")
	relay := doc[strings.Index(doc, "## 5. Through the relay"):]
	join := docLine(t, relay, "join --first --relay-only")

	repo, tmp := t.TempDir(), t.TempDir()
	buildBin(t, repo)
	ctx, cancel := context.WithTimeout(context.Background(), labGuard)
	defer cancel()

	_, server := shell(t, ctx, repo, tmp, start)
	waitFor(t, ctx, server, "global-operator", "the server")
	tokens := map[string]string{}
	for _, line := range strings.Split(server.String(), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			tokens[f[0]] = f[1]
		}
	}
	if tokens["publisher"] == "" || tokens["client"] == "" {
		t.Fatalf("no development tokens in:\n%s", server.String())
	}
	exported := []string{"PUB_TOKEN=" + tokens["publisher"], "CLIENT_TOKEN=" + tokens["client"]}

	hostCmd, hostOut := shell(t, ctx, repo, tmp, host, exported...)
	waitFor(t, ctx, hostOut, "waiting for joiners", "the host")
	joinCmd, joinOut := shell(t, ctx, repo, tmp, join, exported...)
	if err := joinCmd.Wait(); err != nil {
		t.Fatalf("the join failed: %v\n%s\nhost:\n%s\nserver:\n%s", err, joinOut.String(), hostOut.String(), server.String())
	}
	for _, want := range []string{"introduced to host: relay-only (no peer address revealed)",
		"connected: relayed path through the TURN relay", "host says: echo: hi there"} {
		if !strings.Contains(joinOut.String(), want) {
			t.Errorf("the joiner did not print %q:\n%s", want, joinOut.String())
		}
	}
	_ = hostCmd.Process.Signal(syscall.SIGTERM)
	entries, err := os.ReadDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "bin" {
			t.Errorf("the walkthrough wrote %s beside bin/", e.Name())
		}
	}
	if matches, _ := filepath.Glob(filepath.Join(tmp, "*", "turn-secret")); len(matches) != 1 {
		t.Errorf("the TURN secret is not in the temporary directory: %v", matches)
	}
}
