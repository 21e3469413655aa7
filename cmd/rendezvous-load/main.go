// Command rendezvous-load drives a running Rendezvous server over real HTTP
// and batched UDP and reports what it saw: a live progress line, a summary
// table, result.json and report.html. In shed mode it fills every pool to its
// ceiling, overloads it and validates typed shedding and zero eviction; in
// soak mode it runs mixed load for a long time and fails when the server's
// resources grow without bound. Every run deletes the listings it created.
//
// Usage:
//
//	rendezvous-load principals [--publishers 260] [--principals-out F] [--tokens-out F]
//	rendezvous-load report --in result.json --out report.html
//	rendezvous-load --mode shed --http 127.0.0.1:8080 --tokens tokens.json
//	rendezvous-load --mode load --http 127.0.0.1:8080 --tokens tokens.json --rate browse=200,join=20
//	rendezvous-load --mode soak --server-bin bin/rendezvous --duration 30m
//
//	rendezvous-load --version
//
// Exit status: 0 every check passed, 1 a check failed (each failure is named
// on stderr), 2 bad usage, 3 the run could not be carried out.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/rendezvous/rendezvous/internal/version"
)

// Exit statuses.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
	exitError  = 3
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, isTerminal(os.Stdout)))
}

// subcommands are the tools run by their first argument instead of a load
// run: an error is a usage error (exit 2), -h an exit 0.
var subcommands = map[string]func(args []string, stderr io.Writer) error{
	"principals": runPrincipals,
	"report":     runReport,
}

func run(args []string, stdout, stderr io.Writer, tty bool) int {
	if version.Requested(args) {
		fmt.Fprint(stdout, version.Line("rendezvous-load"))
		return exitOK
	}
	if len(args) > 0 {
		if sub, ok := subcommands[args[0]]; ok {
			if err := sub(args[1:], stderr); err != nil {
				if errors.Is(err, flag.ErrHelp) {
					return exitOK
				}
				fmt.Fprintf(stderr, "rendezvous-load %s: %v\n", args[0], err)
				return exitUsage
			}
			return exitOK
		}
	}
	cfg, err := parseConfig(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "rendezvous-load: %v\n", err)
		return exitUsage
	}
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			fmt.Fprintf(stderr, "rendezvous-load: cannot create CPU profile: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "rendezvous-load: cannot start CPU profile: %v\n", err)
			return exitError
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if cfg.ServerBin != "" {
		srv, err := startOwnServer(cfg)
		if err != nil {
			return errorStatus(stderr, err)
		}
		defer srv.stop()
	}
	r, err := newRun(ctx, cfg, stdout)
	if err != nil {
		return errorStatus(stderr, err)
	}
	defer r.close()
	r.tty = tty
	res := &Result{Mode: cfg.Mode, RunID: r.runID, Started: r.start.UTC(), HTTP: cfg.HTTPAddr, Config: cfg}
	progStop, progDone := make(chan struct{}), make(chan struct{})
	go r.progress(cfg.Progress, tty, progStop, progDone)
	switch cfg.Mode {
	case ModeShed:
		err = runShed(ctx, r, res)
	case ModeUDPRate:
		err = runUDPRate(ctx, r, res)
	case ModeSoak:
		err = runSoak(ctx, r, res)
	default:
		err = runLoad(ctx, r, res)
	}
	if err == nil {
		r.relayCheck(res)
	}
	interrupted := ctx.Err() != nil
	// The cleanup runs after an interrupt too; a further SIGINT or SIGTERM
	// cuts it short.
	cleanupCtx, cleanupStop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	r.cleanup(cleanupCtx, res)
	cleanupStop()
	close(progStop)
	<-progDone
	if err == nil && interrupted {
		err = fmt.Errorf("interrupted")
	}
	res.Seconds = time.Since(r.start).Seconds()
	res.Mediator = r.mediator
	r.phaseMu.Lock()
	res.Timeline = append([]Phase(nil), r.phases...)
	res.Series = append([]SeriesPoint(nil), r.series...)
	for _, p := range r.phases {
		if rec := r.phaseRecs[p.Name]; rec != nil {
			res.Phases = append(res.Phases, summarize(p.Name, p.End-p.Start, rec))
		}
	}
	r.phaseMu.Unlock()
	if err != nil {
		res.Checks = append(res.Checks, Check{Name: "run", OK: false, Detail: err.Error()})
	}
	res.decide()
	writeSummary(stdout, res)
	if werr := writeOutputs(cfg.Out, res); werr != nil {
		fmt.Fprintf(stderr, "rendezvous-load: %v\n", werr)
		return exitError
	}
	fmt.Fprintf(stdout, "wrote %s/result.json and %s/report.html\n", cfg.Out, cfg.Out)
	if err != nil {
		return errorStatus(stderr, err)
	}
	if !res.Passed {
		for _, c := range res.Checks {
			if !c.OK {
				fmt.Fprintf(stderr, "FAILED %s: %s\n", c.Name, c.Detail)
			}
		}
		fmt.Fprintf(stderr, "rendezvous-load: %s\n", res.Verdict)
		return exitFailed
	}
	return exitOK
}

// errorStatus prints err and returns its exit status: bad usage for a
// *ConfigError, else the run could not be carried out.
func errorStatus(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "rendezvous-load: %v\n", err)
	var ce *ConfigError
	if errors.As(err, &ce) {
		return exitUsage
	}
	return exitError
}
