//go:build !(linux || darwin)

package main

// raiseFDLimit does nothing where the open-file limit is not an rlimit.
func raiseFDLimit() fdLimit { return fdLimit{} }
