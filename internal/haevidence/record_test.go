package haevidence

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestRecordRoundTrip: what a test logs is what the parser reads back,
// and a line that is not a record is told apart from one that is broken.
func TestRecordRoundTrip(t *testing.T) {
	want := Record{Scenario: "s", Description: "d", Answers: map[string]int64{"success": 3, "untyped": 0},
		LostAdmitted: 1, LostStated: "w", DoubleIntroductions: 2, CeilingBreaches: 4, CrossTenantReads: 5}
	want.SetTimes(1234567*time.Microsecond, 5*time.Second)
	if *want.RecoveryS != 1.234 || *want.RecoveryBoundS != 5 {
		t.Fatalf("times %v %v, want 1.234 and 5", *want.RecoveryS, *want.RecoveryBoundS)
	}
	b, err := json.Marshal(&want)
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := Parse("    x_test.go:12: " + Prefix + string(b))
	if !ok || err != nil || !reflect.DeepEqual(*got, want) {
		t.Fatalf("Parse: %+v %v %v, want %+v", got, ok, err, want)
	}
	if _, ok, _ := Parse("an ordinary line"); ok {
		t.Fatal("an ordinary line read as a record")
	}
	for _, bad := range []string{Prefix + "{not json", Prefix + `{"description":"no scenario"}`} {
		if _, ok, err := Parse(bad); !ok || err == nil {
			t.Fatalf("%q: ok %v err %v, want a broken record", bad, ok, err)
		}
	}
	// Not recovered: no recovery_s at all, the bound kept.
	want.RecoveryS = nil
	b, _ = json.Marshal(&want)
	if strings.Contains(string(b), "recovery_s\"") {
		t.Fatalf("a record without recovery names one: %s", b)
	}
}

// TestLoad: workers run until Halt, which may be called twice; the tally
// counts from all of them and keeps at most max examples.
func TestLoad(t *testing.T) {
	l := NewLoad("untyped")
	for range 4 {
		l.Go(func() {
			for !l.Stopped() {
				l.Count("success")
				l.Example("untyped", "e", 3)
				time.Sleep(time.Millisecond)
			}
		})
	}
	ticks := 0
	l.Every(time.Millisecond, func(int) { ticks++ })
	time.Sleep(50 * time.Millisecond)
	l.Halt()
	l.Halt()
	n := l.N("success")
	time.Sleep(10 * time.Millisecond)
	if l.N("success") != n || n == 0 || ticks == 0 {
		t.Fatalf("after Halt: %d answers then %d, %d ticks", n, l.N("success"), ticks)
	}
	if a := l.Answers(); a["untyped"] != 0 || len(a) != 2 {
		t.Fatalf("answers %v, want success and untyped 0", a)
	}
	if ex := l.Examples("untyped"); len(ex) != 3 {
		t.Fatalf("%d examples kept, want 3", len(ex))
	}
}
