package redistest

import "testing"

// TestReplicasCaughtUp: a planned failover goes ahead only when the primary
// lists a replica and every replica it lists has acknowledged its offset.
func TestReplicasCaughtUp(t *testing.T) {
	const head = "# Replication\r\nrole:master\r\nconnected_slaves:2\r\n"
	for _, c := range []struct {
		info string
		want bool
	}{
		{head + "slave0:ip=127.0.0.1,port=1,state=online,offset=500,lag=0\r\nslave1:ip=127.0.0.1,port=2,state=online,offset=500,lag=1\r\nmaster_repl_offset:500\r\n", true},
		{head + "slave0:ip=127.0.0.1,port=1,state=online,offset=500,lag=0\r\nslave1:ip=127.0.0.1,port=2,state=online,offset=420,lag=1\r\nmaster_repl_offset:500\r\n", false},
		{"# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_repl_offset:500\r\n", false},
		{head + "slave0:ip=127.0.0.1,port=1,state=online,offset=500,lag=0\r\n", false},
	} {
		if got := replicasCaughtUp(c.info); got != c.want {
			t.Errorf("replicasCaughtUp(%q) = %v, want %v", c.info, got, c.want)
		}
	}
}
