package redisstore

import (
	"net"
	"time"

	"github.com/redis/rueidis"
)

// sentinelRefresh is how often the client asks the sentinels for the
// primary besides following their +switch-master events, so one missed
// event cannot leave it on a demoted primary.
const sentinelRefresh = time.Second

// SentinelClientOption is the client option reaching the primary that the
// sentinels (host:port each) monitor under master; password, when set,
// authenticates to the sentinels and to the data nodes alike. The client
// follows a promotion by itself, and at once after a READONLY refusal
// (sentinel_links.go): calls in flight on the old primary fail (the store
// answers ServiceUnavailable), except those a demoted primary refused with
// READONLY, which are sent again to the new one; later calls go there too.
// The new primary's first writing call voids the attempts made under the
// old one (scripts/prelude/60_cleanup.lua, followPrimary).
func SentinelClientOption(sentinels []string, master, password string) rueidis.ClientOption {
	return rueidis.ClientOption{
		InitAddress: sentinels, Password: password, DisableCache: true, DialCtxFn: dialLink,
		Sentinel: rueidis.SentinelOption{MasterSet: master, Password: password, TopologyRefreshInterval: sentinelRefresh,
			Dialer: net.Dialer{ControlContext: markSentinelLink}},
	}
}
