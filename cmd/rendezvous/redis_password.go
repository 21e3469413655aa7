package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Bounds of the Redis connection settings.
const (
	// maxRedisDB is the highest database number accepted; Redis has 16 by
	// default (databases 16) and refuses a SELECT beyond its own setting at
	// connect time, which start reports.
	maxRedisDB = 1 << 20
	// maxRedisPassword bounds the password file's size.
	maxRedisPassword = 512
)

// readRedisPassword reads the AUTH password from path (readLineSecret).
// The password is never logged.
func readRedisPassword(path string) (password string, shared bool, err error) {
	return readLineSecret(path, maxRedisPassword)
}

// readLineSecret reads a one-line secret of at most limit bytes from path:
// the file's bytes without one trailing newline (CRLF or LF). shared
// reports a file readable by group or others. The error never quotes the
// file's content.
func readLineSecret(path string, limit int) (secret string, shared bool, err error) {
	b, shared, err := readSecretFile(path, int64(limit)+1)
	if err != nil {
		return "", false, err
	}
	if len(b) > limit {
		return "", false, fmt.Errorf("holds more than %d bytes", limit)
	}
	pw := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if pw == "" {
		return "", false, errors.New("is empty")
	}
	if strings.ContainsAny(pw, "\r\n") {
		return "", false, errors.New("holds more than one line")
	}
	return pw, shared, nil
}

// readSecretFile reads a secret file of the command line (the Redis
// password, the capability key): its first limit bytes (a caller bounding
// the size asks one more) and whether it is readable by group or others
// (shared).
func readSecretFile(path string, limit int64) (b []byte, shared bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, fmt.Errorf("cannot open: %w", err)
	}
	defer f.Close() // read-only: a close error changes nothing
	if fi, err := f.Stat(); err == nil {
		shared = fi.Mode().Perm()&0o077 != 0
	}
	b, err = io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return nil, false, fmt.Errorf("cannot read: %w", err)
	}
	return b, shared, nil
}
