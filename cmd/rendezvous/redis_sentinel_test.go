package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// envTestedElsewhere lists the flags TestParseConfigEnvironment leaves out
// because they exclude one of its settings (--redis-addr): TestSentinelSettings
// reads them from the environment.
var envTestedElsewhere = map[string]bool{"redis-sentinel": true, "redis-master": true}

// TestSentinelSettings: --redis-sentinel and --redis-master (or their RDV_*
// variables) go together, replace --redis-addr, and a bad one is named.
func TestSentinelSettings(t *testing.T) {
	redis := devRedisArgs(t)
	c, err := parseConfig(redis, envOf(map[string]string{
		"RDV_REDIS_SENTINEL": "10.0.0.1:26379, sentinel-b:26379,[::1]:26380", "RDV_REDIS_MASTER": "rdv-primary"}))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"10.0.0.1:26379", "sentinel-b:26379", "[::1]:26380"}; !slices.Equal(c.RedisSentinels, want) || c.RedisMaster != "rdv-primary" {
		t.Fatalf("sentinels %q master %q, want %q rdv-primary", c.RedisSentinels, c.RedisMaster, want)
	}
	if opt, setting := redisClientOption(c); setting != "redis-sentinel" || opt.Sentinel.MasterSet != "rdv-primary" ||
		!slices.Equal(opt.InitAddress, c.RedisSentinels) {
		t.Fatalf("client option %+v (%s): not through the sentinels", opt, setting)
	}

	f := func(args []string, env map[string]string, setting, source string) {
		t.Helper()
		_, err := parseConfig(append(slices.Clone(redis), args...), envOf(env))
		var se *settingError
		if !errors.As(err, &se) || se.Setting != setting || se.Source != source {
			t.Fatalf("%v %v: error %v, want one naming %s from %s", args, env, err, setting, source)
		}
	}
	e := map[string]string{}
	f([]string{"--redis-sentinel", "127.0.0.1:26379"}, e, "redis-master", "default")
	f([]string{"--redis-master", "rdv"}, e, "redis-master", "flag --redis-master")
	f([]string{"--redis-sentinel", "127.0.0.1:26379", "--redis-master", "rdv", "--redis-addr", "127.0.0.1:6379"}, e,
		"redis-sentinel", "flag --redis-sentinel")
	f([]string{"--redis-sentinel", "127.0.0.1:26379", "--redis-master", "rdv"}, map[string]string{"RDV_REDIS_ADDR": "127.0.0.1:6379"},
		"redis-sentinel", "flag --redis-sentinel")
	f([]string{"--redis-sentinel", "localhost", "--redis-master", "rdv"}, e, "redis-sentinel", "flag --redis-sentinel")
	f([]string{"--redis-sentinel", "127.0.0.1:26379,", "--redis-master", "rdv"}, e, "redis-sentinel", "flag --redis-sentinel")
	f([]string{"--redis-master", "rdv"}, map[string]string{"RDV_REDIS_SENTINEL": "127.0.0.1:0"}, "redis-sentinel", "RDV_REDIS_SENTINEL")
	f([]string{"--redis-sentinel", "127.0.0.1:26379"}, map[string]string{"RDV_REDIS_MASTER": "my primary"}, "redis-master", "RDV_REDIS_MASTER")
	f([]string{"--redis-sentinel", strings.Repeat("127.0.0.1:26379,", 16) + "127.0.0.1:26379", "--redis-master", "rdv"}, e,
		"redis-sentinel", "flag --redis-sentinel")
}
