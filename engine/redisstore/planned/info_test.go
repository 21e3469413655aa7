package planned

import "testing"

func TestInSyncCountsOnlineReplicasWithinTheLag(t *testing.T) {
	info := "# Replication\r\nrole:master\r\nconnected_slaves:3\r\n" +
		"slave0:ip=10.0.0.2,port=6379,state=online,offset=100,lag=0\r\n" +
		"slave1:ip=10.0.0.3,port=6379,state=online,offset=90,lag=2\r\n" +
		"slave2:ip=10.0.0.4,port=6379,state=wait_bgsave,offset=0,lag=0\r\n" +
		"master_repl_offset:100\r\n"
	if n := inSync(info); n != 2 {
		t.Fatalf("inSync = %d, want 2 (online, lag <= %d)", n, maxLag)
	}
	lagging := "slave0:ip=10.0.0.2,port=6379,state=online,offset=100,lag=3\r\n"
	if n := inSync(lagging); n != 0 {
		t.Fatalf("inSync of a replica 3 s behind = %d, want 0", n)
	}
	if f := replicaFields(info); len(f) != 3 || f[1]["ip"] != "10.0.0.3" || f[0]["offset"] != "100" {
		t.Fatalf("replicaFields = %v", f)
	}
	if got := field(info, "master_repl_offset"); got != "100" {
		t.Fatalf("field = %q", got)
	}
}
