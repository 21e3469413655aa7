package planned

import (
	"strconv"
	"strings"
)

// Reading INFO replication.

// inSync counts the replicas a primary's INFO replication lists online and
// acknowledging within maxLag seconds.
func inSync(info string) int {
	n := 0
	for _, f := range replicaFields(info) {
		lag, err := strconv.Atoi(f["lag"])
		if f["state"] == "online" && err == nil && lag <= maxLag {
			n++
		}
	}
	return n
}

// replicaFields parses INFO replication's "slaveN:ip=…,port=…,state=…,
// offset=…,lag=…" lines.
func replicaFields(info string) []map[string]string {
	var out []map[string]string
	for _, line := range strings.Split(info, "\r\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(k, "slave") || !strings.Contains(v, "ip=") {
			continue
		}
		f := map[string]string{}
		for _, kv := range strings.Split(v, ",") {
			if a, b, ok := strings.Cut(kv, "="); ok {
				f[a] = b
			}
		}
		out = append(out, f)
	}
	return out
}

func field(info, name string) string {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}
