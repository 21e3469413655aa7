package redistest

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// Describe reports, for a failing test's message, what each data node says
// of its replication (role, primary link, replicas and how many of them
// count toward min-replicas-to-write), what each sentinel says of the
// primary, and the last lines of each sentinel's log.
func (t *Topology) Describe(ctx context.Context) string {
	var b strings.Builder
	for _, n := range t.Nodes {
		fmt.Fprintf(&b, "\nnode %s: ", n.Addr)
		m, err := t.Do(ctx, n.Addr, "INFO", "replication")
		if err != nil {
			fmt.Fprintf(&b, "%v", err)
			continue
		}
		info, _ := m.ToString()
		for _, line := range strings.Split(info, "\r\n") {
			k, _, _ := strings.Cut(line, ":")
			switch {
			case k == "role", k == "master_host", k == "master_port", k == "master_link_status",
				k == "master_sync_in_progress", k == "connected_slaves", k == "min_slaves_good_slaves",
				k == "master_repl_offset", strings.HasPrefix(k, "slave") && k != "slave_read_only" && k != "slave_priority":
				b.WriteString(line + " ")
			}
		}
	}
	for i, s := range t.Sentinels {
		fmt.Fprintf(&b, "\nsentinel %s: ", s.Addr)
		if m, err := t.Do(ctx, s.Addr, "SENTINEL", "MASTER", MasterName); err != nil {
			fmt.Fprintf(&b, "%v", err)
		} else if f, err := m.AsStrMap(); err == nil {
			fmt.Fprintf(&b, "primary %s:%s flags %s replicas %s", f["ip"], f["port"], f["flags"], f["num-slaves"])
		}
		log, err := os.ReadFile(sentinelLog(t.dir, i))
		if err == nil {
			lines := strings.Split(strings.TrimSpace(string(log)), "\n")
			b.WriteString("\n  " + strings.Join(lines[max(0, len(lines)-25):], "\n  "))
		}
	}
	return b.String()
}
