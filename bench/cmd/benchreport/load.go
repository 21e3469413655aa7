package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// loadResult is the part of rendezvous-load's result.json the report uses
// (the load tester's Result type; kept as a separate, tolerant struct so the
// report reads older result files too).
type loadResult struct {
	Mode     string         `json:"mode"`
	Started  time.Time      `json:"started"`
	Seconds  float64        `json:"seconds"`
	Ceilings map[string]int `json:"ceilings"`
	Config   struct {
		Overload float64 `json:"Overload"`
		Duration int64   `json:"Duration"`
	} `json:"config"`
	Fill *struct {
		Listings, Presence, Attempts struct {
			Admitted int     `json:"admitted"`
			Seconds  float64 `json:"seconds"`
		}
		TotalSeconds float64 `json:"total_seconds"`
		RSSMiB       float64 `json:"server_rss_mib"`
	} `json:"fill"`
	Shed *struct {
		Overload           float64 `json:"overload_factor"`
		OfferedOverCeiling uint64  `json:"offered_over_ceiling"`
		TypedShed          uint64  `json:"typed_shed"`
		TypedPct           float64 `json:"typed_shed_pct"`
		ShedP50ms          float64 `json:"shed_p50_ms"`
		ShedP99ms          float64 `json:"shed_p99_ms"`
		ShedMaxMs          float64 `json:"shed_max_ms"`
		AnswerP50ms        float64 `json:"shed_answer_p50_ms"`
		AnswerP99ms        float64 `json:"shed_answer_p99_ms"`
		AnswerMaxMs        float64 `json:"shed_answer_max_ms"`
		Lost               int     `json:"lost"`
		LostSampled        uint64  `json:"lost_sampled"`
		Sampled            uint64  `json:"sampled_gets"`
		Enumerated         int     `json:"enumerated"`
		AcceptedFailed     uint64  `json:"accepted_failed"`
	} `json:"shed"`
	ServerCPU *struct {
		Phase        string  `json:"phase"`
		MicrosPerAns float64 `json:"cpu_us_per_answer"`
		Answers      uint64  `json:"answers"`
	} `json:"server_cpu"`
	UDPRate *udpRate `json:"udp_rate"`
	Checks  []struct {
		Name   string `json:"name"`
		OK     bool   `json:"ok"`
		Detail string `json:"detail"`
	} `json:"checks"`
	Passed bool `json:"passed"`
}

func readLoad(path string) (*loadResult, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r loadResult
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("cannot decode %s: %w", path, err)
	}
	return &r, nil
}

// udpRate is a udprate run's figures.
type udpRate struct {
	Kind         string  `json:"kind"`
	Sockets      int     `json:"sockets"`
	Window       int     `json:"window_per_socket"`
	PerSecond    float64 `json:"answered_per_s"`
	Answered     uint64  `json:"answered"`
	Lost         uint64  `json:"lost"`
	Seconds      float64 `json:"seconds"`
	CPUPerAnswer float64 `json:"server_cpu_us_per_answer"`
}
