//go:build !linux

package client

import "testing"

func TestNATHolePunch(t *testing.T) {
	t.Skip("the NAT hole-punch test needs Linux network namespaces (ip netns, nftables) and root; it runs in CI on Linux")
}
