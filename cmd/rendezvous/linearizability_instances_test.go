package main

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// TestLinearizabilityAcrossInstances: the history of concurrent operations
// sent to two instances on one Redis in turn, with no fault, is
// linearizable. Each instance serves browse from its own local index, kept
// in step through the change log, so a browse on one instance must show
// what the other acknowledged before it began (the model's browse answers
// the listing with its players exactly while it is fresh).
func TestLinearizabilityAcrossInstances(t *testing.T) {
	args := append(linServerArgs(), redisStoreArgs(t)...)
	d := &linDeployment{survivor: startProc(t, args...), victim: startProc(t, args...), noKill: true}
	rec := runLinHistory(t, d.survivor, d)
	checkLinearizable(t, linFaultModel, rec.ops, porcupine.Ok)
	requireCoverage(t, rec.ops)
	checkLinearizable(t, linFaultModel, injectDoubleIntroduction(t, rec.ops), porcupine.Illegal)
}
