package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rendezvous/rendezvous/client"
)

func runHost(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	var c common
	fs := flag.NewFlagSet("rendezvous-peer host", flag.ContinueOnError)
	c.register(fs)
	name := fs.String("name", "", "display name of the listing (required)")
	maxPlayers := fs.Int("max-players", 8, "max_players of the listing")
	unlisted := fs.Bool("unlisted", false, "publish as unlisted (joinable by ID only)")
	echo := fs.Bool("echo", false, "answer every line a joiner sends with \"echo: <line>\"")
	if code, ok := c.parseArgs("host", fs, args, getenv, stderr); !ok {
		return code
	}
	if *name == "" {
		fmt.Fprintln(stderr, "rendezvous-peer host: --name is required")
		return exitUsage
	}
	api, err := c.api()
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
		DisplayName: *name, Visibility: vis, TrustMode: "player_hosted", CurrentPlayers: 1, MaxPlayers: *maxPlayers}
	pub, err := client.Publish(ctx, client.PublisherConfig{API: api, Spec: spec, ListenAddr: c.listen})
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
	sess := newSession(pub.Socket(), stdout, *echo)
	sess.printf("published listing %s (%q); public endpoint %v\n", pub.ListingID(), *name, pub.Public())
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
		sess.printf("joiner introduced: public %v local %v\n", in.Public, in.Local)
		go func() {
			path, err := pub.Punch(ctx, in, client.PunchConfig{Timeout: c.punchTimeout})
			if err != nil {
				sess.printf("punch to joiner failed: %v\n", err)
				return
			}
			sess.addPeer(path.Peer, "joiner "+path.Peer.String())
			sess.printf("punched: direct path to %v in %v\n", path.Peer, path.Elapsed.Round(10*time.Microsecond))
		}()
	}
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
