package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// scrape is one parsed /metrics answer.
type scrape struct {
	text    string
	help    map[string]string  // family -> HELP text
	types   map[string]string  // family -> TYPE
	samples map[string]float64 // series (name and labels, as written) -> value
	names   map[string]bool    // sample names (histograms: _bucket, _sum, _count)
}

// scrapeURL fetches and parses a /metrics answer, failing on anything the
// text format does not allow: a sample before its family's HELP and TYPE,
// a HELP without text, a series written twice, vmrange buckets.
// A token, when given, is sent as the bearer token (the API listener's
// /metrics takes a global operator's; --metrics-addr takes none).
func scrapeURL(t *testing.T, url string, token ...string) *scrape {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range token {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d, error %v", url, resp.StatusCode, err)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("GET %s: Content-Type %q", url, ct)
	}
	s := &scrape{text: string(body), help: map[string]string{}, types: map[string]string{},
		samples: map[string]float64{}, names: map[string]bool{}}
	family := ""
	for _, line := range strings.Split(strings.TrimSuffix(s.text, "\n"), "\n") {
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, text, _ := strings.Cut(rest, " ")
			if text == "" {
				t.Errorf("family %s has no HELP text", name)
			}
			if _, dup := s.help[name]; dup {
				t.Errorf("family %s is written twice", name)
			}
			s.help[name], family = text, name
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			if name != family {
				t.Errorf("TYPE line for %s follows the HELP line of %q", name, family)
			}
			s.types[name] = typ
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("malformed sample line %q", line)
		}
		series, value := line[:i], line[i+1:]
		name, _, _ := strings.Cut(series, "{")
		if !belongsTo(name, family, s.types[family]) {
			t.Errorf("sample %s is not of family %q declared before it", name, family)
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Errorf("sample %q: value %q: %v", series, value, err)
		}
		if _, dup := s.samples[series]; dup {
			t.Errorf("series %s is written twice", series)
		}
		s.samples[series] = v
		s.names[name] = true
	}
	if strings.Contains(s.text, "vmrange") {
		t.Errorf("the exposition holds VictoriaMetrics vmrange buckets")
	}
	return s
}

func belongsTo(name, family, typ string) bool {
	if name == family {
		return true
	}
	switch typ {
	case "histogram":
		return name == family+"_bucket" || name == family+"_sum" || name == family+"_count"
	case "summary":
		return name == family+"_sum" || name == family+"_count"
	}
	return false
}

// promtoolCheck pipes text to `promtool check metrics`, which must say
// nothing and exit 0: no parse error and no lint complaint. Without
// promtool (Debian package prometheus; CI installs it) the test is skipped.
func promtoolCheck(t *testing.T, what, text string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (Debian package prometheus): cannot lint the exposition")
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Fatalf("promtool check metrics on %s: %v\n%s", what, err, out)
	}
}

// exercise makes traffic on every transport, so request counters and
// histograms hold data and the lazily created series exist.
func exercise(t *testing.T, p *proc) {
	t.Helper()
	h := publishHost(t, p, "metrics-1", "metrics game")
	h.peer.plainBinding()
	p.join("metrics-join-1", h.pub.ListingID)
	p.call("GET", "/livez", "", nil).expect(t, "livez", http.StatusOK, nil)
}

// TestMetricsExpositionPassesPromtool: after traffic on every route, both
// listeners' /metrics parse, declare every family with HELP text and TYPE,
// and pass promtool's lint.
func TestMetricsExpositionPassesPromtool(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		p := startProc(t, append(storeArgs, "--metrics-addr", "127.0.0.1:0")...)
		exercise(t, p)
		api := scrapeURL(t, "http://"+p.httpAddr+"/metrics", statsToken(p.tokens))
		sep := scrapeURL(t, "http://"+metricsAddr(t, p)+"/metrics")
		for family := range api.help {
			if _, ok := sep.help[family]; !ok {
				t.Errorf("family %s is on the API port's /metrics but not on --metrics-addr", family)
			}
		}
		if api.samples[`rendezvous_udp_answers_total{method="presence",outcome="success"}`] < 1 ||
			api.samples[`rendezvous_http_request_duration_seconds_count{route="create_join_attempt"}`] != 1 {
			t.Fatalf("the exercise did not show in the metrics:\n%s", api.text)
		}
		promtoolCheck(t, "the API port", api.text)
		promtoolCheck(t, "--metrics-addr", sep.text)
	})
}

// TestMetricsFreshServer: before any traffic the exposition shows every
// store series at 0 (pool gauges, HTTP outcome counters, UDP answer
// counters), latency histograms with le buckets, the build info matching
// --version, and the file descriptor gauges the fd alert reads.
func TestMetricsFreshServer(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		p := startProc(t, storeArgs...)
		s := scrapeURL(t, "http://"+p.httpAddr+"/metrics", statsToken(p.tokens))
		count := func(prefix string) (n int) {
			for series, v := range s.samples {
				if strings.HasPrefix(series, prefix) {
					if v != 0 {
						t.Errorf("fresh server: %s = %v, want 0", series, v)
					}
					n++
				}
			}
			return n
		}
		// 11 store operations (quick join included) x 10 outcomes (full
		// included); 9 methods x 10 answers (peer_refused included); 6 pools.
		if n := count("rendezvous_http_store_outcomes_total{"); n != 11*10 {
			t.Errorf("fresh server: %d HTTP store outcome counters, want 110", n)
		}
		if n := count("rendezvous_udp_answers_total{"); n != 9*10 {
			t.Errorf("fresh server: %d UDP answer counters, want 90", n)
		}
		// The --dev tenant's punch outcomes: 2 roles x 3 paths, at 0.
		if n := count(`rendezvous_punch_outcomes_total{tenant="demo/dev",`); n != 2*3 {
			t.Errorf("fresh server: %d punch outcome counters of demo/dev, want 6", n)
		}
		if n := count("rendezvous_pool_used{"); n != 6 {
			t.Errorf("fresh server: %d pool gauges, want 6", n)
		}
		for _, series := range []string{
			`rendezvous_http_request_duration_seconds_bucket{route="browse",le="0.001"}`,
			`rendezvous_http_request_duration_seconds_bucket{route="browse",le="+Inf"}`,
			`rendezvous_http_store_duration_seconds_bucket{op="create_listing",le="+Inf"}`,
			`rendezvous_udp_commit_duration_seconds_bucket{le="+Inf"}`,
			`rendezvous_udp_batch_size_bucket{le="64"}`,
			`rendezvous_available`, `rendezvous_draining`,
		} {
			if _, ok := s.samples[series]; !ok {
				t.Errorf("fresh server lacks %s", series)
			}
		}
		for _, family := range []string{"rendezvous_http_request_duration_seconds", "rendezvous_http_store_duration_seconds",
			"rendezvous_udp_commit_duration_seconds", "rendezvous_udp_batch_size"} {
			if s.types[family] != "histogram" {
				t.Errorf("%s has TYPE %q, want histogram", family, s.types[family])
			}
		}
		if s.samples["process_open_fds"] < 1 || s.samples["process_max_fds"] < s.samples["process_open_fds"] {
			t.Errorf("process_open_fds %v, process_max_fds %v", s.samples["process_open_fds"], s.samples["process_max_fds"])
		}

		code, stdout, stderr := runBinary(t, nil, "--version")
		m := regexp.MustCompile(`^rendezvous (\S+) (go\S+) (\S+)/(\S+)\n$`).FindStringSubmatch(stdout)
		if code != exitOK || m == nil || stderr != "" {
			t.Fatalf("--version: exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		if m[2] != runtime.Version() || m[3] != runtime.GOOS || m[4] != runtime.GOARCH {
			t.Errorf("--version %q: want %s %s/%s", stdout, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		}
		info := `rendezvous_build_info{version="` + m[1] + `",go_version="` + m[2] + `",store="` + storeOf(storeArgs) + `"}`
		if v, ok := s.samples[info]; !ok || v != 1 {
			t.Errorf("no %s 1 (--version says %q):\n%s", info, stdout, s.text)
		}
	})
}

// metricsAddr is the --metrics-addr listener the first log line names.
func metricsAddr(t *testing.T, p *proc) string {
	t.Helper()
	a, _ := p.first["metrics"].(string)
	if a == "" || strings.HasSuffix(a, ":0") {
		t.Fatalf("the first log line names no bound metrics address: %v", p.first)
	}
	return a
}

// TestMetricsAddrServesOnlyMetrics: --metrics-addr serves GET /metrics and
// nothing else; the API port keeps its /metrics; a port in use stops the
// start naming the setting.
func TestMetricsAddrServesOnlyMetrics(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		p := startProc(t, append(storeArgs, "--metrics-addr", "127.0.0.1:0")...)
		base := "http://" + metricsAddr(t, p)
		f := func(method, path string, want int) {
			t.Helper()
			req, err := http.NewRequest(method, base+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := httpClient.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Fatalf("%s %s on --metrics-addr: %d, want %d", method, path, resp.StatusCode, want)
			}
		}
		f("GET", "/metrics", http.StatusOK)
		f("HEAD", "/metrics", http.StatusOK)
		f("POST", "/metrics", http.StatusMethodNotAllowed)
		f("GET", "/livez", http.StatusNotFound)
		f("GET", "/v1/whoami", http.StatusNotFound)
		p.call("GET", "/metrics", statsToken(p.tokens), nil).expect(t, "API /metrics", http.StatusOK, nil)
		// The API listener's /metrics names every tenant: no token, no text.
		p.call("GET", "/metrics", "", nil).expect(t, "API /metrics without a token", http.StatusUnauthorized, nil)

		busy, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer busy.Close()
		code, _, stderr := runBinary(t, nil, "--dev", "--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0",
			"--metrics-addr", busy.Addr().String())
		if code != exitFailure || !strings.Contains(stderr, "metrics-addr") {
			t.Fatalf("--metrics-addr on a busy port: exit %d, stderr %s", code, stderr)
		}
		// The process stops with the drain, closing the metrics listener too.
		p.signal(syscall.SIGTERM)
		if code := p.wait(); code != exitOK {
			t.Fatalf("exit %d after SIGTERM", code)
		}
		if c, err := net.DialTimeout("tcp", metricsAddr(t, p), time.Second); err == nil {
			c.Close()
			t.Fatalf("the metrics port still accepts connections after exit")
		}
	})
}

// Parts of a PromQL expression that hold no metric name: strings, then
// label matchers, ranges, label lists of grouping and matching clauses,
// numbers and durations.
var (
	promqlStrings = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promqlNoNames = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]|\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)|\b[0-9][0-9a-zA-Z.]*`)
	promqlIdent   = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
	promqlWords   = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true}
	docMetric     = regexp.MustCompile(`\b(?:rendezvous|process|go)_[a-z0-9_]+`)
)

// promqlNames returns the metric names expr selects (function names and
// keywords left out).
func promqlNames(expr string) []string {
	var names []string
	for _, m := range promqlIdent.FindAllStringSubmatch(promqlNoNames.ReplaceAllString(promqlStrings.ReplaceAllString(expr, " "), " "), -1) {
		if m[1] == "" && !promqlWords[m[0]] {
			names = append(names, m[0])
		}
	}
	return names
}

func TestPromqlNames(t *testing.T) {
	got := strings.Join(promqlNames(`histogram_quantile(0.99, sum by (job, le) (rate(a_bucket{route!="x{y}"}[5m])))
		/ on(instance) group_left(pool) b{x="1"} > bool 0.5 and c_total offset 5m`), " ")
	if got != "a_bucket b c_total" {
		t.Fatalf("promqlNames = %q, want a_bucket b c_total", got)
	}
}

// TestDeployAndDocsNameRealMetrics: every metric the alert rules and the
// dashboard query, and every series docs/operations.md names, is in the
// real binary's exposition, so none of them can drift from the code; and
// the dashboard shows every series docs/operations.md names.
func TestDeployAndDocsNameRealMetrics(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		p := startProc(t, storeArgs...)
		exercise(t, p)
		s := scrapeURL(t, "http://"+p.httpAddr+"/metrics", statsToken(p.tokens))
		known := func(name string) bool { return s.names[name] || s.help[name] != "" }

		var exprs []string
		rulesFile := filepath.Join("..", "..", "deploy", "prometheus", "rendezvous-alerts.yml")
		b, err := os.ReadFile(rulesFile)
		if err != nil {
			t.Fatal(err)
		}
		var rules struct {
			Groups []struct {
				Rules []struct{ Alert, Expr string }
			}
		}
		if err := yaml.Unmarshal(b, &rules); err != nil {
			t.Fatalf("%s: %v", rulesFile, err)
		}
		for _, g := range rules.Groups {
			for _, r := range g.Rules {
				exprs = append(exprs, r.Expr)
			}
		}
		dashFile := filepath.Join("..", "..", "deploy", "grafana", "rendezvous-dashboard.json")
		if b, err = os.ReadFile(dashFile); err != nil {
			t.Fatal(err)
		}
		var dash struct {
			Panels []struct {
				Targets []struct{ Expr string }
			}
		}
		if err := json.Unmarshal(b, &dash); err != nil {
			t.Fatalf("%s: %v", dashFile, err)
		}
		onDashboard := map[string]bool{}
		for _, panel := range dash.Panels {
			for _, q := range panel.Targets {
				exprs = append(exprs, q.Expr)
				for _, name := range promqlNames(q.Expr) {
					onDashboard[name] = true
				}
			}
		}
		checked := 0
		for _, e := range exprs {
			for _, name := range promqlNames(e) {
				// up is written by Prometheus itself, per scrape target.
				if name != "up" && !known(name) {
					t.Errorf("query %q uses %s, which the server does not export", e, name)
				}
				checked++
			}
		}
		if len(exprs) < 20 || checked < len(exprs) {
			t.Fatalf("found %d names in %d queries: the files were not read as expected", checked, len(exprs))
		}

		doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
		if err != nil {
			t.Fatal(err)
		}
		// Label lists such as {version,go_version,store} name no metric.
		labels := regexp.MustCompile(`\{[^}\n]*\}`)
		for _, name := range docMetric.FindAllString(labels.ReplaceAllString(string(doc), " "), -1) {
			if _, omitted := omittedFamilies[name]; omitted {
				continue
			}
			if !known(name) {
				t.Errorf("docs/operations.md names %s, which the server does not export", name)
			}
			// A histogram is shown through its _bucket (or _sum, _count).
			if !onDashboard[name] && !onDashboard[name+"_bucket"] && !onDashboard[name+"_sum"] && !onDashboard[name+"_count"] {
				t.Errorf("docs/operations.md names %s, which the dashboard does not show", name)
			}
		}
	})
}
