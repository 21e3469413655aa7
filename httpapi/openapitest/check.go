// Package openapitest checks HTTP exchanges with the server against its
// OpenAPI description (docs/contracts/openapi.json), so the description
// cannot drift from what the server does: end-to-end tests send their
// requests through Transport, which fails the test on any mismatch.
package openapitest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/pb33f/libopenapi-validator/paths"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
	"github.com/pb33f/libopenapi/orderedmap"
	"github.com/rendezvous/rendezvous/docs/contracts"
)

// Checker validates request and answer pairs against one OpenAPI document.
// It is safe for concurrent use.
type Checker struct {
	mu      sync.Mutex // the validator's caches are not documented as concurrency-safe
	model   *v3.Document
	opts    *config.ValidationOptions
	v       validator.Validator
	schemas schema_validation.SchemaValidator
}

// checkerOptions: strict mode reports answer members the description does
// not declare (the schemas themselves stay open, since clients must ignore
// unknown members). Server is fasthttp's name header.
func checkerOptions() []config.Option {
	return []config.Option{
		config.WithStrictMode(),
		config.WithStrictIgnoredHeadersExtra("server"),
		config.WithFormatAssertions(),
	}
}

// NewChecker builds a Checker for spec (an OpenAPI 3.1 document).
func NewChecker(spec []byte) (*Checker, error) {
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		return nil, fmt.Errorf("openapi: parse: %w", err)
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("openapi: build model: %w", err)
	}
	opts := checkerOptions()
	v, errs := validator.NewValidator(doc, opts...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("openapi: validator: %w", errors.Join(errs...))
	}
	if ok, errs := v.ValidateDocument(); !ok {
		return nil, fmt.Errorf("openapi: the document is not valid OpenAPI: %s", describe(errs))
	}
	return &Checker{model: &m.Model, opts: config.NewValidationOptions(opts...), v: v,
		schemas: schema_validation.NewSchemaValidator(opts...)}, nil
}

// shared is the Checker of the repository's document, built once.
var shared = sync.OnceValues(func() (*Checker, error) { return NewChecker(contracts.OpenAPI) })

// Repository returns the Checker of docs/contracts/openapi.json.
func Repository() (*Checker, error) { return shared() }

// Check validates one exchange: req was sent with body reqBody and answered
// by resp with body respBody. It returns one line per mismatch, nil when the
// exchange matches the description.
//
// The answer must always match: a documented status, content type, headers
// and body. A request the description rejects must be refused (4xx): the
// server accepting it means the description is stricter than the server. A
// request to an undescribed path or method must get the problem the
// description's components promise for it (404, 405 with Allow, or 401,
// 408, 413, 431, which come first).
func (c *Checker) Check(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	item, _, tmpl := paths.FindPath(withBody(req, reqBody), c.model, c.opts)
	if item == nil || helpers.ExtractOperation(req, item) == nil {
		return c.checkUndescribed(req, item, tmpl, resp, respBody)
	}
	var out []string
	if _, errs := c.v.ValidateHttpResponse(withBody(req, reqBody), withRespBody(resp, respBody)); len(errs) > 0 {
		out = append(out, "answer: "+describe(errs))
	}
	if r := helpers.ExtractOperation(req, item).Responses.Codes.GetOrZero(strconv.Itoa(resp.StatusCode)); r != nil {
		out = append(out, undeclaredHeaders(r, resp.Header)...)
		// The validator passes an empty body whatever the schema says.
		switch described := orderedmap.Len(r.Content) > 0; {
		case described && len(respBody) == 0 && req.Method != http.MethodHead:
			out = append(out, "the answer has no body; the description promises one")
		case !described && len(respBody) > 0:
			out = append(out, "the answer has a body; the description promises none")
		}
	}
	if _, errs := c.v.ValidateHttpRequestSync(withBody(req, reqBody)); resp.StatusCode < 400 {
		if faults := requestFaults(errs, queryPatterns(item, helpers.ExtractOperation(req, item))); len(faults) > 0 {
			out = append(out, fmt.Sprintf("the server accepted (%d) a request the description rejects: %s", resp.StatusCode, describe(faults)))
		}
	}
	return out
}

// requestFaults drops strict mode's undeclared request headers: the server
// ignores headers it does not know (unlike unknown query parameters and
// body members, which it refuses), so such a request is not invalid. It
// also drops undeclared query parameters whose names one of patterns
// matches (see queryPatterns).
func requestFaults(errs []*liberrors.ValidationError, patterns []*regexp.Regexp) []*liberrors.ValidationError {
	return slices.DeleteFunc(slices.Clone(errs), func(e *liberrors.ValidationError) bool {
		if e.ValidationType != liberrors.StrictValidationType {
			return false
		}
		return e.ValidationSubType == liberrors.StrictSubTypeHeader || e.ValidationSubType == liberrors.StrictSubTypeQuery &&
			slices.ContainsFunc(patterns, func(re *regexp.Regexp) bool { return re.MatchString(e.ParameterName) })
	})
}

// queryPatterns are the patternProperties of the exploded form object
// query parameters of an operation (browse's attr: OpenAPI cannot name
// parameters by pattern, so attr.<name>[.<op>] are the properties of one
// exploded object). The validator checks their values against that
// object's schema, but strict mode still calls each one undeclared.
func queryPatterns(item *v3.PathItem, op *v3.Operation) []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, p := range slices.Concat(item.Parameters, op.Parameters) {
		if p.In != "query" || !p.IsExploded() || p.Schema == nil {
			continue
		}
		s := p.Schema.Schema()
		if s == nil || s.PatternProperties == nil {
			continue
		}
		for pair := s.PatternProperties.First(); pair != nil; pair = pair.Next() {
			if re, err := regexp.Compile(pair.Key()); err == nil {
				out = append(out, re)
			}
		}
	}
	return out
}

// checkUndescribed checks the answer to a request for a path the
// description lacks (item nil) or a method its path item lacks.
func (c *Checker) checkUndescribed(req *http.Request, item *v3.PathItem, tmpl string, resp *http.Response, body []byte) []string {
	var want string
	switch resp.StatusCode {
	case http.StatusNotFound:
		if item != nil {
			return []string{"404 for the described path " + tmpl + ": want 405 with Allow"}
		}
		want = "NotFound"
	case http.StatusMethodNotAllowed:
		if item == nil {
			return []string{"405 for a path the description lacks: want 404"}
		}
		if got, allowed := resp.Header.Get("Allow"), strings.Join(methods(item), ", "); got != allowed {
			return []string{fmt.Sprintf("405 with Allow %q, the description's methods of %s are %q", got, tmpl, allowed)}
		}
		want = "MethodNotAllowed"
	case http.StatusUnauthorized:
		if item != nil && isPublic(item) {
			return []string{"401 on the public path " + tmpl}
		}
		want = "Unauthorized"
	case http.StatusRequestTimeout:
		want = "RequestTimeout"
	case http.StatusRequestEntityTooLarge:
		want = "PayloadTooLarge"
	case http.StatusRequestHeaderFieldsTooLarge:
		want = "HeadersTooLarge"
	default:
		return []string{fmt.Sprintf("undescribed %s %s answered %d, which the description does not promise", req.Method, req.URL.Path, resp.StatusCode)}
	}
	return c.checkComponentResponse(want, resp, body)
}

// checkComponentResponse checks an answer against components.responses[name]:
// content type, required headers (by presence and schema) and body schema.
func (c *Checker) checkComponentResponse(name string, resp *http.Response, body []byte) []string {
	r, ok := c.model.Components.Responses.Get(name)
	if !ok {
		return []string{"the description has no components.responses." + name}
	}
	out := undeclaredHeaders(r, resp.Header)
	ct := resp.Header.Get("Content-Type")
	mt, ok := helpers.FindMediaType(r.Content, ct)
	if !ok {
		out = append(out, fmt.Sprintf("%s: content type %q is not described", name, ct))
	} else if _, errs := c.schemas.ValidateSchemaBytes(mt.Schema.Schema(), body); len(errs) > 0 {
		out = append(out, name+" body: "+describe(errs))
	}
	for h, hdr := range r.Headers.FromOldest() {
		val := resp.Header.Get(h)
		switch {
		case val == "" && hdr.Required:
			out = append(out, fmt.Sprintf("%s: header %s is missing", name, h))
		case val != "":
			if _, errs := c.schemas.ValidateSchemaBytes(hdr.Schema.Schema(), []byte(strconv.Quote(val))); len(errs) > 0 {
				out = append(out, fmt.Sprintf("%s: header %s: %s", name, h, describe(errs)))
			}
		}
	}
	return out
}

// transportHeaders are answer headers of HTTP itself, which the
// description does not list.
var transportHeaders = []string{"Content-Type", "Content-Length", "Date", "Server", "Connection", "Transfer-Encoding"}

// undeclaredHeaders lists the answer headers r does not declare. (The
// validator's strict mode checks headers only of answers that declare some.)
func undeclaredHeaders(r *v3.Response, h http.Header) []string {
	var out []string
	for name := range h {
		declared := slices.ContainsFunc(transportHeaders, func(t string) bool { return strings.EqualFold(t, name) })
		for d := range r.Headers.KeysFromOldest() {
			declared = declared || strings.EqualFold(d, name)
		}
		if !declared {
			out = append(out, "undeclared answer header "+name)
		}
	}
	slices.Sort(out)
	return out
}

// methods lists the methods of a path item in the order the router's Allow
// header uses (GET, HEAD, POST, PUT, DELETE).
func methods(item *v3.PathItem) []string {
	var ms []string
	for _, m := range []struct {
		name string
		op   *v3.Operation
	}{{"GET", item.Get}, {"HEAD", item.Head}, {"POST", item.Post}, {"PUT", item.Put}, {"DELETE", item.Delete}, {"PATCH", item.Patch}} {
		if m.op != nil {
			ms = append(ms, m.name)
		}
	}
	return ms
}

// isPublic reports whether every operation of item needs no authentication.
func isPublic(item *v3.PathItem) bool {
	for op := range item.GetOperations().ValuesFromOldest() {
		if op.Security == nil || len(op.Security) != 0 {
			return false
		}
	}
	return true
}

func withBody(req *http.Request, body []byte) *http.Request {
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	return r
}

func withRespBody(resp *http.Response, body []byte) *http.Response {
	r := *resp
	r.Body = io.NopCloser(bytes.NewReader(body))
	return &r
}

// describe renders validation errors on one line each, sorted.
func describe(errs []*liberrors.ValidationError) string {
	var lines []string
	for _, e := range errs {
		l := e.Message
		if e.Reason != "" {
			l += ": " + e.Reason
		}
		for _, s := range e.SchemaValidationErrors {
			l += " [" + s.Reason + " at " + strings.Join(s.InstancePath, "/") + "]"
		}
		lines = append(lines, l)
	}
	slices.Sort(lines)
	return strings.Join(lines, "; ")
}
