package redistest

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/redis/rueidis"
)

// TestInstructionsCountsWhatRanBetween: under CallgrindEnv, Instructions
// answers what the server executed while fn ran, and nothing from before:
// ten times the commands count about ten times the instructions.
func TestInstructionsCountsWhatRanBetween(t *testing.T) {
	if _, err := exec.LookPath("valgrind"); err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("%s is set but valgrind is not installed (apt-get install valgrind): %v", RequireEnv, err)
		}
		t.Skip("valgrind is not installed (apt-get install valgrind)")
	}
	t.Setenv(CallgrindEnv, t.TempDir())
	s := Require(t)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.Addr}, DisableCache: true, ForceSingleClient: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sets := func(n int) func() {
		return func() {
			for range n {
				if err := c.Do(context.Background(), c.B().Set().Key("k").Value("v").Build()).Error(); err != nil {
					t.Error(err)
				}
			}
		}
	}
	sets(500)() // before the count: left out
	few, ok, err := s.Instructions(sets(50))
	if err != nil || !ok {
		t.Fatalf("Instructions under callgrind: %v %v", ok, err)
	}
	many, ok, err := s.Instructions(sets(500))
	if err != nil || !ok {
		t.Fatalf("Instructions under callgrind: %v %v", ok, err)
	}
	if few == 0 || many < 5*few || many > 20*few {
		t.Fatalf("50 SETs counted %d instructions, 500 SETs %d: want about ten times as many", few, many)
	}
	t.Setenv(CallgrindEnv, "")
	plain := Require(t)
	ran := false
	if _, ok, err := plain.Instructions(func() { ran = true }); ok || err != nil || !ran {
		t.Fatalf("Instructions of a server started without %s: counted %v, %v, ran %v", CallgrindEnv, ok, err, ran)
	}
}
