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
// the prelude (shared helpers, scripts/prelude/, one file per concern)
// followed by one file per transition (scripts/*.lua). Functions, unlike
// cached EVAL scripts, are replicated with the data, so a promoted replica
// has them.

//go:embed scripts/*.lua scripts/prelude/*.lua
var scriptFS embed.FS

// libraryName is the Redis Functions library holding every transition.
const libraryName = "rendezvous"

// library is the library's source and its version: a hash of the source, so
// instances running different code never share a library silently.
var library, libraryVersion = buildLibrary()

// libraryFiles are the library's files in the order they are joined: the
// prelude's in the order of their names (a Lua local is visible only
// after it, so each file comes after the helpers it calls; the names
// begin with their place), then the transitions.
func libraryFiles() []string {
	var names []string
	for _, dir := range []string{"scripts/prelude", "scripts"} {
		n, err := fs.Glob(scriptFS, dir+"/*.lua")
		if err != nil || len(n) == 0 {
			panic(fmt.Sprintf("BUG: no library files in %s: %v", dir, err))
		}
		slices.Sort(n)
		names = append(names, n...)
	}
	return names
}

// libraryBody is the files joined: the one Lua chunk Redis runs to load
// the library, without its shebang line and the version function.
func libraryBody() string {
	var body strings.Builder
	for _, n := range libraryFiles() {
		b, _ := scriptFS.ReadFile(n)
		body.WriteString("\n")
		body.Write(b)
	}
	return body.String()
}

func buildLibrary() (string, string) {
	body := libraryBody()
	sum := sha256.Sum256([]byte(body))
	version := hex.EncodeToString(sum[:8])
	src := "#!lua name=" + libraryName + "\n" + body +
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
