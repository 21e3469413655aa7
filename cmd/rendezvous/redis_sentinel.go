package main

import (
	"regexp"

	"github.com/redis/rueidis"

	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// maxSentinels bounds --redis-sentinel's list (a deployment runs three or
// five).
const maxSentinels = 16

// masterName is what --redis-master accepts: a Sentinel master name as
// operators write it in sentinel.conf.
var masterName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// validateSentinel checks --redis-sentinel and --redis-master with --store
// redis: both or neither, and the sentinels instead of --redis-addr (they
// name the primary).
func (c *config) validateSentinel() error {
	if len(c.RedisSentinels) == 0 {
		if c.RedisMaster != "" {
			return c.bad("redis-master", "needs --redis-sentinel, the sentinels that monitor it")
		}
		return nil
	}
	if c.source["redis-addr"] != "" {
		return c.bad("redis-sentinel", "excludes --redis-addr (%s): the sentinels name the primary", c.source["redis-addr"])
	}
	if len(c.RedisSentinels) > maxSentinels {
		return c.bad("redis-sentinel", "lists %d sentinels, more than %d", len(c.RedisSentinels), maxSentinels)
	}
	for _, a := range c.RedisSentinels {
		if err := checkHostPort(a, false); err != nil {
			return c.bad("redis-sentinel", "%v", err)
		}
	}
	if !masterName.MatchString(c.RedisMaster) {
		return c.bad("redis-master", "%q is not the name of the primary the sentinels monitor (1-64 characters of [A-Za-z0-9._-])", c.RedisMaster)
	}
	return nil
}

// redisClientOption is how the store reaches Redis: the primary the
// sentinels name (following its promotions), or --redis-addr; setting is
// the flag a connection error is reported under.
func redisClientOption(c *config) (opt rueidis.ClientOption, setting string) {
	if len(c.RedisSentinels) > 0 {
		opt, setting = redisstore.SentinelClientOption(c.RedisSentinels, c.RedisMaster, c.RedisPassword), "redis-sentinel"
	} else {
		opt = rueidis.ClientOption{InitAddress: []string{c.RedisAddr}, DisableCache: true, Password: c.RedisPassword}
		setting = "redis-addr"
	}
	opt.SelectDB = c.RedisDB
	return opt, setting
}
