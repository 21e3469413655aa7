package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Mode selects what a run does.
const (
	ModeLoad = "load" // mixed open-loop traffic over held listings
	ModeShed = "shed" // fill every pool to its ceiling, then overload and validate
	// ModeUDPRate measures the highest answered UDP rate: presence refreshes
	// of held listings, or plain Bindings (any STUN server, e.g. coturn).
	ModeUDPRate = "udprate"
	// ModeSoak runs mixed load for a long time and fails when the server's
	// RSS, fds or goroutines grow without bound, an admitted listing is
	// lost or an answer is untyped.
	ModeSoak = "soak"
)

// Config is one run's scenario. It comes from flags, optionally on top of a
// YAML scenario file (--scenario) whose keys are the flag names; a flag given
// on the command line wins over the file.
type Config struct {
	Mode       string        `yaml:"mode"`
	HTTPAddr   string        `yaml:"http"`
	Mediator   string        `yaml:"mediator"`
	TokensFile string        `yaml:"tokens"`
	Publisher  string        `yaml:"publisher-token" json:"-"`
	Client     string        `yaml:"client-token" json:"-"`
	Operator   string        `yaml:"operator-token" json:"-"`
	Duration   time.Duration `yaml:"duration"`
	Ramp       time.Duration `yaml:"ramp"`
	Rates      RateSet       `yaml:"rate"`
	Listings   int           `yaml:"listings"`
	Publishers int           `yaml:"publishers"`
	Joiners    int           `yaml:"joiners"`
	Conns      int           `yaml:"conns"`
	UDPSockets int           `yaml:"udp-sockets"`
	Timeout    time.Duration `yaml:"timeout"`
	ProtoVer   uint32        `yaml:"protocol-version"`
	Region     string        `yaml:"region"`

	OwnerQuota    int           `yaml:"owner-quota"`
	PresenceEvery time.Duration `yaml:"presence-every"`
	AttemptTTL    time.Duration `yaml:"attempt-ttl"`
	RelayOnly     float64       `yaml:"relay-only"`
	RenewEvery    time.Duration `yaml:"renew-every"`

	Overload     float64       `yaml:"overload"`
	ShedP99      time.Duration `yaml:"shed-p99"`
	MinOffered   float64       `yaml:"min-offered"`
	SampleRate   float64       `yaml:"sample-rate"`
	MaxErrorRate float64       `yaml:"max-error-rate"`
	MaxRSSMiB    int           `yaml:"max-rss-mib"`
	ServerPID    int           `yaml:"server-pid"`

	Out      string        `yaml:"out"`
	Progress time.Duration `yaml:"progress"`
	Run      string        `yaml:"run-id"`

	Stun   string `yaml:"stun"`
	Window int    `yaml:"window"`

	CPUProfile string `yaml:"cpuprofile"`

	CleanupTimeout time.Duration `yaml:"cleanup-timeout"`

	CPUSteps     int           `yaml:"cpu-steps"`
	StepDuration time.Duration `yaml:"step-duration"`

	ServerBin  string `yaml:"server-bin"`
	ServerArgs string `yaml:"server-args"`

	SampleEvery time.Duration `yaml:"sample-every"`
	MaxGrowth   float64       `yaml:"max-growth"`
}

// RateSet holds requests per second per kind, written kind=rate,... on the
// command line and as a map in YAML.
type RateSet [numKinds]float64

func (r *RateSet) String() string {
	var parts []string
	for k, v := range r {
		if v > 0 {
			parts = append(parts, Kind(k).String()+"="+strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	return strings.Join(parts, ",")
}

// Set parses "browse=200,join=50". On error r is unchanged.
func (r *RateSet) Set(s string) error {
	next := *r
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		if !ok {
			return &ConfigError{"rate", fmt.Sprintf("%q is not kind=rate", part)}
		}
		if err := next.set(name, val); err != nil {
			return err
		}
	}
	*r = next
	return nil
}

func (r *RateSet) set(name, val string) error {
	k, ok := parseKind(strings.TrimSpace(name))
	if !ok {
		return &ConfigError{"rate", fmt.Sprintf("unknown kind %q (want one of %s)", name, strings.Join(kindNames[:], ", "))}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
	if err != nil || v < 0 || v > 1e6 {
		return &ConfigError{"rate", fmt.Sprintf("%s rate %q is not a number in 0..1e6", name, val)}
	}
	r[k] = v
	return nil
}

// UnmarshalYAML reads a map kind: rate. On error r is unchanged.
func (r *RateSet) UnmarshalYAML(n *yaml.Node) error {
	var m map[string]float64
	if err := n.Decode(&m); err != nil {
		return &ConfigError{"rate", "must be a map of kind: requests per second"}
	}
	return r.setMap(m)
}

func (r *RateSet) setMap(m map[string]float64) error {
	next := *r
	for name, v := range m {
		if err := next.set(name, strconv.FormatFloat(v, 'g', -1, 64)); err != nil {
			return err
		}
	}
	*r = next
	return nil
}

// MarshalJSON writes the rates as a map for the result file.
func (r RateSet) MarshalJSON() ([]byte, error) {
	m := map[string]float64{}
	for k, v := range r {
		if v > 0 {
			m[Kind(k).String()] = v
		}
	}
	return json.Marshal(m)
}

// ConfigError names the setting that is wrong.
type ConfigError struct {
	Setting, Reason string
}

func (e *ConfigError) Error() string { return "invalid " + e.Setting + ": " + e.Reason }

func defaultConfig() Config {
	return Config{
		Mode: ModeLoad, HTTPAddr: "127.0.0.1:8080", Duration: 30 * time.Second,
		Listings: 1000, Conns: 64, UDPSockets: 4, Timeout: 5 * time.Second, ProtoVer: 7, Region: "eu-central",
		OwnerQuota: 100, PresenceEvery: 5 * time.Second, AttemptTTL: 30 * time.Second, RenewEvery: 30 * time.Second,
		Overload: 2, ShedP99: 5 * time.Millisecond, MinOffered: 0.9, SampleRate: 200, MaxErrorRate: 0.001,
		Out: "load-out", Progress: time.Second, Stun: "presence", Window: 256,
		CleanupTimeout: time.Minute, StepDuration: 5 * time.Second, MaxGrowth: 0.10,
	}
}

// usageHeader starts --help: every subcommand and mode, then the flags.
const usageHeader = `Usage:
  rendezvous-load principals [flags]   write a server principals file and a tokens file (principals --help)
  rendezvous-load report [flags]       render report.html again from a result.json (report --help)
  rendezvous-load [flags]              run a test; --mode selects it:
      load     hold listings with live presence and offer open-loop rates (--rate) of every kind
      shed     fill every pool to its ceiling, overload it, validate typed shedding and zero eviction
      udprate  keep a window of UDP requests in flight; the answered rate and server CPU per answer
      soak     mixed load for --duration while sampling the server's RSS, fds and goroutines

Flags of a run:
`

// parseConfig reads args (without the program name). Errors are *ConfigError
// or flag errors; output receives the usage text.
func parseConfig(args []string, output io.Writer) (*Config, error) {
	cfg := defaultConfig()
	fs := flag.NewFlagSet("rendezvous-load", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageHeader)
		fs.PrintDefaults()
	}
	scenario := fs.String("scenario", "", "YAML scenario file; its keys are these flag names, flags given here win")
	fs.StringVar(&cfg.Mode, "mode", cfg.Mode, "load (mixed open-loop traffic), shed (fill to the ceilings, overload, validate), udprate (highest answered UDP rate) or soak (long mixed load, resource growth)")
	fs.StringVar(&cfg.HTTPAddr, "http", cfg.HTTPAddr, "server HTTP address host:port")
	fs.StringVar(&cfg.Mediator, "mediator", cfg.Mediator, "UDP mediator host:port (default: the one the server advertises)")
	fs.StringVar(&cfg.TokensFile, "tokens", cfg.TokensFile, "JSON tokens file written by 'rendezvous-load principals'")
	fs.StringVar(&cfg.Publisher, "publisher-token", cfg.Publisher, "one publisher token (instead of --tokens)")
	fs.StringVar(&cfg.Client, "client-token", cfg.Client, "one client token (instead of --tokens)")
	fs.StringVar(&cfg.Operator, "operator-token", cfg.Operator, "global operator token (tenant *; reads /v1/admin/stats)")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "length of the measured phase (load traffic or overload)")
	fs.DurationVar(&cfg.Ramp, "ramp", cfg.Ramp, "time over which every rate rises linearly to its target")
	fs.Var(&cfg.Rates, "rate", "open-loop rates per kind, e.g. browse=200,get=100,join=50,create=20 (kinds: "+strings.Join(kindNames[:], ", ")+")")
	fs.IntVar(&cfg.Listings, "listings", cfg.Listings, "load mode: listings held with live presence and renewed leases")
	fs.IntVar(&cfg.Publishers, "publishers", cfg.Publishers, "use the first N publisher tokens (0: all); listings are spread round-robin over them")
	fs.IntVar(&cfg.Joiners, "joiners", cfg.Joiners, "use the first M client tokens as joiners (0: all)")
	fs.IntVar(&cfg.Conns, "conns", cfg.Conns, "HTTP keep-alive connections (and concurrent HTTP workers)")
	fs.IntVar(&cfg.UDPSockets, "udp-sockets", cfg.UDPSockets, "UDP sockets for presence and binds")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "per-request timeout (HTTP and UDP)")
	u := uint(cfg.ProtoVer)
	fs.UintVar(&u, "protocol-version", u, "protocol_version of created listings and joins")
	fs.StringVar(&cfg.Region, "region", cfg.Region, "region of created listings")
	fs.IntVar(&cfg.OwnerQuota, "owner-quota", cfg.OwnerQuota, "listings per publisher the server allows (--owner-listing-quota)")
	fs.DurationVar(&cfg.AttemptTTL, "attempt-ttl", cfg.AttemptTTL, "shed mode: the server's --attempt-ttl; the overload ends before the first filled attempt could expire")
	fs.Float64Var(&cfg.RelayOnly, "relay-only", cfg.RelayOnly, "fraction of join attempts created relay-only (0..1; the server must have relaying on); the run reports how many got relay credentials")
	fs.DurationVar(&cfg.PresenceEvery, "presence-every", cfg.PresenceEvery, "presence refresh interval per listing")
	fs.DurationVar(&cfg.RenewEvery, "renew-every", cfg.RenewEvery, "lease renewal interval per listing")
	fs.Float64Var(&cfg.Overload, "overload", cfg.Overload, "shed mode: offered work as a multiple of each ceiling (2 = as much again)")
	fs.DurationVar(&cfg.ShedP99, "shed-p99", cfg.ShedP99, "shed mode: the p99 latency shed answers must stay under (0: report it only)")
	fs.Float64Var(&cfg.MinOffered, "min-offered", cfg.MinOffered, "shed mode: fraction of the planned over-ceiling work that must actually be sent (0: report only)")
	fs.Float64Var(&cfg.SampleRate, "sample-rate", cfg.SampleRate, "shed mode: GETs per second of random admitted listings during overload")
	fs.Float64Var(&cfg.MaxErrorRate, "max-error-rate", cfg.MaxErrorRate, "load mode: largest tolerated fraction of errors (shed answers are not errors)")
	fs.IntVar(&cfg.MaxRSSMiB, "max-rss-mib", cfg.MaxRSSMiB, "fail when the server's RSS at full fill exceeds this (0: report only)")
	fs.IntVar(&cfg.ServerPID, "server-pid", cfg.ServerPID, "server process ID on this machine, for RSS and CPU time (default: from /metrics)")
	fs.StringVar(&cfg.Out, "out", cfg.Out, "directory for result.json and report.html")
	fs.DurationVar(&cfg.Progress, "progress", cfg.Progress, "progress interval")
	fs.StringVar(&cfg.Run, "run-id", cfg.Run, "prefix for idempotency keys (default: random)")
	fs.StringVar(&cfg.CPUProfile, "cpuprofile", cfg.CPUProfile, "write the load tester's own CPU profile to this file (to see what the generator costs)")
	fs.StringVar(&cfg.Stun, "stun", cfg.Stun, "udprate mode: presence (authenticated refreshes of --listings held listings) or plain (unauthenticated Binding; needs only --mediator)")
	fs.IntVar(&cfg.Window, "window", cfg.Window, "udprate mode: requests in flight per UDP socket")
	fs.IntVar(&cfg.CPUSteps, "cpu-steps", cfg.CPUSteps, "load mode: after the load phase, offer each kind of --rate alone at 1/N, 2/N, ... N/N of its rate for --step-duration each and report the server's CPU per answer at each step (0: off)")
	fs.DurationVar(&cfg.StepDuration, "step-duration", cfg.StepDuration, "load mode: length of one --cpu-steps step (and of the baseline step before them)")
	fs.StringVar(&cfg.ServerBin, "server-bin", cfg.ServerBin, "start this rendezvous binary on loopback (ports chosen by the kernel, a generated principals file) for the run and stop it after; --http, --tokens and --server-pid then come from it")
	fs.StringVar(&cfg.ServerArgs, "server-args", cfg.ServerArgs, "extra flags for --server-bin, separated by spaces")
	fs.DurationVar(&cfg.SampleEvery, "sample-every", cfg.SampleEvery, "soak mode: how often the server's RSS, fds and goroutines are sampled (0: duration/60, within 100ms..10s)")
	fs.Float64Var(&cfg.MaxGrowth, "max-growth", cfg.MaxGrowth, "soak mode: growth allowed over the warm-up maximum, as a fraction of it (see docs/load-testing.md for the rule)")
	fs.DurationVar(&cfg.CleanupTimeout, "cleanup-timeout", cfg.CleanupTimeout, "at the end (also after Ctrl-C) delete every listing the run created, for at most this long (0: leave them on the server; a second Ctrl-C stops the cleanup)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, &ConfigError{"arguments", fmt.Sprintf("unexpected %q", fs.Arg(0))}
	}
	cfg.ProtoVer = uint32(u)
	if u > 1<<32-1 {
		return nil, &ConfigError{"protocol-version", "must be 1..2^32-1"}
	}
	if *scenario != "" {
		var explicit [][2]string
		fs.Visit(func(f *flag.Flag) {
			if f.Name != "scenario" {
				explicit = append(explicit, [2]string{f.Name, f.Value.String()})
			}
		})
		data, err := os.ReadFile(*scenario)
		if err != nil {
			return nil, &ConfigError{"scenario", err.Error()}
		}
		cfg = defaultConfig()
		dec := yaml.NewDecoder(strings.NewReader(string(data)))
		dec.KnownFields(true)
		if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
			var ce *ConfigError
			if errors.As(err, &ce) {
				return nil, ce
			}
			return nil, &ConfigError{"scenario", err.Error()}
		}
		u = uint(cfg.ProtoVer)
		for _, e := range explicit {
			if e[0] == "rate" {
				cfg.Rates = RateSet{}
			}
			if err := fs.Set(e[0], e[1]); err != nil {
				return nil, &ConfigError{e[0], err.Error()}
			}
		}
		cfg.ProtoVer = uint32(u)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// needsHTTP reports whether the run talks to the HTTP API (all but plain udprate).
func (c *Config) needsHTTP() bool { return !(c.Mode == ModeUDPRate && c.Stun == "plain") }

// Validate reports the first setting out of range.
func (c *Config) Validate() error {
	switch {
	case c.Mode != ModeLoad && c.Mode != ModeShed && c.Mode != ModeUDPRate && c.Mode != ModeSoak:
		return &ConfigError{"mode", fmt.Sprintf("%q is not load, shed, udprate or soak", c.Mode)}
	case (c.Mode == ModeLoad || c.Mode == ModeSoak) && c.Rates[KindBind] > 0 && c.Rates[KindJoin] == 0:
		return &ConfigError{"rate", "bind re-binds the attempts the joins create: give a join rate too"}
	case c.Mode == ModeLoad && c.Rates[KindDelete] > 0 && c.Rates[KindCreate] == 0:
		return &ConfigError{"rate", "delete removes the listings the creates made: give a create rate too"}
	case c.CPUSteps < 0 || c.CPUSteps > 100:
		return &ConfigError{"cpu-steps", "must be 0..100"}
	case c.StepDuration < time.Second || c.StepDuration > time.Hour:
		return &ConfigError{"step-duration", "must be 1s..1h"}
	case c.Mode == ModeSoak && c.SampleEvery != 0 && (c.SampleEvery < 100*time.Millisecond || c.SampleEvery > c.Duration/16):
		return &ConfigError{"sample-every", "must be 0 (automatic) or 100ms..duration/16 (the growth rule needs samples in every eighth)"}
	case c.MaxGrowth <= 0 || c.MaxGrowth > 10:
		return &ConfigError{"max-growth", "must be in (0, 10]"}
	case c.Stun != "presence" && c.Stun != "plain":
		return &ConfigError{"stun", fmt.Sprintf("%q is not presence or plain", c.Stun)}
	case c.Window < 1 || c.Window > 8192:
		return &ConfigError{"window", "must be 1..8192"}
	case c.Mode == ModeUDPRate && c.Stun == "plain" && c.Mediator == "":
		return &ConfigError{"mediator", "udprate with --stun plain sends to --mediator host:port"}
	case c.HTTPAddr == "":
		return &ConfigError{"http", "must be host:port"}
	case c.Duration < time.Second || c.Duration > 24*time.Hour:
		return &ConfigError{"duration", "must be 1s..24h"}
	case c.Ramp < 0 || c.Ramp > c.Duration:
		return &ConfigError{"ramp", "must be 0..duration"}
	case c.Listings < 0 || c.Listings > 1<<20:
		return &ConfigError{"listings", "must be 0..1048576"}
	case c.Publishers < 0 || c.Joiners < 0:
		return &ConfigError{"publishers/joiners", "must not be negative"}
	case c.Conns < 1 || c.Conns > 4096:
		return &ConfigError{"conns", "must be 1..4096"}
	case c.UDPSockets < 1 || c.UDPSockets > 256:
		return &ConfigError{"udp-sockets", "must be 1..256"}
	case c.Timeout < time.Millisecond || c.Timeout > time.Minute:
		return &ConfigError{"timeout", "must be 1ms..1m"}
	case c.ProtoVer == 0:
		return &ConfigError{"protocol-version", "must be 1..2^32-1"}
	case c.OwnerQuota < 1:
		return &ConfigError{"owner-quota", "must be at least 1"}
	case c.PresenceEvery < 100*time.Millisecond || c.PresenceEvery > 20*time.Second:
		return &ConfigError{"presence-every", "must be 100ms..20s (presence lives 20s)"}
	case c.AttemptTTL < 5*time.Second || c.AttemptTTL > 30*time.Second:
		return &ConfigError{"attempt-ttl", "must be 5s..30s (shed mode needs time to overload before attempts expire)"}
	case c.RenewEvery < time.Second || c.RenewEvery > 60*time.Second:
		return &ConfigError{"renew-every", "must be 1s..60s (a lease lives 60s)"}
	case c.RelayOnly < 0 || c.RelayOnly > 1:
		return &ConfigError{"relay-only", "must be 0..1 (the fraction of joins created relay-only)"}
	case c.Overload < 1 || c.Overload > 100:
		return &ConfigError{"overload", "must be 1..100"}
	case c.ShedP99 < 0:
		return &ConfigError{"shed-p99", "must not be negative (0: report only)"}
	case c.MinOffered < 0 || c.MinOffered > 1:
		return &ConfigError{"min-offered", "must be 0..1"}
	case c.SampleRate < 0:
		return &ConfigError{"sample-rate", "must not be negative"}
	case c.MaxErrorRate < 0 || c.MaxErrorRate > 1:
		return &ConfigError{"max-error-rate", "must be 0..1"}
	case c.CleanupTimeout < 0 || c.CleanupTimeout > time.Hour:
		return &ConfigError{"cleanup-timeout", "must be 0..1h (0: leave the listings on the server)"}
	case c.Out == "":
		return &ConfigError{"out", "must name a directory"}
	case c.Progress < 100*time.Millisecond:
		return &ConfigError{"progress", "must be at least 100ms"}
	case c.needsHTTP() && c.ServerBin == "" && c.TokensFile == "" && c.Publisher == "" && c.Client == "":
		return &ConfigError{"tokens", "give --tokens FILE or --publisher-token/--client-token"}
	case c.Mode == ModeShed && c.ServerBin == "" && c.TokensFile == "" && c.Operator == "":
		return &ConfigError{"operator-token", "shed mode reads the ceilings from /v1/admin/stats and needs an operator token"}
	}
	return nil
}

// UnmarshalJSON reads the map MarshalJSON writes (result files round-trip).
// On error r is unchanged.
func (r *RateSet) UnmarshalJSON(b []byte) error {
	var m map[string]float64
	if err := json.Unmarshal(b, &m); err != nil {
		return &ConfigError{"rate", "must be a map of kind: requests per second"}
	}
	return r.setMap(m)
}
