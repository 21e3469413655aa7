package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rendezvous/rendezvous/client"
)

func runJoin(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	var c common
	fs := flag.NewFlagSet("rendezvous-peer join", flag.ContinueOnError)
	c.register(fs)
	listing := fs.String("listing", "", "ID of the listing to join")
	first := fs.Bool("first", false, "join the first listing browse returns (with the filters and order given)")
	quick := fs.Bool("quick", false, "quick join: the server picks the listing the filters find with the most players that is not full")
	var filters filterFlags
	filters.register(fs)
	var says multi
	fs.Var(&says, "say", "a line to send after the punch (repeatable; without it, stdin lines are sent)")
	replies := fs.Int("replies", 0, "with --say: wait for this many lines from the host before exiting")
	wait := fs.Duration("wait", 10*time.Second, "with --say: how long to wait for the replies")
	relayOnly := fs.Bool("relay-only", false, "connect through the server's TURN relay only: neither side learns the other's address")
	if code, ok := c.parseArgs("join", fs, args, getenv, stderr); !ok {
		return code
	}
	if n := btoi(*listing != "") + btoi(*first) + btoi(*quick); n != 1 {
		fmt.Fprintln(stderr, "rendezvous-peer join: give exactly one of --listing ID, --first or --quick")
		return exitUsage
	}
	q, err := filters.query()
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "rendezvous-peer join: %v\n", err)
		return exitUsage
	case *listing != "" && filters.given():
		fmt.Fprintln(stderr, "rendezvous-peer join: filters and --order go with --first or --quick, not --listing")
		return exitUsage
	case *quick && filters.order != "":
		fmt.Fprintln(stderr, "rendezvous-peer join: --quick has its own order (most players first); --order goes with --first")
		return exitUsage
	}
	q.Region = c.region
	// The API's moves come from its requests' goroutines.
	out := &syncWriter{w: stdout}
	stdout = out
	api, err := c.api(out)
	if err != nil {
		return exitCode(stderr, "join", err)
	}
	onEvent := func(ev client.Event) {
		if ev.Kind == client.EventAttemptCreated {
			fmt.Fprintf(out, "attempt %s is mediated by %v\n", ev.Attempt, ev.Mediator)
		}
	}
	j, err := client.NewJoiner(client.JoinerConfig{API: api, ProtocolVersion: uint32(c.protocol), ListenAddr: c.listen,
		RelayOnly: *relayOnly, OnEvent: onEvent})
	if err != nil {
		return exitCode(stderr, "join", err)
	}
	defer j.Close()
	var in client.Introduction
	if *quick {
		var id client.ListingID
		id, in, err = j.QuickJoin(ctx, q)
		if errors.Is(err, client.ErrNotFound) {
			fmt.Fprintln(stderr, "rendezvous-peer join: no listing matches")
			return exitNoListings
		}
		if err != nil {
			return exitCode(stderr, "quick join", err)
		}
		fmt.Fprintf(stdout, "quick join chose listing %s\n", id)
	} else {
		id, code := pickListing(ctx, j, *listing, q, stdout, stderr)
		if code != exitOK {
			return code
		}
		if in, err = j.Join(ctx, id); err != nil {
			return exitCode(stderr, "join", err)
		}
	}
	fmt.Fprintf(stdout, "introduced to host: %s\n", describeIntro(in))
	path, err := client.Punch(ctx, j.Socket(), in, client.RoleClient, client.PunchConfig{Timeout: c.punchTimeout})
	if err != nil {
		return exitCode(stderr, "punch", err)
	}
	sess := newSession(j.Socket(), stdout, false)
	sess.addPeer(path.Peer, "host")
	sess.printf("%s\n", describePath(path))
	go sess.loop(ctx)
	if len(says) > 0 {
		return joinSay(ctx, sess, path, says, *replies, *wait, stderr)
	}
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		if err := sess.say(ctx, path.Peer, sc.Text()); err != nil {
			return exitCode(stderr, "chat", err)
		}
	}
	return exitOK
}

// pickListing resolves --listing, or --first with its query q, to a
// listing ID.
func pickListing(ctx context.Context, j *client.Joiner, listing string, q client.BrowseQuery, stdout, stderr io.Writer) (client.ListingID, int) {
	if listing != "" {
		id, err := client.ParseListingID(listing)
		if err != nil {
			fmt.Fprintln(stderr, "rendezvous-peer join: --listing must be a UUID")
			return client.ListingID{}, exitUsage
		}
		l, err := j.Get(ctx, id)
		if err != nil {
			return id, exitCode(stderr, "get listing", err)
		}
		fmt.Fprintf(stdout, "joining listing %s (%q)\n", l.ListingID, l.DisplayName)
		return id, exitOK
	}
	for l, err := range j.BrowseWith(ctx, q) {
		if err != nil {
			return client.ListingID{}, exitCode(stderr, "browse", err)
		}
		fmt.Fprintf(stdout, "joining listing %s (%q, %d of %d players)\n", l.ListingID, l.DisplayName, l.CurrentPlayers, l.MaxPlayers)
		return l.ListingID, exitOK
	}
	fmt.Fprintln(stderr, "rendezvous-peer join: no joinable listing found")
	return client.ListingID{}, exitNoListings
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func joinSay(ctx context.Context, sess *session, path client.Path, says []string, replies int, wait time.Duration, stderr io.Writer) int {
	for _, line := range says {
		if err := sess.say(ctx, path.Peer, line); err != nil {
			return exitCode(stderr, "chat", err)
		}
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	for got := 0; got < replies; got++ {
		select {
		case <-sess.received:
		case <-t.C:
			fmt.Fprintf(stderr, "rendezvous-peer: got %d of %d replies within %v\n", got, replies, wait)
			return exitFailure
		case <-ctx.Done():
			return exitFailure
		}
	}
	return exitOK
}
