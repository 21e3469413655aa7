package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rendezvous/rendezvous/engine/redisstore/planned"
)

// runFailover is `rendezvous failover`: the planned failover of the Redis
// primary behind a Sentinel deployment (engine/redisstore/planned): pause
// the primary's writes, wait until every replica has them, SENTINEL
// FAILOVER, wait until the promoted replica is a primary named by the
// sentinels, make the old primary its replica, unpause. It refuses with
// fewer than --min-in-sync replicas in sync unless --force. It reads
// --redis-sentinel, --redis-master and --redis-password-file (and their
// RDV_* variables) as the server does, so it runs with the instances'
// environment.
func runFailover(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rendezvous failover", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		sentinels []string
		master    string
		pwFile    string
		o         planned.Options
	)
	fs.Func("redis-sentinel", "Sentinel `host:port` list, comma-separated (RDV_REDIS_SENTINEL)", func(s string) error {
		var err error
		sentinels, err = splitAddrs(s)
		return err
	})
	fs.StringVar(&master, "redis-master", "", "`name` of the primary the sentinels monitor (RDV_REDIS_MASTER)")
	fs.StringVar(&pwFile, "redis-password-file", "", "`file` holding the Redis password (RDV_REDIS_PASSWORD_FILE)")
	fs.DurationVar(&o.Timeout, "timeout", planned.DefaultTimeout, "bound on the whole failover, and on the primary's write pause should this command die")
	fs.IntVar(&o.MinInSync, "min-in-sync", planned.DefaultMinInSync, "replicas that must be online and in sync before anything is done")
	fs.BoolVar(&o.Force, "force", false, "run with fewer than --min-in-sync replicas in sync (the promoted replica may be left without one)")
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: rendezvous failover [flags]\n\n"+
			"Moves the Redis primary role to a replica through Sentinel without losing an\n"+
			"acknowledged write: pause the primary's writes, wait for every replica, SENTINEL\n"+
			"FAILOVER, wait for the promotion, make the old primary a replica, unpause.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range []string{"redis-sentinel", "redis-master", "redis-password-file"} {
		if v := env(envName(name)); v != "" && !set[name] {
			if err := fs.Set(name, v); err != nil {
				fmt.Fprintf(stderr, "rendezvous failover: %s: %v\n", envName(name), err)
				return exitUsage
			}
		}
	}
	if len(sentinels) == 0 || master == "" {
		fmt.Fprintln(stderr, "rendezvous failover: needs --redis-sentinel and --redis-master (or RDV_REDIS_SENTINEL and RDV_REDIS_MASTER)")
		return exitUsage
	}
	if pwFile != "" {
		pw, _, err := readRedisPassword(pwFile)
		if err != nil {
			fmt.Fprintf(stderr, "rendezvous failover: --redis-password-file: %v\n", err)
			return exitUsage
		}
		o.Password = pw
	}
	o.Sentinels, o.Master = sentinels, master
	start := time.Now()
	o.Log = func(step string, kv ...any) {
		fmt.Fprintf(stdout, "%7.3fs %s", time.Since(start).Seconds(), step)
		for i := 0; i+1 < len(kv); i += 2 {
			fmt.Fprintf(stdout, " %v=%v", kv[i], kv[i+1])
		}
		fmt.Fprintln(stdout)
	}
	res, err := planned.Failover(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "rendezvous failover: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "promoted %s (was %s); the old primary refused writes for %v\n", res.New, res.Old, res.Paused.Round(time.Millisecond))
	return exitOK
}
