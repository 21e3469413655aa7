package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"testing"

	"github.com/rendezvous/rendezvous/internal/e2e"
)

func TestListingIDText(t *testing.T) {
	const s = "0F1E2D3C-4B5A-4978-8695-A4B3C2D1E0F0"
	id, err := ParseListingID(s)
	if err != nil {
		t.Fatal(err)
	}
	if id.String() != "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0" || id.IsZero() {
		t.Fatalf("parsed %v", id)
	}
	b, err := json.Marshal(Listing{ListingID: id})
	if err != nil {
		t.Fatal(err)
	}
	var back Listing
	if err := json.Unmarshal(b, &back); err != nil || back.ListingID != id {
		t.Fatalf("JSON round trip: %s -> %v, %v", b, back.ListingID, err)
	}
	for _, bad := range []string{"", "x", "0f1e2d3c4b5a49788695a4b3c2d1e0f0", "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0fg"} {
		_, err := ParseListingID(bad)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != "listing_id" {
			t.Fatalf("ParseListingID(%q): %v, want an *InputError naming listing_id", bad, err)
		}
		before := id
		if err := id.UnmarshalText([]byte(bad)); err == nil || id != before {
			t.Fatalf("UnmarshalText(%q) accepted or changed the ID", bad)
		}
	}
	if _, err := ParseAttemptID("0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0"); err != nil {
		t.Fatal(err)
	}
}

func TestCapabilityRedacted(t *testing.T) {
	var c Capability
	for i := range c {
		c[i] = byte(i + 1)
	}
	tok := c.token()
	if back, ok := parseCapability(tok); !ok || back != c {
		t.Fatal("token round trip")
	}
	lease := Lease{Token: c}
	j, _ := json.Marshal(lease)
	for _, out := range []string{fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s %x", c, lease, lease, c, c), string(j)} {
		if regexp.MustCompile(regexp.QuoteMeta(tok)).MatchString(out) || regexp.MustCompile(`\b1, 2, 3\b|0102030405`).MatchString(out) {
			t.Fatalf("the capability shows: %s", out)
		}
	}
}

// TestPublicAPIStandsAlone: nothing in the SDK's exported API names a type
// of the server's packages, so a program needs no import but this one.
func TestPublicAPIStandsAlone(t *testing.T) {
	out, err := exec.Command(e2e.GoTool(), "doc", "-all", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go doc: %v\n%s", err, out)
	}
	if m := regexp.MustCompile(`.*\b(engine|stun|netio|httpapi)\.\w.*`).FindAll(out, -1); m != nil {
		t.Fatalf("the exported API names server packages:\n%s", m)
	}
}
