package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderShared: the shared-state tables hold each figure against its
// target (met and not met; the refresh answering an offer is shown, not
// held to it), the document's results region is rewritten in
// place (its prose kept, the previous run's tables gone), and the page's
// section carries the same tables.
func TestRenderShared(t *testing.T) {
	in, docs := t.TempDir(), t.TempDir()
	write := writer(t)
	write(filepath.Join(in, "shared-state.txt"), "pkg: github.com/rendezvous/rendezvous/bench\n"+
		"BenchmarkRedisStore/op=presence-batch128-2 100 640000 ns/op 10000 ns/item 192 redis-us/op 3 redis-us/refresh\n"+
		"BenchmarkRedisStore/op=presence-batch128-offered-2 100 700000 ns/op 11000 ns/item 256 redis-us/op 4 redis-us/refresh\n"+
		"BenchmarkRedisStore/op=renew-2 100 150000 ns/op 40 redis-us/op\n")
	write(filepath.Join(in, "meta-shared-state.txt"), "shared-state: 2026-12-01 16:00 UTC\n")
	write(filepath.Join(in, "udprate-memory", "result.json"), `{"mode":"udprate","udp_rate":{"kind":"presence","answered_per_s":100000,"server_cpu_us_per_answer":4}}`)
	write(filepath.Join(in, "udprate-redis", "result.json"), `{"mode":"udprate","udp_rate":{"kind":"presence","answered_per_s":60000,"server_cpu_us_per_answer":7}}`)
	doc := filepath.Join(docs, "shared-state.md")
	write(doc, "# Shared\n\nProse before.\n\n"+marker+"\nold tables\n"+endMarker+"\n\nProse after.\n")

	var page strings.Builder
	if err := renderShared(&page, in, docs, "shared-state: 2026-12-01 16:00 UTC"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, text := range []string{got, page.String()} {
		for _, want := range []string{
			"| presence refresh, 128 per ApplyBatch (the server's fullest commit on Redis) | 640 µs  | 192 µs | **3 µs** | ≤ 2 µs: **not met** |",
			"| presence refresh answering a pending offer, 128 per ApplyBatch | 700 µs  | 256 µs | 4 µs | the offer is pending only until the host's next datagram |",
			"| lease renewal | 150 µs  | 40 µs | | |",
			"| listing creation | not measured |",
			"| redis | 60000 | 0 | 7.00 µs |",
			"Rate ratio redis ÷ memory: **0.60** (target ≥ 0.5: met)",
			"shared-state: 2026-12-01 16:00 UTC",
			"Prose before.", "Prose after.",
		} {
			if !strings.Contains(text, want) {
				t.Fatalf("lacks %q:\n%s", want, text)
			}
		}
	}
	if strings.Contains(got, "old tables") || strings.Count(got, marker) != 1 || strings.Count(got, endMarker) != 1 {
		t.Fatalf("results region not replaced:\n%s", got)
	}
	if strings.Contains(page.String(), endMarker) {
		t.Fatalf("the page carries the document's end marker:\n%s", page.String())
	}
	// Rendering again changes nothing.
	if err := renderShared(&strings.Builder{}, in, docs, "shared-state: 2026-12-01 16:00 UTC"); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(doc); string(again) != got {
		t.Fatalf("a second render changed the document:\n%s\n---\n%s", got, again)
	}
}
