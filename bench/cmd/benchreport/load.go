package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/rendezvous/rendezvous/internal/loadresult"
)

// loadResult is the part of rendezvous-load's result.json the report uses
// (the load tester's Result type; kept as a separate, tolerant struct so the
// report reads older result files too). The shed and udprate figures are
// the load tester's own types (internal/loadresult).
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
	Shed      *loadresult.Shed `json:"shed"`
	ServerCPU *struct {
		Phase        string  `json:"phase"`
		MicrosPerAns float64 `json:"cpu_us_per_answer"`
		Answers      uint64  `json:"answers"`
	} `json:"server_cpu"`
	UDPRate *loadresult.UDPRate `json:"udp_rate"`
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
