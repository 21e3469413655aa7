package redisstore

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/redis/rueidis"
)

// The store's transitions are Redis Functions in one library, "rendezvous":
// the prelude (shared helpers) followed by one file per transition. Functions,
// unlike cached EVAL scripts, are replicated with the data, so a promoted
// replica has them.

//go:embed scripts/*.lua
var scriptFS embed.FS

// libraryName is the Redis Functions library holding every transition.
const libraryName = "rendezvous"

// library is the library's source and its version: a hash of the source, so
// instances running different code never share a library silently.
var library, libraryVersion = buildLibrary()

func buildLibrary() (string, string) {
	names, err := fs.Glob(scriptFS, "scripts/*.lua")
	if err != nil {
		panic("BUG: " + err.Error())
	}
	// The preludes (shared helpers) first, prelude.lua before the others,
	// then the transitions: a Lua local is visible only after it.
	isPrelude := func(n string) bool { return strings.HasPrefix(n, "scripts/prelude") }
	slices.SortStableFunc(names, func(a, b string) int {
		if isPrelude(a) != isPrelude(b) {
			if isPrelude(a) {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var body strings.Builder
	for _, n := range names {
		b, _ := scriptFS.ReadFile(n)
		body.WriteString("\n")
		body.Write(b)
	}
	sum := sha256.Sum256([]byte(body.String()))
	version := hex.EncodeToString(sum[:8])
	src := "#!lua name=" + libraryName + "\n" + body.String() +
		"\nredis.register_function{function_name = 'rdv_version', flags = {'no-writes'}, callback = function() return '" + version + "' end}\n"
	return src, version
}

// loadLibrary makes sure the server runs this build's library: it asks the
// loaded library's version and loads (replacing) the library when it
// differs or is missing.
func loadLibrary(ctx context.Context, c rueidis.Client) error {
	v, err := c.Do(ctx, c.B().Fcall().Function("rdv_version").Numkeys(0).Build()).ToString()
	if err == nil && v == libraryVersion {
		return nil
	}
	if err := c.Do(ctx, c.B().FunctionLoad().Replace().FunctionCode(library).Build()).Error(); err != nil {
		return fmt.Errorf("redisstore: loading the %s function library: %w", libraryName, err)
	}
	return nil
}
