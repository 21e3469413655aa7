package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const testTurnSecret = "relay-shared-secret-value"

func turnSecretFile(t *testing.T, content string, perm os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "turn-secret")
	if err := os.WriteFile(p, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseConfigTurn(t *testing.T) {
	// Off by default.
	c, err := parseConfig([]string{"--dev"}, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Turn.Enabled() || c.Turn.TTL != 10*time.Minute || c.Turn.Secret != nil {
		t.Fatalf("default relay settings %+v, want off with a 10m ttl", c.Turn)
	}
	if iss, err := c.Turn.issuer(); iss != nil || err != nil {
		t.Fatalf("issuer with relay off: %v %v", iss, err)
	}

	secret := turnSecretFile(t, testTurnSecret+"\r\n", 0o600)
	// The environment: comma-separated URIs.
	c, err = parseConfig([]string{"--dev"}, envOf(map[string]string{
		"RDV_TURN_URI":         "turn:relay.example:3478?transport=udp, turns:relay.example:5349?transport=tcp",
		"RDV_TURN_SECRET_FILE": secret, "RDV_TURN_TTL": "90s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"turn:relay.example:3478?transport=udp", "turns:relay.example:5349?transport=tcp"}
	if !c.Turn.Enabled() || !reflect.DeepEqual(c.Turn.URIs, want) || string(c.Turn.Secret) != testTurnSecret ||
		c.Turn.TTL != 90*time.Second || c.Turn.SecretShared {
		t.Fatalf("relay settings from the environment: %+v", c.Turn)
	}
	iss, err := c.Turn.issuer()
	if err != nil || iss == nil || !reflect.DeepEqual(iss.URLs(), want) || iss.TTL() != 90*time.Second {
		t.Fatalf("issuer %v %v", iss, err)
	}

	// The command line: the flag repeated, and it wins over the environment.
	c, err = parseConfig([]string{"--dev", "--turn-uri", "turn:10.0.0.1", "--turn-uri", "turn:[2001:db8::1]:3478",
		"--turn-secret-file", secret}, envOf(map[string]string{"RDV_TURN_URI": "turn:ignored.example"}))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Turn.URIs, []string{"turn:10.0.0.1", "turn:[2001:db8::1]:3478"}) {
		t.Fatalf("uris %q", c.Turn.URIs)
	}
	// The relayed-address allow-list: repeated and comma-separated, masked.
	c, err = parseConfig([]string{"--dev", "--relay-allow-peers", "127.0.0.1/8, 10.99.0.0/16", "--relay-allow-peers", "fd00::/8"}, envOf(nil))
	if err != nil || fmt.Sprint(c.Turn.AllowPeers) != "[127.0.0.0/8 10.99.0.0/16 fd00::/8]" {
		t.Fatalf("relay-allow-peers: %v %v", c.Turn.AllowPeers, err)
	}
	// A secret file others can read is accepted and flagged (start warns).
	shared := turnSecretFile(t, testTurnSecret, 0o644)
	if c, err = parseConfig([]string{"--dev", "--turn-uri", "turn:a", "--turn-secret-file", shared}, envOf(nil)); err != nil || !c.Turn.SecretShared {
		t.Fatalf("shared secret file: %v %+v", err, c)
	}
}

func TestParseConfigTurnRejects(t *testing.T) {
	secret := turnSecretFile(t, testTurnSecret, 0o600)
	f := func(args []string, env map[string]string, setting, source string) {
		t.Helper()
		_, err := parseConfig(append([]string{"--dev"}, args...), envOf(env))
		var se *settingError
		if !errors.As(err, &se) || se.Setting != setting || se.Source != source {
			t.Fatalf("%v %v: error %v, want one naming %s from %s", args, env, err, setting, source)
		}
		if strings.Contains(err.Error(), testTurnSecret) {
			t.Fatalf("the error quotes the secret: %v", err)
		}
	}
	e := map[string]string{}
	for _, bad := range []string{"relay.example:3478", "stun:relay.example", "turn:", "turn::3478", "turn:relay.example:0",
		"turn:relay.example:x", "turn:relay.example?transport=sctp", "turn:relay.example?transport=udp&x=1",
		"turn:user@relay.example", "turn:relay.example,", "http://relay.example"} {
		f([]string{"--turn-uri", bad, "--turn-secret-file", secret}, e, "turn-uri", "flag --turn-uri")
	}
	f(nil, map[string]string{"RDV_TURN_URI": "turn:a,,turn:b", "RDV_TURN_SECRET_FILE": secret}, "turn-uri", "RDV_TURN_URI")
	f([]string{"--relay-allow-peers", "10.0.0.1"}, e, "relay-allow-peers", "flag --relay-allow-peers")
	f(nil, map[string]string{"RDV_RELAY_ALLOW_PEERS": "10.0.0.0/8,x"}, "relay-allow-peers", "RDV_RELAY_ALLOW_PEERS")
	f([]string{"--turn-uri", "turn:a"}, e, "turn-secret-file", "default")
	f([]string{"--turn-secret-file", secret}, e, "turn-uri", "default")
	f([]string{"--turn-uri", "turn:a", "--turn-secret-file", filepath.Join(t.TempDir(), "missing")}, e, "turn-secret-file", "flag --turn-secret-file")
	for name, content := range map[string]string{"empty": "", "newline only": "\n", "two lines": "a\nb\n", "too long": strings.Repeat("s", 513)} {
		t.Logf("secret file %s", name)
		f([]string{"--turn-uri", "turn:a"}, map[string]string{"RDV_TURN_SECRET_FILE": turnSecretFile(t, content, 0o600)}, "turn-secret-file", "RDV_TURN_SECRET_FILE")
	}
	f([]string{"--turn-ttl", "9s"}, e, "turn-ttl", "flag --turn-ttl")
	f(nil, map[string]string{"RDV_TURN_TTL": "25h"}, "turn-ttl", "RDV_TURN_TTL")
	f(nil, map[string]string{"RDV_TURN_TTL": "soon"}, "turn-ttl", "RDV_TURN_TTL")
}

// The secret reaches neither --help nor the start-up log.
func TestTurnSecretNeverPrinted(t *testing.T) {
	secret := turnSecretFile(t, testTurnSecret, 0o644)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"--help"}, envOf(map[string]string{"RDV_TURN_SECRET_FILE": secret}), &out, &errb); code != exitOK {
		t.Fatalf("--help: status %d", code)
	}
	if strings.Contains(out.String(), testTurnSecret) || !strings.Contains(out.String(), "RDV_TURN_SECRET_FILE") {
		t.Fatalf("--help quotes the secret or misses the setting:\n%s", out.String())
	}
	// A start with relay on, stopped at once: the log names the relay and
	// warns about the readable file, never the secret.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out.Reset()
	errb.Reset()
	run(ctx, []string{"--dev", "--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0",
		"--turn-uri", "turn:127.0.0.1:3478", "--turn-secret-file", secret}, envOf(nil), &out, &errb)
	log := out.String() + errb.String()
	if strings.Contains(log, testTurnSecret) {
		t.Fatalf("the log quotes the secret:\n%s", log)
	}
	if !strings.Contains(log, "relay") || !strings.Contains(log, "turn secret file is readable") {
		t.Fatalf("the log does not report the relay settings:\n%s", log)
	}
}
