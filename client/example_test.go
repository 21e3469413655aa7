package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"sync"
	"time"

	"github.com/rendezvous/rendezvous/client"
)

// The bodies of these examples are the code blocks of docs/sdk.md, in this
// order (TestSDKDocMatchesExamples keeps them equal). They run against a
// real server the test binary starts (example_server_test.go).

func Example_host() {
	ctx := context.Background()
	api, err := client.NewAPI(os.Getenv("RDV_SERVER"), os.Getenv("RDV_HOST_TOKEN"), nil)
	if err != nil {
		log.Fatal(err)
	}
	pub, err := client.Publish(ctx, client.PublisherConfig{
		API: api,
		Spec: client.ListingSpec{Region: "eu-central", ProtocolVersion: 7, BuildVersion: "1.2.3",
			DisplayName: "My game", Visibility: "public", TrustMode: "player_hosted",
			CurrentPlayers: 1, MaxPlayers: 8},
		// A lost listing (server restart, drain, expiry) is published again
		// by itself; OnEvent says so.
		OnEvent: func(ev client.Event) { log.Println("publisher:", ev) },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer pub.Close(ctx) // deletes the listing
	l, err := api.GetListing(ctx, pub.ListingID())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("published %q for up to %d players\n", l.DisplayName, l.MaxPlayers)
	// Output: published "My game" for up to 8 players
}

func Example_join() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // bounds every wait below
	defer cancel()
	// The host side: publish, then greet each joiner on the punched path.
	hostAPI, err := client.NewAPI(os.Getenv("RDV_SERVER"), os.Getenv("RDV_HOST_TOKEN"), nil)
	if err != nil {
		log.Fatal(err)
	}
	pub, err := client.Publish(ctx, client.PublisherConfig{API: hostAPI, Spec: client.ListingSpec{
		Region: "eu-central", ProtocolVersion: 7, BuildVersion: "1.2.3", DisplayName: "Coop night",
		Visibility: "public", TrustMode: "player_hosted", CurrentPlayers: 1, MaxPlayers: 4}})
	if err != nil {
		log.Fatal(err)
	}
	defer pub.Close(ctx)
	var players sync.Map // the punched paths' peers
	go func() {
		for {
			in, err := pub.Accept(ctx) // an introduced joiner
			if err != nil {
				return // ErrClosed after Close; Err says why it stopped
			}
			path, err := pub.Punch(ctx, in, client.PunchConfig{})
			if err != nil {
				continue // ErrPunchFailed: neither a direct path nor the relay worked
			}
			players.Store(path.Peer, true)
		}
	}()
	go func() { // the game's own traffic: answer the players
		buf := make([]byte, 1500)
		for {
			n, from, err := pub.Socket().ReadFrom(ctx, buf)
			if err != nil {
				return
			}
			if _, ok := players.Load(from); ok {
				pub.Socket().WriteTo(append([]byte("welcome, "), buf[:n]...), from)
			}
		}
	}()

	// The player side: find the listing, join it, punch, talk.
	api, err := client.NewAPI(os.Getenv("RDV_SERVER"), os.Getenv("RDV_PLAYER_TOKEN"), nil)
	if err != nil {
		log.Fatal(err)
	}
	j, err := client.NewJoiner(client.JoinerConfig{API: api, ProtocolVersion: 7})
	if err != nil {
		log.Fatal(err)
	}
	defer j.Close()
	for l, err := range j.Browse(ctx, "eu-central") { // every page, in ID order
		if err != nil {
			log.Fatal(err)
		}
		if l.DisplayName != "Coop night" {
			continue
		}
		_, path, err := j.JoinAndPunch(ctx, l.ListingID, client.PunchConfig{})
		if err != nil {
			log.Fatal(err)
		}
		buf := make([]byte, 1500)
		n := 0
		for n == 0 { // UDP may lose either datagram: send again until answered
			j.Socket().WriteTo([]byte("player one"), path.Peer)
			wait, cancel := context.WithTimeout(ctx, 250*time.Millisecond)
			n, _, _ = j.Socket().ReadFrom(wait, buf)
			cancel()
			if ctx.Err() != nil {
				log.Fatal("the host never answered: ", ctx.Err())
			}
		}
		fmt.Println(string(buf[:n]))
		break
	}
	// Output: welcome, player one
}

func Example_filters() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hostAPI, err := client.NewAPI(os.Getenv("RDV_SERVER"), os.Getenv("RDV_HOST_TOKEN"), nil)
	if err != nil {
		log.Fatal(err)
	}
	// Three hosts: their player counts and indexed attributes.
	for _, h := range []struct {
		name    string
		players int
		attrs   client.Attributes
	}{
		{"Coop, nearly full", 7, client.Attributes{"mode": "coop", "level": 12}},
		{"Coop, quiet", 2, client.Attributes{"mode": "coop", "level": 3}},
		{"Versus", 5, client.Attributes{"mode": "pvp"}},
	} {
		pub, err := client.Publish(ctx, client.PublisherConfig{API: hostAPI, Spec: client.ListingSpec{
			Region: "eu-central", ProtocolVersion: 7, BuildVersion: "1.2.3", DisplayName: h.name,
			Visibility: "public", TrustMode: "player_hosted", CurrentPlayers: h.players, MaxPlayers: 8,
			Attributes: h.attrs}})
		if err != nil {
			log.Fatal(err)
		}
		defer pub.Close(ctx)
	}

	api, err := client.NewAPI(os.Getenv("RDV_SERVER"), os.Getenv("RDV_PLAYER_TOKEN"), nil)
	if err != nil {
		log.Fatal(err)
	}
	j, err := client.NewJoiner(client.JoinerConfig{API: api, ProtocolVersion: 7})
	if err != nil {
		log.Fatal(err)
	}
	defer j.Close()
	// A server browser: not full, mode = coop, most players first.
	q := client.BrowseQuery{}.NotFull().Where("mode", "coop").OrderBy("-current_players")
	for l, err := range j.BrowseWith(ctx, q) { // follows next_cursor
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(l.DisplayName, l.CurrentPlayers, l.Attributes["level"])
	}
	// "Play now": the server picks the busiest coop session with room.
	id, _, err := j.QuickJoin(ctx, client.BrowseQuery{}.Where("mode", "coop").WhereNumber("level", "ge", 10))
	if err != nil {
		log.Fatal(err)
	}
	l, err := api.GetListing(ctx, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("quick join:", l.DisplayName)
	// Output:
	// Coop, nearly full 7 12
	// Coop, quiet 2 3
	// quick join: Coop, nearly full
}

func Example_relay() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // bounds every wait below
	defer cancel()
	// The host requires relay-only joins: no player learns its address.
	hostAPI, err := client.NewAPI(os.Getenv("RDV_SERVER"), os.Getenv("RDV_HOST_TOKEN"), nil)
	if err != nil {
		log.Fatal(err)
	}
	pub, err := client.Publish(ctx, client.PublisherConfig{API: hostAPI, Spec: client.ListingSpec{
		Region: "eu-central", ProtocolVersion: 7, BuildVersion: "1.2.3", DisplayName: "Private room",
		Visibility: "public", TrustMode: "player_hosted", CurrentPlayers: 1, MaxPlayers: 4,
		RelayOnlyJoins: true}})
	if err != nil {
		log.Fatal(err)
	}
	defer pub.Close(ctx)
	var players sync.Map
	go func() {
		for {
			in, err := pub.Accept(ctx) // in.RelayOnly(): no joiner address
			if err != nil {
				return
			}
			path, err := pub.Punch(ctx, in, client.PunchConfig{}) // through the relay
			if err != nil {
				continue // errors.Is(err, client.ErrRelayRefused), ...
			}
			players.Store(path.Peer, true) // the player's relayed address
		}
	}()
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pub.Socket().ReadFrom(ctx, buf)
			if err != nil {
				return
			}
			if _, ok := players.Load(from); ok {
				pub.Socket().WriteTo(append([]byte("relayed welcome, "), buf[:n]...), from)
			}
		}
	}()

	// The player side is the same as for a direct join.
	api, err := client.NewAPI(os.Getenv("RDV_SERVER"), os.Getenv("RDV_PLAYER_TOKEN"), nil)
	if err != nil {
		log.Fatal(err)
	}
	j, err := client.NewJoiner(client.JoinerConfig{API: api, ProtocolVersion: 7})
	if err != nil {
		log.Fatal(err)
	}
	defer j.Close()
	for l, err := range j.Browse(ctx, "eu-central") {
		if err != nil {
			log.Fatal(err)
		}
		if l.DisplayName != "Private room" {
			continue
		}
		in, path, err := j.JoinAndPunch(ctx, l.ListingID, client.PunchConfig{})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("host address known:", in.Public.IsValid(), "relayed:", path.Relayed)
		buf := make([]byte, 1500)
		n := 0
		for n == 0 { // UDP may lose either datagram: send again until answered (through the relay)
			j.Socket().WriteTo([]byte("player two"), path.Peer)
			wait, cancel := context.WithTimeout(ctx, 250*time.Millisecond)
			n, _, _ = j.Socket().ReadFrom(wait, buf)
			cancel()
			if ctx.Err() != nil {
				log.Fatal("the host never answered: ", ctx.Err())
			}
		}
		fmt.Println(string(buf[:n]))
		// The attempt's state, as the server keeps it (for a stuck join too).
		st, err := api.AttemptStatus(ctx, in.AttemptID())
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("attempt:", st.State, st.Reason, "my outcome:", st.ClientOutcome.Path)
		break
	}
	// Output:
	// host address known: false relayed: true
	// relayed welcome, player two
	// attempt: relayed relayed my outcome: relayed
}

func Example_errors() {
	ctx := context.Background()
	api, err := client.NewAPI(os.Getenv("RDV_SERVER"), os.Getenv("RDV_PLAYER_TOKEN"), nil)
	if err != nil {
		log.Fatal(err)
	}
	id, err := client.ParseListingID("0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0")
	if err != nil {
		log.Fatal(err)
	}
	_, err = api.GetListing(ctx, id)
	fmt.Println(errors.Is(err, client.ErrNotFound), err)

	_, err = client.ParseListingID("lobby-7")
	var bad *client.InputError
	fmt.Println(errors.As(err, &bad), bad.Field)
	// Output:
	// true rendezvous: get listing: HTTP 404 not_found: Not found
	// true listing_id
}
