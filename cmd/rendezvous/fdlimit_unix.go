//go:build linux || darwin

package main

import "syscall"

// raiseFDLimit sets the soft open-file limit to the hard limit: every HTTP
// connection is a descriptor, and a low soft limit (often 1024) would make
// the HTTP ceiling needlessly low.
func raiseFDLimit() fdLimit {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return fdLimit{err: err}
	}
	l := fdLimit{after: r.Cur}
	if r.Cur < r.Max {
		r.Cur = r.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
			// macOS refuses an unlimited hard limit: keep the soft one.
			l.err = err
			return l
		}
		l.after = r.Max
	}
	return l
}
