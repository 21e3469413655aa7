package redistest

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// TestReplicaSnapshotStaysInTheServersDirectory: a replica's full sync
// writes the primary's snapshot to disk and loads it from there. It must
// land in the server's own directory, removed when the server stops: in
// the test's working directory, every server started there later would
// load it, and tests would find keys of an earlier run under their names.
func TestReplicaSnapshotStaysInTheServersDirectory(t *testing.T) {
	primary, replica := Require(t), Require(t)
	ctx := context.Background()
	do := func(s *Server, args ...string) rueidis.RedisMessage {
		t.Helper()
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.Addr}, DisableCache: true, ForceSingleClient: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		m, err := c.Do(ctx, c.B().Arbitrary(args...).Build()).ToMessage()
		if err != nil && !rueidis.IsRedisNil(err) {
			t.Fatalf("%v: %v", args, err)
		}
		return m
	}
	do(primary, "SET", "k", "v")
	host, port, _ := net.SplitHostPort(primary.Addr)
	do(replica, "REPLICAOF", host, port)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		m := do(replica, "GET", "k")
		if v, _ := m.ToString(); v == "v" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the replica did not sync within 10s")
		}
	}
	if _, err := os.Stat(filepath.Join(replica.tmp, "dump.rdb")); err != nil {
		t.Fatalf("the replica's snapshot is not in its directory: %v", err)
	}
	if _, err := os.Stat("dump.rdb"); !os.IsNotExist(err) {
		t.Fatalf("a snapshot is in the test's working directory (%v)", err)
	}
	replica.Stop()
	if _, err := os.Stat(replica.tmp); !os.IsNotExist(err) {
		t.Fatalf("the stopped server's directory is still there (%v)", err)
	}
}
