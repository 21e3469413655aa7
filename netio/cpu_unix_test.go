//go:build unix

package netio

import "syscall"

// processCPU is the process's user+system CPU time in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic("BUG: getrusage: " + err.Error())
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
