package e2e

import (
	"strings"
	"sync"
)

// LockedBuffer is an io.Writer safe for concurrent use: a child process's
// output is written by a reader goroutine while the test reads it.
type LockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
