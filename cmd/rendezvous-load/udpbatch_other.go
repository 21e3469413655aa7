//go:build !linux

package main

import "net"

// batchConn is the portable fallback: one system call per datagram.
type batchConn struct {
	conn  *net.UDPConn
	rbufs [][]byte
	rlen  int
}

func newBatchConn(c *net.UDPConn, batch, bufSize int) (*batchConn, error) {
	return &batchConn{conn: c, rbufs: [][]byte{make([]byte, bufSize)}}, nil
}

func (b *batchConn) ReadBatch() (int, error) {
	n, err := b.conn.Read(b.rbufs[0])
	if err != nil {
		return 0, err
	}
	b.rlen = n
	return 1, nil
}

func (b *batchConn) Datagram(i int) []byte { return b.rbufs[0][:b.rlen] }

func (b *batchConn) WriteBatch(msgs [][]byte) (int, error) {
	for i, m := range msgs {
		if _, err := b.conn.Write(m); err != nil {
			return i, err
		}
	}
	return len(msgs), nil
}
