package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/rendezvous/rendezvous/client"
)

// common are the flags both roles share.
type common struct {
	server       string
	token        string
	protocol     uint
	region       string
	listen       string
	punchTimeout time.Duration
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.server, "server", "http://127.0.0.1:8080", "the server's HTTP base URL, or the base URLs of several instances of one deployment separated by commas: requests go to the first that serves, and move to the next when it does not answer or answers 503")
	fs.StringVar(&c.token, "token", "", "bearer token (prefer RDV_TOKEN: flags show in the process list)")
	fs.UintVar(&c.protocol, "protocol", 7, "game protocol version")
	fs.StringVar(&c.region, "region", "", "region (host: advertised, default eu-central; join: browse filter)")
	fs.StringVar(&c.listen, "listen", "0.0.0.0:0", "local UDP address for mediator traffic and the punched path")
	fs.DurationVar(&c.punchTimeout, "punch-timeout", 5*time.Second, "how long to try hole punching")
}

// check refuses flag values no call could carry: protocol_version is a
// u32 (docs/contracts/http.md#create-a-listing), so a larger --protocol would silently wrap.
func (c *common) check() error {
	if c.protocol > math.MaxUint32 {
		return fmt.Errorf("--protocol %d is not in 1..%d", c.protocol, uint32(math.MaxUint32))
	}
	return nil
}

// parseArgs parses the command's flags (see parse) and checks the shared
// ones. ok is false when the command must stop: it then returns exitOK
// after -h, else prints why on stderr and returns exitUsage.
func (c *common) parseArgs(cmd string, fs *flag.FlagSet, args []string, getenv func(string) string, stderr io.Writer) (code int, ok bool) {
	err := parse(fs, args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK, false
	}
	if err == nil {
		err = c.check()
	}
	if err != nil {
		fmt.Fprintf(stderr, "rendezvous-peer %s: %v\n", cmd, err)
		return exitUsage, false
	}
	return exitOK, true
}

// api is the SDK's API on --server; each move of its requests to another
// instance is printed on out.
func (c *common) api(out io.Writer) (*client.API, error) {
	api, err := client.NewAPI(c.server, c.token, nil)
	if err != nil {
		return nil, err
	}
	api.OnServerChange = func(from, to string, cause error) {
		fmt.Fprintf(out, "server %s cannot serve (%v); requests now go to %s\n", from, cause, to)
	}
	return api, nil
}

// parse parses args, then fills every flag not given from RDV_<FLAG>.
func parse(fs *flag.FlagSet, args []string, getenv func(string) string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		env := "RDV_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(env); v != "" {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s: %v", env, e)
			}
		}
	})
	return err
}

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }
