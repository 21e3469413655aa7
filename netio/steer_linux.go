//go:build linux

package netio

import (
	"fmt"
	"syscall"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The refusal at start (exclusive_linux.go) cannot stop a socket of the same
// user from joining the SO_REUSEPORT group later, and the kernel's own
// choice (a hash over every socket of the group) would hand it a share of
// the mediator's datagrams. A reuseport program chooses instead: the kernel
// runs it for each datagram and delivers to the group's socket at the index
// it returns. A group's sockets are indexed in the order they joined, so the
// mediator's n sockets, bound before anything could pass the exclusivity
// check, are indices 0..n-1 and a later socket n or more; the program only
// returns indices below n. An index shifts only when a socket leaves (the
// group's last one takes its place), and the mediator's leave only at Close.

// skfNetOff is SKF_NET_OFF: a classic BPF load offset relative to the
// network header (the program runs with the data at the UDP payload).
const skfNetOff = -0x100000

func netOff(k int) uint32 { return uint32(int32(skfNetOff + k)) }

// steerProgram picks one of n sockets by a hash of the datagram's source
// address and port, as the kernel does without a program: a flow keeps its
// socket and flows spread over all n. The hash is keyed (k, random per
// mediator) so a sender cannot choose sources that all land on one socket.
// A datagram whose headers cannot be read gets index 0 (a failed classic
// BPF load returns 0): still one of the mediator's.
func steerProgram(n int, k steerKeys) ([]bpf.RawInstruction, error) {
	if n <= 1 {
		return bpf.Assemble([]bpf.Instruction{bpf.RetConstant{Val: 0}})
	}
	prog := []bpf.Instruction{
		// IP version: an IPv6 socket receives IPv4 datagrams too (dual stack).
		bpf.LoadAbsolute{Off: netOff(0), Size: 1},
		bpf.ALUOpConstant{Op: bpf.ALUOpShiftRight, Val: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: 6, SkipTrue: 5},
		// IPv4: the source port after the header of IHL words, the source address.
		bpf.LoadMemShift{Off: netOff(0)},
		bpf.LoadIndirect{Off: netOff(0), Size: 2},
		bpf.StoreScratch{Src: bpf.RegA, N: 0},
		bpf.LoadAbsolute{Off: netOff(12), Size: 4},
		bpf.Jump{Skip: 12},
		// IPv6: the source port after the fixed header, the source address
		// folded to one word.
		bpf.LoadAbsolute{Off: netOff(40), Size: 2},
		bpf.StoreScratch{Src: bpf.RegA, N: 0},
		bpf.LoadAbsolute{Off: netOff(8), Size: 4},
		bpf.TAX{},
		bpf.LoadAbsolute{Off: netOff(12), Size: 4},
		bpf.ALUOpX{Op: bpf.ALUOpXor},
		bpf.TAX{},
		bpf.LoadAbsolute{Off: netOff(16), Size: 4},
		bpf.ALUOpX{Op: bpf.ALUOpXor},
		bpf.TAX{},
		bpf.LoadAbsolute{Off: netOff(20), Size: 4},
		bpf.ALUOpX{Op: bpf.ALUOpXor},
	}
	// Mix (A is the address): h = avalanche((addr^k1)*c1) ^ port ^ k2,
	// times c2, avalanched, modulo n.
	prog = append(prog, mixRound(k[0], 0x9e3779b1, 16)...)
	prog = append(prog,
		bpf.TAX{},
		bpf.LoadScratch{Dst: bpf.RegA, N: 0},
		bpf.ALUOpX{Op: bpf.ALUOpXor})
	prog = append(prog, mixRound(k[1], 0x85ebca6b, 13)...)
	prog = append(prog,
		bpf.ALUOpConstant{Op: bpf.ALUOpMod, Val: uint32(n)},
		bpf.RetA{})
	return bpf.Assemble(prog)
}

// mixRound is one keyed avalanche step on A, clobbering X:
// A = (A^key)*mul, then A ^= A>>shift.
func mixRound(key, mul, shift uint32) []bpf.Instruction {
	return []bpf.Instruction{
		bpf.ALUOpConstant{Op: bpf.ALUOpXor, Val: key},
		bpf.ALUOpConstant{Op: bpf.ALUOpMul, Val: mul},
		bpf.TAX{},
		bpf.ALUOpConstant{Op: bpf.ALUOpShiftRight, Val: shift},
		bpf.ALUOpX{Op: bpf.ALUOpXor},
	}
}

// attachSteering attaches steerProgram to the reuseport group of the socket
// behind c, whose first n sockets are the mediator's. Attaching again
// replaces the group's program (any member may replace it; the mediator
// re-attaches while foreign sockets are present, foreign.go).
func attachSteering(c syscall.RawConn, n int, k steerKeys) error {
	raw, err := steerProgram(n, k)
	if err != nil {
		return fmt.Errorf("BUG: reuseport program: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, ins := range raw {
		filter[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_REUSEPORT_CBPF, &prog)
	}); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("cannot keep the UDP port's datagrams to the mediator's sockets (SO_ATTACH_REUSEPORT_CBPF): %w", serr)
	}
	return nil
}
