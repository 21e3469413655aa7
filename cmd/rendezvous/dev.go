package main

import (
	"fmt"
	"io"

	"github.com/rendezvous/rendezvous/httpapi"
)

// writeDevBanner prints, once, the --dev principals' tokens with lines to
// try the service. It writes to stdout only: tokens never reach the log.
func writeDevBanner(w io.Writer, httpAddr, udpAddr string, tokens map[string]string) {
	base := "http://" + httpAddr
	fmt.Fprintf(w, `
Rendezvous is running in --dev mode: in-memory store, tenant demo/dev.
Development tokens (printed once, never logged):
  publisher        %s
  client           %s
  operator         %s
  global-operator  %[6]s
(operator acts in demo/dev only; global-operator in every tenant and on
the whole instance: drain, instance stats)

Try it:
  curl -s -H 'Authorization: Bearer %[2]s' '%[4]s/v1/listings?protocol_version=7'
  curl -s -X POST -H 'Authorization: Bearer %[1]s' -H 'Idempotency-Key: try-1' \
    -H 'Content-Type: application/json' '%[4]s/v1/listings' \
    -d '{"region":"eu-central","protocol_version":7,"build_version":"1.0.0","display_name":"Try me","visibility":"public","trust_mode":"player_hosted","current_players":1,"max_players":8}'
  curl -s -H 'Authorization: Bearer %[3]s' '%[4]s/v1/admin/tenant-stats'
  curl -s -H 'Authorization: Bearer %[6]s' '%[4]s/v1/admin/stats'
  curl -s '%[4]s/v1/openapi.json'   (the API's OpenAPI 3.1 description)
UDP mediator (STUN, RFC 8489): %[5]s
  a plain STUN Binding request there answers with your reflexive address.
A listing shows up in browse only once its host refreshes presence over UDP,
which curl cannot send: docs/walkthrough.md runs a host and a joiner with
bin/rendezvous-peer (make build) that publish, join and punch a direct path.
Stop with Ctrl-C (drains first).

`, tokens["publisher"], tokens["client"], tokens["operator"], base, udpAddr, tokens[httpapi.DevGlobalOperator])
}
