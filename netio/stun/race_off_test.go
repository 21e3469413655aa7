//go:build !race

package stun

const raceEnabled = false
