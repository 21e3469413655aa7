// Package deploy holds no Go code: its tests check the deployment files
// next to them with the tools that consume them (promtool, systemd-analyze,
// buildah). Each tool is a Debian package .ci/run installs; without it the
// test says which and skips.
package deploy

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/rendezvous/rendezvous/engine"
)

// hangGuard bounds every external command; it is not a speed assertion.
const hangGuard = 3 * time.Minute

// httpShutdownBound is how long the server gives HTTP connections after the
// drain (cmd/rendezvous httpShutdownTimeout, docs/operations.md section 6).
const httpShutdownBound = 5 * time.Second

// tool returns the path of name or skips the test naming the package.
func tool(t *testing.T, name, debianPackage string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed (Debian package %s; .ci/run installs it)", name, debianPackage)
	}
	return p
}

// runTool runs a command in dir and returns its stdout and stderr; it
// fails the test when the command fails.
func runTool(t *testing.T, dir string, env []string, name string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// TestAlertRules: the rules load, every alert fires and stays quiet in its
// unit tests, and the example Prometheus configuration is valid.
func TestAlertRules(t *testing.T) {
	promtool := tool(t, "promtool", "prometheus")
	out, _ := runTool(t, "prometheus", nil, promtool, "check", "rules", "rendezvous-alerts.yml")
	if !strings.Contains(out, "SUCCESS") {
		t.Fatalf("promtool check rules:\n%s", out)
	}
	runTool(t, "prometheus", nil, promtool, "test", "rules", "rendezvous-alerts.test.yml")
	runTool(t, "prometheus", nil, promtool, "check", "config", "prometheus.yml")
	checkScrapesDeployments(t)

	// Every alert has a firing case in the unit tests.
	rules, err := os.ReadFile(filepath.Join("prometheus", "rendezvous-alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join("prometheus", "rendezvous-alerts.test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	alerts := regexp.MustCompile(`(?m)^\s*- alert: (\S+)`).FindAllSubmatch(rules, -1)
	if len(alerts) == 0 {
		t.Fatal("no alert in rendezvous-alerts.yml")
	}
	for _, a := range alerts {
		name := string(a[1])
		firing := regexp.MustCompile(`alertname: ` + name + `\n\s*exp_alerts:\n\s*- exp_labels`)
		quiet := regexp.MustCompile(`alertname: ` + name + `\n\s*exp_alerts: \[\]`)
		if !firing.Match(tests) || !quiet.Match(tests) {
			t.Errorf("alert %s lacks a firing or a not-firing case in rendezvous-alerts.test.yml", name)
		}
	}
}

// TestDashboardIsGrafanaJSON: the dashboard is valid JSON with a
// datasource variable, and every panel queries Prometheus through it.
func TestDashboardIsGrafanaJSON(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("grafana", "rendezvous-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID        string `json:"uid"`
		Templating struct {
			List []struct{ Name, Type string } `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Type       string                  `json:"type"`
			Title      string                  `json:"title"`
			Datasource struct{ UID string }    `json:"datasource"`
			Targets    []struct{ Expr string } `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	if d.UID == "" || len(d.Templating.List) == 0 || d.Templating.List[0].Type != "datasource" {
		t.Fatalf("the dashboard needs a uid and a datasource variable first: %+v", d.Templating)
	}
	queries := 0
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
			t.Errorf("panel %q does not query the datasource variable", p.Title)
		}
		for _, q := range p.Targets {
			if q.Expr == "" {
				t.Errorf("panel %q has an empty query", p.Title)
			}
			queries++
		}
	}
	if queries < 10 {
		t.Fatalf("only %d queries in the dashboard", queries)
	}
}

// unitDirectives reads a unit file's (or drop-in's) directives.
func unitDirectives(t *testing.T, path string) (text []byte, directives map[string][]string) {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	directives = map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			directives[k] = append(directives[k], v)
		}
	}
	return text, directives
}

// credentialed checks that directives load credential name from /etc/rendezvous
// and point the setting env at it.
func credentialed(t *testing.T, what string, directives map[string][]string, name, env string) {
	t.Helper()
	if !slices.Contains(directives["LoadCredential"], name+":/etc/rendezvous/"+name) {
		t.Errorf("%s: no LoadCredential=%s:/etc/rendezvous/%s in %q", what, name, name, directives["LoadCredential"])
	}
	if !slices.Contains(directives["Environment"], env+"=%d/"+name) {
		t.Errorf("%s: no Environment=%s=%%d/%s in %q", what, env, name, directives["Environment"])
	}
}

// TestSystemdUnit: systemd-analyze accepts the unit and its drop-ins (the
// Redis deployment's, the relay's) without a warning, the secrets are
// credentials, the stop timeout outlasts the longest drain, and the
// sandbox holds.
func TestSystemdUnit(t *testing.T) {
	unit, directives := unitDirectives(t, filepath.Join("systemd", "rendezvous.service"))
	credentialed(t, "rendezvous.service", directives, "capability.key", "RDV_CAPABILITY_KEY_FILE")
	_, redis := unitDirectives(t, filepath.Join("systemd", "rendezvous.service.d", "redis.conf"))
	credentialed(t, "redis.conf", redis, "redis-password", "RDV_REDIS_PASSWORD_FILE")
	_, relay := unitDirectives(t, filepath.Join("systemd", "rendezvous.service.d", "relay.conf"))
	credentialed(t, "relay.conf", relay, "turn.secret", "RDV_TURN_SECRET_FILE")
	if got := directives["ExecReload"]; len(got) != 1 || !strings.Contains(got[0], "-HUP $MAINPID") {
		t.Errorf("ExecReload=%q, want SIGHUP to the server (principals reload)", got)
	}
	for k, want := range map[string]string{
		"DynamicUser": "yes", "ProtectSystem": "strict", "NoNewPrivileges": "yes", "PrivateTmp": "yes",
		"CapabilityBoundingSet": "", "KillSignal": "SIGTERM", "RestartPreventExitStatus": "2",
	} {
		if got := directives[k]; len(got) != 1 || got[0] != want {
			t.Errorf("%s=%q, want %q", k, got, want)
		}
	}
	if got := directives["RestrictAddressFamilies"]; len(got) != 1 || strings.Contains(got[0], "AF_PACKET") || !strings.Contains(got[0], "AF_INET6") {
		t.Errorf("RestrictAddressFamilies=%q, want IP families only", got)
	}
	if got := directives["LimitNOFILE"]; len(got) != 1 || got[0] == "" {
		t.Errorf("LimitNOFILE=%q, want a limit", got)
	}
	stop, err := time.ParseDuration(strings.Join(directives["TimeoutStopSec"], ""))
	if err != nil || stop <= engine.MaxDrainWindow+httpShutdownBound {
		t.Errorf("TimeoutStopSec=%q: want a duration above the longest drain, %v", directives["TimeoutStopSec"], engine.MaxDrainWindow+httpShutdownBound)
	}

	analyze := tool(t, "systemd-analyze", "systemd")
	// verify wants ExecStart to be an executable file; the test binary is
	// one, and building the server here would only cost time.
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "rendezvous.service")
	if err := os.WriteFile(path, bytes.ReplaceAll(unit, []byte("/usr/local/bin/rendezvous"), []byte(bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	dropins := filepath.Join(dir, "rendezvous.service.d")
	if err := os.Mkdir(dropins, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"redis.conf", "relay.conf"} {
		b, err := os.ReadFile(filepath.Join("systemd", "rendezvous.service.d", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dropins, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// With the directory on the unit path, systemd reads the drop-ins next
	// to the unit: shown by one that holds an unknown key.
	unitPath := []string{"SYSTEMD_UNIT_PATH=" + dir + ":"}
	probe := filepath.Join(dropins, "zz-probe.conf")
	if err := os.WriteFile(probe, []byte("[Service]\nNoSuchKey=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut := runTool(t, dir, unitPath, analyze, "verify", path); !strings.Contains(out+errOut, "NoSuchKey") {
		t.Fatalf("systemd-analyze verify did not read the drop-ins:\n%s%s", out, errOut)
	}
	if err := os.Remove(probe); err != nil {
		t.Fatal(err)
	}
	if out, errOut := runTool(t, dir, unitPath, analyze, "verify", path); strings.TrimSpace(out+errOut) != "" {
		t.Fatalf("systemd-analyze verify complains about the unit or its drop-ins:\n%s%s", out, errOut)
	}
	// The offline security score: 0 (fully sandboxed) .. 10 (exposed).
	out, _ := runTool(t, dir, unitPath, analyze, "security", "--offline=true", path)
	m := regexp.MustCompile(`Overall exposure level for rendezvous\.service: ([0-9.]+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no exposure level in systemd-analyze security:\n%s", out)
	}
	if score, _ := strconv.ParseFloat(m[1], 64); score > 2 {
		t.Fatalf("exposure level %s, want 2.0 or less:\n%s", m[1], out)
	}
}

// TestContainerImage builds the image with deploy/build-image.sh (buildah,
// vfs storage in a temporary directory, nothing pulled) and checks it: the
// configuration, a rootfs holding one static binary, and that binary
// printing the stamped version both from the rootfs and under buildah run.
func TestContainerImage(t *testing.T) {
	buildah := tool(t, "buildah", "buildah")
	if os.Geteuid() != 0 {
		t.Skip("building an image with buildah's vfs storage needs root (CI runs as root)")
	}
	root := t.TempDir()
	const ver = "v0.0.0-imagetest"
	out, _ := runTool(t, "..", []string{"VERSION=" + ver, "BUILDAH_ROOT=" + root}, "./deploy/build-image.sh")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	image := lines[len(lines)-1]
	if image != "localhost/rendezvous:"+ver {
		t.Fatalf("build-image.sh names image %q, want localhost/rendezvous:%s:\n%s", image, ver, out)
	}
	b := func(args ...string) string {
		t.Helper()
		full := append([]string{"--storage-driver", "vfs", "--root", root + "/root", "--runroot", root + "/run"}, args...)
		out, _ := runTool(t, root, nil, buildah, full...)
		return out
	}

	var info struct {
		OCIv1 struct {
			Config struct {
				User         string
				Entrypoint   []string
				StopSignal   string
				ExposedPorts map[string]struct{}
				Labels       map[string]string
			} `json:"config"`
		}
	}
	if err := json.Unmarshal([]byte(b("inspect", "--type", "image", image)), &info); err != nil {
		t.Fatalf("buildah inspect: %v", err)
	}
	c := info.OCIv1.Config
	if strings.Join(c.Entrypoint, " ") != "/rendezvous" || c.User != "65534:65534" || c.StopSignal != "SIGTERM" ||
		c.Labels["org.opencontainers.image.version"] != ver {
		t.Errorf("image config %+v", c)
	}
	for _, port := range []string{"8080/tcp", "9464/tcp", "3478/udp"} {
		if _, ok := c.ExposedPorts[port]; !ok {
			t.Errorf("image does not expose %s: %v", port, c.ExposedPorts)
		}
	}

	ctr := strings.TrimSpace(b("from", "--pull-never", image))
	defer b("rm", ctr)
	rootfs := strings.TrimSpace(b("mount", ctr))
	var files []string
	err := filepath.WalkDir(rootfs, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, strings.TrimPrefix(p, rootfs))
		}
		return err
	})
	if err != nil || len(files) != 1 || files[0] != "/rendezvous" {
		t.Fatalf("image files %q (error %v), want only /rendezvous", files, err)
	}
	bin := filepath.Join(rootfs, "rendezvous")
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary is dynamically linked (program header %v)", p.Type)
		}
	}
	f.Close()
	want := "rendezvous " + ver + " " + runtime.Version() + " linux/" + runtime.GOARCH + "\n"
	if got, _ := runTool(t, root, nil, bin, "--version"); got != want {
		t.Errorf("rootfs binary --version = %q, want %q", got, want)
	}
	b("umount", ctr)
	if got := b("run", "--isolation", "chroot", ctr, "--", "/rendezvous", "--version"); got != want {
		t.Errorf("buildah run /rendezvous --version = %q, want %q", got, want)
	}
}

// checkScrapesDeployments: the example configuration scrapes several
// instances of one deployment (and a memory-store one), each group with
// the deployment label the rules count deployment-wide gauges by.
func checkScrapesDeployments(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("prometheus", "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string          `yaml:"targets"`
				Labels  map[string]string `yaml:"labels"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	most := 0
	for _, sc := range cfg.ScrapeConfigs {
		if sc.JobName != "rendezvous" {
			continue
		}
		for _, g := range sc.StaticConfigs {
			if g.Labels["deployment"] == "" {
				t.Errorf("targets %v carry no deployment label", g.Targets)
			}
			most = max(most, len(g.Targets))
		}
	}
	if most < 2 {
		t.Errorf("prometheus.yml scrapes no deployment of several instances")
	}
}
