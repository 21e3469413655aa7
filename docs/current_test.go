package docs

import (
	"os"
	"strings"
	"testing"
)

// TestOperationsDescribesTheDeploymentThatRuns: the operations guide
// covers both stores, and none of the sentences it kept from the time the
// service was one process is back.
func TestOperationsDescribesTheDeploymentThatRuns(t *testing.T) {
	b, err := os.ReadFile("operations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, stale := range []string{
		"Rendezvous is one process", "single-active", "after v1", "in v1 ", "v1 is",
		"the store is in memory:",
	} {
		if strings.Contains(doc, stale) {
			t.Errorf("operations.md still says %q", stale)
		}
	}
	for _, want := range []string{"--store memory", "--store redis", "--redis-sentinel", "deployment.md", "LoadCredential"} {
		if !strings.Contains(doc, want) {
			t.Errorf("operations.md does not mention %q", want)
		}
	}
}
