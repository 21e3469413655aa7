package main

import (
	"errors"
	"testing"
	"time"
)

func TestInstanceLeaseSetting(t *testing.T) {
	redis := devRedisArgs(t)
	c, err := parseConfig(redis, envOf(nil))
	if err != nil || c.InstanceLease != defaultInstanceLease {
		t.Fatalf("default instance lease: %v %v, want %v", c.InstanceLease, err, defaultInstanceLease)
	}
	c, err = parseConfig(redis, envOf(map[string]string{"RDV_INSTANCE_LEASE": "7s"}))
	if err != nil || c.InstanceLease != 7*time.Second {
		t.Fatalf("RDV_INSTANCE_LEASE=7s: %v %v", c.InstanceLease, err)
	}
	c, err = parseConfig(append(redis, "--instance-lease", "2s"), envOf(map[string]string{"RDV_INSTANCE_LEASE": "7s"}))
	if err != nil || c.InstanceLease != 2*time.Second {
		t.Fatalf("--instance-lease 2s over the environment: %v %v", c.InstanceLease, err)
	}
	for _, bad := range []struct {
		args   []string
		env    map[string]string
		source string
	}{
		{[]string{"--instance-lease", "999ms"}, nil, "flag --instance-lease"},
		{[]string{"--instance-lease", "61s"}, nil, "flag --instance-lease"},
		{nil, map[string]string{"RDV_INSTANCE_LEASE": "0s"}, "RDV_INSTANCE_LEASE"},
	} {
		_, err := parseConfig(append(append([]string(nil), redis...), bad.args...), envOf(bad.env))
		var se *settingError
		if !errors.As(err, &se) || se.Setting != "instance-lease" || se.Source != bad.source {
			t.Fatalf("%v %v: error %v, want one naming instance-lease from %s", bad.args, bad.env, err, bad.source)
		}
	}
	// The memory store has no registry: the setting is not checked there.
	if _, err := parseConfig([]string{"--dev", "--instance-lease", "1h"}, envOf(nil)); err != nil {
		t.Fatalf("--instance-lease with the memory store: %v", err)
	}
}
