package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rendezvous/rendezvous/client"
)

func runHost(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	var c common
	fs := flag.NewFlagSet("rendezvous-peer host", flag.ContinueOnError)
	c.register(fs)
	name := fs.String("name", "", "display name of the listing (required)")
	maxPlayers := fs.Int("max-players", 8, "max_players of the listing")
	players := fs.Int("players", 1, "current_players the listing starts with")
	var attrs multi
	fs.Var(&attrs, "attr", "an indexed attribute name=value of the listing (repeatable; an integer value is numeric): joiners filter on them")
	unlisted := fs.Bool("unlisted", false, "publish as unlisted (joinable by ID only)")
	echo := fs.Bool("echo", false, "answer every line a joiner sends with \"echo: <line>\"")
	if code, ok := c.parseArgs("host", fs, args, getenv, stderr); !ok {
		return code
	}
	if *name == "" {
		fmt.Fprintln(stderr, "rendezvous-peer host: --name is required")
		return exitUsage
	}
	as, err := parseAttributes(attrs)
	if err != nil {
		fmt.Fprintf(stderr, "rendezvous-peer host: %v\n", err)
		return exitUsage
	}
	// Event lines come from the Publisher's and the API's goroutines: out
	// keeps them whole next to the session's lines.
	out := &syncWriter{w: stdout}
	api, err := c.api(out)
	if err != nil {
		return exitCode(stderr, "host", err)
	}
	region := c.region
	if region == "" {
		region = "eu-central"
	}
	vis := "public"
	if *unlisted {
		vis = "unlisted"
	}
	spec := client.ListingSpec{Region: region, ProtocolVersion: uint32(c.protocol), BuildVersion: "1.0.0",
		DisplayName: *name, Visibility: vis, TrustMode: "player_hosted", CurrentPlayers: *players, MaxPlayers: *maxPlayers,
		Attributes: as}
	onEvent := func(ev client.Event) { fmt.Fprintf(out, "%s\n", describeEvent(ev)) }
	pub, err := client.Publish(ctx, client.PublisherConfig{API: api, Spec: spec, ListenAddr: c.listen, OnEvent: onEvent})
	if err != nil {
		return exitCode(stderr, "publish", err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := pub.Close(dctx); err != nil {
			fmt.Fprintf(stderr, "rendezvous-peer: closing the listing: %v\n", err)
		}
	}()
	sess := newSession(pub.Socket(), out, *echo)
	sess.printf("published listing %s (%q); public endpoint %v\n", pub.ListingID(), *name, pub.Public())
	sess.printf("listing %s is mediated by %v (HTTP through %s)\n", pub.ListingID(), pub.Mediator(), api.Server())
	sess.printf("waiting for joiners (Ctrl-C to close the listing)\n")
	go sess.loop(ctx)
	go hostStdin(ctx, sess, stdin)
	for {
		in, err := pub.Accept(ctx)
		if err != nil {
			if ctx.Err() != nil {
				sess.printf("closing listing %s\n", pub.ListingID())
				return exitOK
			}
			return exitCode(stderr, "host", err)
		}
		sess.printf("joiner introduced: %s\n", describeIntro(in))
		go func() {
			path, err := pub.Punch(ctx, in, client.PunchConfig{Timeout: c.punchTimeout})
			if err != nil {
				sess.printf("punch to joiner failed: %v\n", err)
				return
			}
			sess.addPeer(path.Peer, "joiner "+path.Peer.String())
			sess.printf("%s\n", describePath(path))
		}()
	}
}

// describeEvent says what happened to the listing and what the host does
// about it, so it never sits silent while its server is away.
func describeEvent(ev client.Event) string {
	switch ev.Kind {
	case client.EventUnreachable:
		return fmt.Sprintf("the server does not answer (mediator %v: %v); still trying", ev.Mediator, ev.Err)
	case client.EventLeaseLost:
		return fmt.Sprintf("listing %s lost (%v); publishing again in %v", ev.Listing, ev.Err, ev.RetryIn.Round(time.Millisecond))
	case client.EventDraining:
		return fmt.Sprintf("the server is draining; publishing again in %v", ev.RetryIn.Round(time.Millisecond))
	case client.EventRepublishFailed:
		return fmt.Sprintf("publishing again failed (%v); next try in %v", ev.Err, ev.RetryIn.Round(time.Millisecond))
	case client.EventMediatorMoved:
		return fmt.Sprintf("listing %s: presence now goes to mediator %v (the previous one stopped answering or drains)", ev.Listing, ev.Mediator)
	case client.EventRepublished:
		return fmt.Sprintf("published again as listing %s\nlisting %s is mediated by %v", ev.Listing, ev.Listing, ev.Mediator)
	case client.EventStopped:
		return fmt.Sprintf("listing %s stopped: %v", ev.Listing, ev.Err)
	}
	return ev.String()
}

// syncWriter serialises whole writes.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// hostStdin sends each stdin line to every punched joiner.
func hostStdin(ctx context.Context, sess *session, stdin io.Reader) {
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		for _, p := range sess.peerList() {
			go sess.say(ctx, p, sc.Text())
		}
	}
}
