package main

import (
	"strconv"
	"strings"
	"unicode"
)

// The chat line protocol over the punched path: one UDP datagram per line,
// "MSG <id> <text>", answered by the receiver with "ACK <id>" so the sender
// can retransmit a lost line. ids are per sender and increase.
const (
	maxLine = 512
)

func encodeMsg(id uint64, text string) []byte {
	return []byte("MSG " + strconv.FormatUint(id, 10) + " " + text)
}

func encodeAck(id uint64) []byte { return []byte("ACK " + strconv.FormatUint(id, 10)) }

// decode parses a chat datagram. kind is "MSG" or "ACK"; ok is false for
// anything else (ignored).
func decode(b []byte) (kind string, id uint64, text string, ok bool) {
	s := string(b)
	kind, rest, found := strings.Cut(s, " ")
	if !found || (kind != "MSG" && kind != "ACK") {
		return "", 0, "", false
	}
	num, text, _ := strings.Cut(rest, " ")
	if num == "" || len(num) > 20 {
		return "", 0, "", false
	}
	for _, c := range num {
		if c < '0' || c > '9' {
			return "", 0, "", false
		}
		id = id*10 + uint64(c-'0')
	}
	return kind, id, sanitize(text), true
}

// sanitize keeps a peer's text printable on our terminal.
func sanitize(s string) string {
	if len(s) > maxLine {
		s = s[:maxLine]
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return '?'
		}
		return r
	}, s)
}
