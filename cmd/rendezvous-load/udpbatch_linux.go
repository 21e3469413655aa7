//go:build linux

package main

import (
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// batchConn sends and receives up to len(bufs) datagrams per system call
// (sendmmsg/recvmmsg) on a connected UDP socket, so no peer address is
// decoded or allocated per datagram. Headers are built once; a batchConn is
// owned by one reader and one writer goroutine (ReadBatch and WriteBatch may
// run concurrently with each other, but each with itself only serially).
type batchConn struct {
	conn  *net.UDPConn
	raw   syscall.RawConn
	rhdrs []unix.Mmsghdr
	riov  []unix.Iovec
	rbufs [][]byte
	whdrs []unix.Mmsghdr
	wiov  []unix.Iovec
	// results of the last syscall, set by the prebuilt closures
	rn, wn     int
	rerr, werr error
	wcount     int
	readFn     func(fd uintptr) bool
	writeFn    func(fd uintptr) bool
}

func newBatchConn(c *net.UDPConn, batch, bufSize int) (*batchConn, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	b := &batchConn{conn: c, raw: raw,
		rhdrs: make([]unix.Mmsghdr, batch), riov: make([]unix.Iovec, batch), rbufs: make([][]byte, batch),
		whdrs: make([]unix.Mmsghdr, batch), wiov: make([]unix.Iovec, batch)}
	for i := range b.rhdrs {
		b.rbufs[i] = make([]byte, bufSize)
		b.riov[i].Base = &b.rbufs[i][0]
		b.riov[i].SetLen(bufSize)
		b.rhdrs[i].Hdr.Iov = &b.riov[i]
		b.rhdrs[i].Hdr.SetIovlen(1)
		b.whdrs[i].Hdr.Iov = &b.wiov[i]
		b.whdrs[i].Hdr.SetIovlen(1)
	}
	b.readFn = func(fd uintptr) bool { return mmsg(unix.SYS_RECVMMSG, fd, b.rhdrs, len(b.rhdrs), &b.rn, &b.rerr) }
	b.writeFn = func(fd uintptr) bool { return mmsg(unix.SYS_SENDMMSG, fd, b.whdrs, b.wcount, &b.wn, &b.werr) }
	return b, nil
}

// mmsg makes one non-blocking recvmmsg or sendmmsg (trap) call over the
// first n of hdrs, as a RawConn Read or Write function: false to wait for
// the socket again (EAGAIN, EINTR), else true with the datagram count in
// *count or the call's error in *err.
func mmsg(trap, fd uintptr, hdrs []unix.Mmsghdr, n int, count *int, err *error) bool {
	m, _, e := unix.Syscall6(trap, fd, uintptr(unsafe.Pointer(&hdrs[0])), uintptr(n), unix.MSG_DONTWAIT, 0, 0)
	if e == unix.EAGAIN || e == unix.EINTR {
		return false
	}
	*count, *err = int(m), nil
	if e != 0 {
		*count, *err = 0, e
	}
	return true
}

// ReadBatch blocks until at least one datagram arrives and returns how many
// were read; datagram i is Datagram(i), valid until the next ReadBatch.
func (b *batchConn) ReadBatch() (int, error) {
	for i := range b.rhdrs {
		b.rhdrs[i].Len = 0
	}
	if err := b.raw.Read(b.readFn); err != nil {
		return 0, err
	}
	return b.rn, b.rerr
}

// Datagram returns the i-th datagram of the last ReadBatch.
func (b *batchConn) Datagram(i int) []byte { return b.rbufs[i][:b.rhdrs[i].Len] }

// WriteBatch sends every datagram in msgs (at most the batch size) and
// returns how many the kernel accepted.
func (b *batchConn) WriteBatch(msgs [][]byte) (int, error) {
	sent := 0
	for sent < len(msgs) {
		n := len(msgs) - sent
		if n > len(b.whdrs) {
			n = len(b.whdrs)
		}
		for i := 0; i < n; i++ {
			m := msgs[sent+i]
			b.wiov[i].Base = &m[0]
			b.wiov[i].SetLen(len(m))
		}
		b.wcount = n
		if err := b.raw.Write(b.writeFn); err != nil {
			return sent, err
		}
		if b.werr != nil {
			return sent, b.werr
		}
		sent += b.wn
	}
	return sent, nil
}
