//go:build linux

package client

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// TestNATHolePunchTwoInstances is the endpoint-independent case of
// TestNATHolePunch with two instances in the "internet", A on 10.99.0.1 and
// B on 10.99.0.2, on a Sentinel-managed Redis there (a primary, two
// replicas, three sentinels: --redis-sentinel, --redis-master). The host
// publishes through B; its presence goes to the mediator its listing names
// (B, unless routing picks A), the only instance its NAT keeps a mapping
// toward. The joiner's HTTP goes to the other instance, which creates the
// attempt: the OFFER must come from the host's instance (forwarded through
// Redis), and every push must leave from an instance the recipient's NAT
// sent to. The two peers punch through and chat directly, and no instance
// ever sends to a NAT that did not send to it (its datagrams would be
// dropped there). Then the primary is moved to a replica with the
// supported planned failover (`rendezvous failover`) while the host keeps
// its listing (the instances acknowledge writes once a replica has them,
// as documented): every sentinel announces exactly one promotion
// (+switch-master, all recorded), the listing is still on the promoted
// primary under the same ID, and a second joiner punches through to the
// same host the same way: both instances, their forwarding and the host's
// presence follow the promoted primary.
func TestNATHolePunchTwoInstances(t *testing.T) {
	requireNetns(t)
	requireSentinelBinaries(t)
	l := newLab(t, 'i', false, false) // pub carries 10.99.0.2 (instance B) already
	// Per NAT and instance, STUN datagrams each way (the servers run in
	// pub: its input and output hooks see them), added to newLab's counter
	// table.
	rules := "table ip rdvcount {\n\tcounter to_b_nonstun {}\n"
	in := "\tchain inst_in {\n\t\ttype filter hook input priority 0; policy accept;\n" +
		"\t\tip daddr 10.99.0.2 udp dport 3478 @th,96,32 != 0x2112a442 counter name to_b_nonstun\n"
	out := "\tchain inst_out {\n\t\ttype filter hook output priority 0; policy accept;\n"
	for _, n := range natWANs {
		for _, i := range instanceAddrs {
			rules += "\tcounter " + natCounter(n, i, "in") + " {}\n\tcounter " + natCounter(n, i, "out") + " {}\n"
			in += "\t\tip saddr " + n + " ip daddr " + i + " udp dport 3478 counter name " + natCounter(n, i, "in") + "\n"
			out += "\t\tip saddr " + i + " ip daddr " + n + " udp sport 3478 counter name " + natCounter(n, i, "out") + "\n"
		}
	}
	l.NFT("pub", rules+in+"\t}\n"+out+"\t}\n}\n")
	redis, sentinels := l.startSentinelRedis("pub")
	key := filepath.Join(t.TempDir(), "capability.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("5a", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	shared := []string{"--store", "redis", "--redis-sentinel", strings.Join(sentinels, ","),
		"--redis-master", redistest.MasterName, "--redis-name", "nat", "--capability-key-file", key,
		"--redis-ack-replicas", "1"}
	servers := map[string]*testServer{}
	for _, i := range instanceAddrs {
		servers[i] = startServer(t, l.Exec("pub"), append([]string{"--http-addr", i + ":8080", "--udp-addr", i + ":3478"}, shared...)...)
	}

	b := instanceAddrs[1]
	host := startPeer(t, l.Exec("host"), servers[b].tokens["publisher"], "host", "--server", "http://"+b+":8080",
		"--name", "two instances", "--echo")
	id := host.waitLine(t, publishedRe) // after the first presence answer
	var hostInst, joinVia string
	for _, i := range instanceAddrs {
		if l.counter(natCounter(natWANs[0], i, "in")) > 0 {
			hostInst = i
		} else {
			joinVia = i
		}
	}
	if hostInst == "" || joinVia == "" {
		t.Fatalf("the host's NAT sent to %q and not to %q: want exactly one instance", hostInst, joinVia)
	}
	l.joinAcrossInstances(servers[joinVia], joinVia, id, host, 0)

	watch := redis.watchSwitchMaster()
	asked := time.Now()
	promoted := redis.plannedFailover(sentinels)
	// Each instance moves its forwarding subscription to the promoted
	// primary once its client follows it (a forward published there
	// before that is lost, and the OFFER waits for the host's next
	// presence refresh). Until an instance's client has moved, its writes
	// meet the old primary, now a replica (READONLY), and the instance
	// answers typed service_unavailable, which a client retries. The bound
	// is liveness, Sentinel's failover-timeout + 2 s.
	redis.waitForwardingOn(promoted, len(instanceAddrs))
	following := time.Now()
	if n := redis.cli(promoted, "EXISTS", "rdv:{nat}:l:"+id); n != "1" {
		t.Fatalf("the listing %s is not on the promoted primary (EXISTS answered %q): an acknowledged listing was lost", id, n)
	}
	unavailable := l.joinAcrossInstances(servers[joinVia], joinVia, id, host, nsFailoverTimeout+2*time.Second)
	if out := host.stdout.String(); strings.Contains(out, "published again") || strings.Contains(out, "listing lost") {
		t.Fatalf("the host lost its listing across the promotion:\n%s", out)
	}
	// Every sentinel announces the one promotion, from the first primary
	// to the promoted replica, and no other.
	want := fmt.Sprintf("%s 127.0.0.1 %d 127.0.0.1 %d", redistest.MasterName, redis.primary, promoted)
	redis.l.waitFor("every sentinel's +switch-master", func() error {
		for i, ev := range watch.events() {
			if len(ev) == 0 {
				return fmt.Errorf("sentinel %d announced no promotion yet", redis.sentinels[i])
			}
		}
		return nil
	})
	time.Sleep(time.Second) // a second promotion would be announced too
	for i, ev := range watch.events() {
		if len(ev) != 1 || ev[0] != want {
			t.Errorf("sentinel %d announced %q, want exactly one +switch-master %q", redis.sentinels[i], ev, want)
		}
	}
	t.Logf("both instances listening on the promoted primary %v after the planned failover began; %d joins answered service_unavailable, then the next punched (%v after it began)",
		following.Sub(asked).Round(time.Millisecond), unavailable, time.Since(asked).Round(time.Millisecond))
}

// joinAcrossInstances runs a joiner whose HTTP goes to srv (on address via,
// not the host's instance) and checks that it punched through to host and
// chatted over the direct path, that no instance sent to a NAT that never
// sent to it, and that no peer traffic went through the servers. A joiner
// answered typed service_unavailable (by the HTTP API or the mediator) is
// run again, for at most retryFor; it returns how many were.
func (l *lab) joinAcrossInstances(srv *testServer, via, id string, host *peerProc, retryFor time.Duration) (unavailable int) {
	t := l.t
	t.Helper()
	direct := l.counter("direct_1to2") + l.counter("direct_2to1")
	deadline := time.Now().Add(retryFor)
	var out2 string
	for {
		join := startPeer(t, l.Exec("join"), srv.tokens["client"], "join", "--server", "http://"+via+":8080",
			"--listing", id, "--say", "hello", "--say", "world", "--replies", "2", "--punch-timeout", "3s")
		code := join.wait(t)
		out2 = join.stdout.String()
		errOut := join.stderr.String()
		if code == 0 {
			break
		}
		if unavailableRe.MatchString(errOut) && time.Now().Before(deadline) {
			unavailable++
			time.Sleep(100 * time.Millisecond)
			continue
		}
		t.Fatalf("the joiner exited %d (after %d answered service_unavailable):\n%s\n%s\nhost:\n%s",
			code, unavailable, out2, errOut, host.stdout.String())
	}
	for _, want := range []string{"introduced to host: public 10.99.1.2:", "punched: direct path to 10.99.1.2:", "host says: echo: world"} {
		if !strings.Contains(out2, want) {
			t.Fatalf("joiner output lacks %q:\n%s", want, out2)
		}
	}
	host.waitLine(t, regexp.MustCompile(`^joiner 10\.99\.2\.2:\d+ says: world$`))
	if n := l.counter("direct_1to2") + l.counter("direct_2to1"); n == direct {
		t.Fatal("no direct traffic forwarded between the NATs")
	}
	for _, n := range natWANs {
		for _, i := range instanceAddrs {
			sent, got := l.counter(natCounter(n, i, "out")), l.counter(natCounter(n, i, "in"))
			if sent > 0 && got == 0 {
				t.Errorf("instance %s sent %d datagrams to the NAT %s, which never sent to it (its NAT drops them)", i, sent, n)
			}
		}
	}
	if n := l.counter("to_server_nonstun") + l.counter("to_b_nonstun"); n != 0 {
		t.Fatalf("the servers received %d non-STUN datagrams: peer traffic went through them", n)
	}
	return unavailable
}

// unavailableRe matches a joiner's typed service_unavailable, from the HTTP
// API or the mediator (a STUN 503 to its bind).
var unavailableRe = regexp.MustCompile(`HTTP 503 service_unavailable|mediator error 503 `)

// The two NATs' WAN addresses and the two instances' addresses in pub.
var (
	natWANs       = [2]string{"10.99.1.2", "10.99.2.2"}
	instanceAddrs = [2]string{"10.99.0.1", "10.99.0.2"}
)

// natCounter names the counter of STUN datagrams from NAT wan to instance
// inst ("in") or back ("out").
func natCounter(wan, inst, dir string) string {
	return "n" + strings.ReplaceAll(wan, ".", "_") + "_i" + strings.ReplaceAll(inst, ".", "_") + "_" + dir
}
