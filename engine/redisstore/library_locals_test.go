package redisstore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// Lua 5.1 (Redis's) refuses a function with more than 200 active locals,
// and the joined library is one function: every top-level local of every
// prelude file and transition file counts, to the end of the chunk. A
// helper added past the limit makes the whole library fail to load, so the
// count is kept well under it, with room for what the next changes add.
const localsBudget = 150

// TestLibraryLocalsWithinBudget counts the joined library's top-level
// locals and fails above localsBudget.
func TestLibraryLocalsWithinBudget(t *testing.T) {
	n, err := checkLocalsBudget(libraryBody(), localsBudget)
	t.Logf("the library's chunk declares %d top-level locals (budget %d, Lua's limit 200)", n, localsBudget)
	if err != nil {
		t.Fatal(err)
	}
	// A counter that lost track (of a string, a comment, a block) would
	// count far fewer: the library has dozens of helpers.
	if n < 60 {
		t.Fatalf("counted %d top-level locals: the counter is broken", n)
	}
}

// TestLocalsBudgetIsEnforced: the check fails once the chunk declares one
// local more than the budget, however the locals are declared.
func TestLocalsBudgetIsEnforced(t *testing.T) {
	body := libraryBody()
	n, err := topLevelLocals(body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkLocalsBudget(body+extraLocals(localsBudget-n), localsBudget); err != nil {
		t.Fatalf("at the budget: %v", err)
	}
	over := []string{
		extraLocals(localsBudget - n + 1),
		strings.Repeat("local function f() end\n", localsBudget-n+1),
	}
	for _, extra := range over {
		if _, err := checkLocalsBudget(body+extra, localsBudget); err == nil {
			t.Fatalf("one local over the budget passed the check")
		}
	}
}

// extraLocals declares k top-level locals in one statement.
func extraLocals(k int) string {
	if k <= 0 {
		return ""
	}
	names := make([]string, k)
	for i := range names {
		names[i] = fmt.Sprintf("extra%d", i)
	}
	return "\nlocal " + strings.Join(names, ", ") + " = nil\n"
}

// TestTopLevelLocalsCounter: what the counter counts, and what it must not.
func TestTopLevelLocalsCounter(t *testing.T) {
	for _, c := range []struct {
		src  string
		want int
	}{
		{"local a", 1},
		{"local a, b, c = 1, 2, 3", 3},
		{"local function f(x) local y = x return y end", 1},
		{"local f = function(a, b) local c end", 1},
		{"-- local a, b\nlocal c", 1},
		{"--[[ local a\nlocal b ]] local c", 1},
		{"--[==[ ]] local a ]==] local b", 1},
		{"local s = 'local a' .. \"local b\" .. 'it\\'s local c'", 1},
		{"local s = [[\nlocal a\n]] local t = [=[ ]] local b ]=]", 2},
		{"do local a end local b", 1},
		{"if x then local a elseif y then local b else local c end local d", 1},
		{"for i = 1, 2 do local a end while x do local b end repeat local c until x local d", 1},
		{"redis.register_function('f', function(keys, a) local x = a[1] end) local y", 1},
		{"local t = {a = 1, ['end'] = 2, [ [[x]] ] = 3} local u", 2},
		{"local a, b\nlocal function c() if d then return end end\nlocal e", 4},
	} {
		got, err := topLevelLocals(c.src)
		if err != nil || got != c.want {
			t.Errorf("topLevelLocals(%q) = %d, %v; want %d", c.src, got, err, c.want)
		}
	}
	for _, bad := range []string{"function f()", "end", "local s = 'open", "--[[ open", "local s = [[ open"} {
		if _, err := topLevelLocals(bad); err == nil {
			t.Errorf("topLevelLocals(%q) found no error", bad)
		}
	}
}

// TestLocalsCountedAsLuaCountsThem loads the library with as many extra
// locals as Lua allows by the count, then one more: the server's Lua must
// take the first and refuse the second, so the count is Lua's own.
func TestLocalsCountedAsLuaCountsThem(t *testing.T) {
	srv := redistest.Require(t)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n, err := topLevelLocals(libraryBody())
	if err != nil {
		t.Fatal(err)
	}
	const luaLimit = 200
	tail := "\nredis.register_function{function_name = 'rdv_version'"
	at := strings.LastIndex(library, tail)
	if at < 0 {
		t.Fatal("the library does not end with rdv_version")
	}
	load := func(extra int) error {
		src := library[:at] + extraLocals(extra) + library[at:]
		return c.Do(context.Background(), c.B().FunctionLoad().Replace().FunctionCode(src).Build()).Error()
	}
	if err := load(luaLimit - n); err != nil {
		t.Fatalf("the library with %d locals (Lua's limit) does not load: %v", luaLimit, err)
	}
	err = load(luaLimit - n + 1)
	if err == nil || !strings.Contains(err.Error(), "more than 200 local variables") {
		t.Fatalf("the library with %d locals loaded or failed otherwise: %v", luaLimit+1, err)
	}
}

// checkLocalsBudget counts src's top-level locals and fails above budget.
func checkLocalsBudget(src string, budget int) (int, error) {
	n, err := topLevelLocals(src)
	if err == nil && n > budget {
		err = fmt.Errorf("the library's chunk declares %d top-level locals, over its budget of %d (Lua's limit is 200): "+
			"group constants in a table or keep a helper's state inside it", n, budget)
	}
	return n, err
}

// topLevelLocals counts the locals a Lua chunk declares outside every
// function and block, which stay active to its end: 'local function f'
// declares one, 'local a, b = ...' two. Strings and comments are skipped;
// blocks are tracked by their keywords (function, if, do, repeat open one,
// so 'while ... do' and 'for ... do' open one; end and until close it).
func topLevelLocals(src string) (int, error) {
	toks, err := luaTokens(src)
	if err != nil {
		return 0, err
	}
	n, depth := 0, 0
	for i, tok := range toks {
		switch tok {
		case "function", "if", "do", "repeat":
			depth++
		case "end", "until":
			if depth--; depth < 0 {
				return 0, fmt.Errorf("an unmatched %q (token %d)", tok, i)
			}
		case "local":
			if depth > 0 || i+1 >= len(toks) {
				continue
			}
			if toks[i+1] == "function" {
				n++
				continue
			}
			for j := i + 1; j < len(toks) && isLuaName(toks[j]); j += 2 {
				n++
				if j+1 >= len(toks) || toks[j+1] != "," {
					break
				}
			}
		}
	}
	if depth != 0 {
		return 0, fmt.Errorf("%d blocks left open at the end", depth)
	}
	return n, nil
}

var luaKeywords = map[string]bool{
	"and": true, "break": true, "do": true, "else": true, "elseif": true, "end": true, "false": true,
	"for": true, "function": true, "if": true, "in": true, "local": true, "nil": true, "not": true,
	"or": true, "repeat": true, "return": true, "then": true, "true": true, "until": true, "while": true,
}

func isLuaName(tok string) bool {
	if tok == "" || luaKeywords[tok] {
		return false
	}
	c := tok[0]
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// luaTokens splits Lua source into names, keywords, numbers and single
// punctuation characters, leaving out comments and strings (a string
// becomes the token "<string>").
func luaTokens(src string) ([]string, error) {
	var toks []string
	isWord := func(c byte) bool {
		return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(src[i:], "--"):
			if level, ok := longBracket(src[i+2:]); ok {
				end, err := closeLongBracket(src, i+2, level)
				if err != nil {
					return nil, err
				}
				i = end
			} else if nl := strings.IndexByte(src[i:], '\n'); nl >= 0 {
				i += nl + 1
			} else {
				i = len(src)
			}
		case c == '\'' || c == '"':
			j := i + 1
			for ; j < len(src) && src[j] != c; j++ {
				if src[j] == '\\' {
					j++
				} else if src[j] == '\n' {
					return nil, fmt.Errorf("a string not closed on its line at byte %d", i)
				}
			}
			if j >= len(src) {
				return nil, fmt.Errorf("a string not closed at byte %d", i)
			}
			toks, i = append(toks, "<string>"), j+1
		case c == '[':
			if level, ok := longBracket(src[i:]); ok {
				end, err := closeLongBracket(src, i, level)
				if err != nil {
					return nil, err
				}
				toks, i = append(toks, "<string>"), end
			} else {
				toks, i = append(toks, "["), i+1
			}
		case isWord(c):
			j := i
			for j < len(src) && (isWord(src[j]) || c >= '0' && c <= '9' && src[j] == '.') {
				j++
			}
			toks, i = append(toks, src[i:j]), j
		default:
			toks, i = append(toks, src[i:i+1]), i+1
		}
	}
	return toks, nil
}

// longBracket reports whether s opens a long bracket ('[', any number of
// '=', '[') and its level (the number of '=').
func longBracket(s string) (level int, ok bool) {
	if len(s) == 0 || s[0] != '[' {
		return 0, false
	}
	for level = 1; level < len(s) && s[level] == '='; level++ {
	}
	if level < len(s) && s[level] == '[' {
		return level - 1, true
	}
	return 0, false
}

// closeLongBracket answers where the long bracket of level opened at src[at]
// ends (just past its closing bracket).
func closeLongBracket(src string, at, level int) (int, error) {
	closing := "]" + strings.Repeat("=", level) + "]"
	end := strings.Index(src[at+level+2:], closing)
	if end < 0 {
		return 0, fmt.Errorf("a long string or comment not closed at byte %d", at)
	}
	return at + level + 2 + end + len(closing), nil
}
