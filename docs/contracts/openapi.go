// Package contracts holds the machine-readable wire contract: the OpenAPI
// 3.1 description of the HTTP API (openapi.json beside this file), which
// the server serves at GET /v1/openapi.json byte for byte and the
// end-to-end tests validate every request and answer against.
package contracts

import _ "embed"

// OpenAPI is the OpenAPI 3.1 document, as the repository holds it. Callers
// must not modify it.
//
//go:embed openapi.json
var OpenAPI []byte
