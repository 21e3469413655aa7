package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseConfigErrors(t *testing.T) {
	f := func(setting string, args ...string) {
		t.Helper()
		cfg, err := parseConfig(args, io.Discard)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Setting != setting {
			t.Fatalf("parseConfig(%q) = %v, want a ConfigError on %s", args, err, setting)
		}
		if cfg != nil {
			t.Fatalf("parseConfig(%q) returned a config with its error", args)
		}
	}
	tok := "--publisher-token=x"
	// Each --setting=value here, alone with a token, is refused naming its setting.
	for _, bad := range []string{"duration=10ms", "conns=0", "udp-sockets=999", "timeout=0s", "overload=0.5",
		"shed-p99=-1ms", "presence-every=30s", "renew-every=90s", "max-error-rate=2", "protocol-version=0",
		"protocol-version=4294967296", "out=", "min-offered=1.5", "attempt-ttl=31s", "relay-only=1.5", "relay-only=-0.1"} {
		setting, _, _ := strings.Cut(bad, "=")
		f(setting, tok, "--"+bad)
	}
	// These are refused naming another setting than the flag they give.
	f("mode", tok, "--client-token=y", "--mode=flood")
	f("ramp", tok, "--duration=5s", "--ramp=6s")
	f("tokens")
	f("operator-token", tok, "--mode=shed")
	f("arguments", tok, "extra")
}

func TestParseRates(t *testing.T) {
	f := func(in string, wantErr bool, want RateSet) {
		t.Helper()
		var r RateSet
		err := r.Set(in)
		if wantErr {
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Setting != "rate" {
				t.Fatalf("Set(%q) = %v, want a rate ConfigError", in, err)
			}
			if r != (RateSet{}) {
				t.Fatalf("Set(%q) failed but changed the rates: %v", in, r.String())
			}
			return
		}
		if err != nil || r != want {
			t.Fatalf("Set(%q) = %v, %v", in, r.String(), err)
		}
	}
	var want RateSet
	want[KindBrowse], want[KindJoin] = 200, 2.5
	f("browse=200, join=2.5", false, want)
	f("", false, RateSet{})
	f("browse", true, RateSet{})
	f("teleport=5", true, RateSet{})
	f("browse=-1", true, RateSet{})
	f("browse=lots", true, RateSet{})
	f("browse=200,teleport=5", true, RateSet{}) // the good part is not applied either
	var r RateSet
	r[KindGet] = 7
	for _, bad := range []string{`{"get":1,"warp":2}`, `[1]`} {
		if err := r.UnmarshalJSON([]byte(bad)); err == nil || r[KindGet] != 7 || r[KindBrowse] != 0 {
			t.Fatalf("UnmarshalJSON(%s) = %v, rates now %s", bad, err, r.String())
		}
	}
}

func TestScenarioFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("mode: shed\nduration: 20s\nconns: 8\noperator-token: op\npublisher-token: p\nclient-token: c\nrate:\n  browse: 50\n  get: 10\n")
	cfg, err := parseConfig([]string{"--scenario", path, "--conns", "16"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Mode != ModeShed || cfg.Duration != 20*time.Second || cfg.Conns != 16 || cfg.Rates[KindBrowse] != 50 || cfg.Rates[KindGet] != 10 {
		t.Fatalf("scenario read as %+v", cfg)
	}
	// A flag --rate replaces the file's rates.
	cfg, err = parseConfig([]string{"--scenario", path, "--rate", "join=3"}, io.Discard)
	if err != nil || cfg.Rates[KindBrowse] != 0 || cfg.Rates[KindJoin] != 3 {
		t.Fatalf("rate override: %v %v", cfg, err)
	}
	f := func(content, setting string) {
		t.Helper()
		write(content)
		_, err := parseConfig([]string{"--scenario", path}, io.Discard)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Setting != setting {
			t.Fatalf("scenario %q: %v, want a ConfigError on %s", content, err, setting)
		}
	}
	f("publisher-token: p\nclient-token: c\nbogus: 1\n", "scenario")
	f("publisher-token: p\nclient-token: c\nrate: {warp: 1}\n", "rate")
	f("publisher-token: p\nclient-token: c\nrate: [1]\n", "rate")
	f("publisher-token: p\nclient-token: c\nconns: 0\n", "conns")
	_, err = parseConfig([]string{"--scenario", filepath.Join(dir, "missing.yaml")}, io.Discard)
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Setting != "scenario" {
		t.Fatalf("missing scenario: %v", err)
	}
}

// --help names every subcommand and mode, not only the flags of a run.
func TestHelpListsSubcommands(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := run([]string{"--help"}, &stdout, &stderr, false); code != exitOK {
		t.Fatalf("--help exited %d", code)
	}
	help := stderr.String()
	for _, want := range []string{"\n  rendezvous-load principals ", "\n  rendezvous-load report ", "\n      load ", "\n      shed ",
		"\n      udprate ", "\n      soak ", "-rate", "-server-bin"} {
		if !strings.Contains(help, want) {
			t.Fatalf("--help lacks %q:\n%s", want, help)
		}
	}
}
