package main

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// reloadReachBound is how soon a reload asked of one instance must be in
// force on every other (docs/operations.md, "Reloading").
const reloadReachBound = time.Second

// principalsLabel reads the sha256_prefix label of
// rendezvous_principals_info from p's --metrics-addr.
func principalsLabel(t *testing.T, p *proc) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^rendezvous_principals_info\{sha256_prefix="([0-9a-f]{16})"\} 1$`).
		FindAllStringSubmatch(scrapeURL(t, "http://"+metricsAddr(t, p)+"/metrics").text, -1)
	if len(m) != 1 {
		t.Fatalf("want one rendezvous_principals_info series, got %v", m)
	}
	return m[0][1]
}

// refusedWithin polls p until subject's token gets 401 and returns how
// long that took from since (failing after the bound, twice over).
func refusedWithin(t *testing.T, p *proc, subject string, since time.Time) time.Duration {
	t.Helper()
	for time.Since(since) < 2*reloadReachBound {
		if p.status(subject) == http.StatusUnauthorized {
			return time.Since(since)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s still served %v after the reload", subject, 2*reloadReachBound)
	return 0
}

// TestE2EPrincipalsReloadReachesEveryInstance: two real instances on one
// real Redis, each with its own copy of the principals file. A principal
// removed from the copies and reloaded on one instance (the route, then
// SIGHUP on the other) is refused by the other within a second; both
// export the same principals hash, and copies that differ show different
// hashes.
func TestE2EPrincipalsReloadReachesEveryInstance(t *testing.T) {
	args := redisStoreArgs(t)
	dir := t.TempDir()
	fileA, fileB := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	all := []string{"pub-1", "cli-1", "cli-2", "gop"}
	writeReloadPrincipals(t, fileA, all...)
	writeReloadPrincipals(t, fileB, all...)
	a := startProc(t, append(args, "--principals", fileA, "--metrics-addr", "127.0.0.1:0")...)
	b := startProc(t, append(args, "--principals", fileB, "--metrics-addr", "127.0.0.1:0")...)
	if la, lb := principalsLabel(t, a), principalsLabel(t, b); la != lb {
		t.Fatalf("the same principals, different hashes: %s %s", la, lb)
	}
	before := principalsLabel(t, a)
	for _, s := range all {
		if a.status(s) != http.StatusOK || b.status(s) != http.StatusOK {
			t.Fatalf("%s not served at start", s)
		}
	}

	// The route on A: cli-2 removed from both copies.
	writeReloadPrincipals(t, fileA, "pub-1", "cli-1", "gop")
	writeReloadPrincipals(t, fileB, "pub-1", "cli-1", "gop")
	a.call("POST", "/v1/admin/principals/reload", reloadTokens["gop"], nil).expect(t, "reload on a", http.StatusOK, nil)
	asked := time.Now()
	if a.status("cli-2") != http.StatusUnauthorized {
		t.Fatal("a still serves cli-2 after its own reload")
	}
	took := refusedWithin(t, b, "cli-2", asked)
	t.Logf("route on a: b refused the removed principal %v after a answered", took)
	if took > reloadReachBound {
		t.Errorf("b refused the removed principal %v after the reload on a, want within %v", took, reloadReachBound)
	}
	b.waitLogged("principals reloaded", 1)
	if got := b.logged("principals reloaded"); got["by"] != "instance "+a.first["instance"].(string) || got["removed"] != 1.0 {
		t.Errorf("b's reload line %v, want by instance %v, removed 1", got, a.first["instance"])
	}
	if a.logged("principals reload announced to the deployment") == nil {
		t.Error("a did not log the announcement")
	}
	la, lb := principalsLabel(t, a), principalsLabel(t, b)
	if la != lb || la == before {
		t.Errorf("after the reload: hashes %s and %s (before %s), want one new hash", la, lb, before)
	}

	// SIGHUP on B: cli-1 removed; A follows.
	writeReloadPrincipals(t, fileA, "pub-1", "gop")
	writeReloadPrincipals(t, fileB, "pub-1", "gop")
	b.signal(syscall.SIGHUP)
	asked = time.Now()
	took = refusedWithin(t, a, "cli-1", asked)
	t.Logf("SIGHUP on b: a refused the removed principal %v after the signal", took)
	if took > reloadReachBound {
		t.Errorf("a refused the removed principal %v after SIGHUP on b, want within %v", took, reloadReachBound)
	}

	// Copies that differ: each instance serves its own, and the hashes
	// say they differ.
	writeReloadPrincipals(t, fileB, "pub-1", "gop", "cli-1")
	a.signal(syscall.SIGHUP)
	b.waitLogged("principals reloaded", 3)
	if b.status("cli-1") != http.StatusOK || a.status("cli-1") != http.StatusUnauthorized {
		t.Fatal("each instance should serve its own copy of the file")
	}
	if la, lb := principalsLabel(t, a), principalsLabel(t, b); la == lb {
		t.Errorf("different principals, one hash %s", la)
	}

	var secrets []string
	for _, tok := range reloadTokens {
		sum := sha256.Sum256([]byte(tok))
		secrets = append(secrets, tok, hex.EncodeToString(sum[:]))
	}
	a.assertNoSecrets(secrets, nil)
	b.assertNoSecrets(secrets, nil)
}
