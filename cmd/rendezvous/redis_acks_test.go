package main

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestRedisAckSettings: --redis-ack-replicas and --redis-ack-timeout (or
// their RDV_* variables) reach the config, and a value out of range is
// named.
func TestRedisAckSettings(t *testing.T) {
	redis := devRedisArgs(t)
	c, err := parseConfig(redis, envOf(map[string]string{"RDV_REDIS_ACK_REPLICAS": "1", "RDV_REDIS_ACK_TIMEOUT": "250ms"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.RedisAcks != (redisAcks{Replicas: 1, Timeout: 250 * time.Millisecond}) {
		t.Fatalf("acks %+v, want 1 replica within 250ms", c.RedisAcks)
	}
	if c, err := parseConfig(redis, envOf(nil)); err != nil || c.RedisAcks.Replicas != 0 {
		t.Fatalf("default: %+v %v, want no replica asked", c, err)
	}
	for _, bad := range [][]string{
		{"--redis-ack-replicas", "-1"}, {"--redis-ack-replicas", "9"},
		{"--redis-ack-timeout", "5ms"}, {"--redis-ack-timeout", "2s"},
	} {
		_, err := parseConfig(append(append([]string(nil), redis...), bad...), envOf(nil))
		var se *settingError
		if !errors.As(err, &se) || se.Setting != strings.TrimPrefix(bad[0], "--") {
			t.Errorf("%v: error %v, want one naming %s", bad, err, bad[0])
		}
	}
}
