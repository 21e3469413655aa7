// Package loadresult holds the parts of rendezvous-load's result.json that
// more than one program reads: the load tester writes them and benchreport
// reads them back, with one type so the two cannot drift apart. A field a
// result file lacks (an older run) decodes as its zero value.
package loadresult

// Shed is the shedding validation's figures (mode shed).
type Shed struct {
	Overload           float64 `json:"overload_factor"`
	Planned            uint64  `json:"planned_over_ceiling"`
	OfferedOverCeiling uint64  `json:"offered_over_ceiling"`
	TypedShed          uint64  `json:"typed_shed"`
	Untyped            uint64  `json:"untyped"`
	TypedPct           float64 `json:"typed_shed_pct"`
	ShedP50ms          float64 `json:"shed_p50_ms"`
	ShedP99ms          float64 `json:"shed_p99_ms"`
	ShedMaxMs          float64 `json:"shed_max_ms"`
	AnswerP50ms        float64 `json:"shed_answer_p50_ms"`
	AnswerP99ms        float64 `json:"shed_answer_p99_ms"`
	AnswerMaxMs        float64 `json:"shed_answer_max_ms"`
	Admitted           int     `json:"admitted_listings"`
	AdmittedAttempts   int     `json:"admitted_attempts"`
	Sampled            uint64  `json:"sampled_gets"`
	LostSampled        uint64  `json:"lost_sampled"`
	Enumerated         int     `json:"enumerated"`
	LostEnumerated     int     `json:"lost_enumerated"`
	Lost               int     `json:"lost"`
	AcceptedFailed     uint64  `json:"accepted_failed"`
	AcceptedTimeouts   uint64  `json:"accepted_timeouts"`
	Introductions      uint64  `json:"introductions"`
}

// UDPRate is the udprate mode's figure: answers per second at a
// fixed window of requests in flight, and the server's CPU per answer.
type UDPRate struct {
	Kind         string  `json:"kind"`
	Sockets      int     `json:"sockets"`
	Window       int     `json:"window_per_socket"`
	Sent         uint64  `json:"sent"`
	Answered     uint64  `json:"answered"`
	OK           uint64  `json:"ok"`
	Lost         uint64  `json:"lost"`
	Seconds      float64 `json:"seconds"`
	PerSecond    float64 `json:"answered_per_s"`
	CPUPerAnswer float64 `json:"server_cpu_us_per_answer,omitempty"`
}
