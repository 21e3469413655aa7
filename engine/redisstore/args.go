package redisstore

// Argument positions of the functions that take more than three, named
// once on this side: index i is ARGV[3+i], the position ARG.<function>
// in scripts/prelude/15_arguments.lua names on the Lua side
// (TestArgumentPositionsAgree checks that both name the same). A call
// fills an array of the function's size by these names, so no argument
// is placed by counting. Functions of one to three arguments are called
// with them in ARG's order.

// rdv_create_listing (ARG.create_listing).
const (
	clTenant = iota
	clOwner
	clIdem
	clRequest
	clListing
	clLease
	clPresence
	clLeaseKey
	clPresenceField
	clSpec
	clDoc
	clPlayers
	clMaxPlayers
	clProtocol
	clPublic
	clRegion
	clAttrs
	clArgs // the number of arguments
)

// rdv_renew_lease (ARG.renew_lease).
const (
	rnTenant = iota
	rnOwner
	rnListing
	rnLease
	rnLeaseKey
	rnVersion
	rnPlayers
	rnSetAttrs
	rnAttrs
	rnArgs
)

// rdv_delete_listing (ARG.delete_listing).
const (
	dlTenant = iota
	dlOwner
	dlListing
	dlLease
	dlLeaseKey
	dlArgs
)

// rdv_browse (ARG.browse).
const (
	brTenant = iota
	brProtocol
	brRegion
	brAfter
	brLimit
	brIDs
	brArgs
)

// rdv_create_attempt (ARG.create_attempt).
const (
	caTenant = iota
	caClient
	caIdem
	caRequest
	caListing
	caProtocol
	caAttempt
	caHandle
	caPresence
	caHostKey
	caClientKey
	caRelayOnly
	caArgs
)

// rdv_quick_join (ARG.quick_join): the arguments before the candidates'.
const (
	qjTenant = iota
	qjClient
	qjIdem
	qjRequest
	qjProtocol
	qjAttempt
	qjHandle
	qjClientKey
	qjRelayOnly
	qjCount
	qjArgs
)

// rdv_bind_attempt (ARG.bind_attempt).
const (
	baHandle = iota
	baRole
	baKey
	baBinding
	baInstance
	baRelayed
	baArgs
)

// rdv_attempt_status (ARG.attempt_status).
const (
	asTenant = iota
	asSubject
	asAttempt
	asHandle
	asRevocation
	asArgs
)

// rdv_bind_presence (ARG.bind_presence).
const (
	bpInstance = iota
	bpRef
	bpField
	bpSeq
	bpValue
	bpArgs
)

// rdv_apply_batch (ARG.apply_batch): the arguments before the refreshes'.
const (
	abInstance = iota
	abRef
	abCount
	abKinds
	abArgs
)

// rdv_instance_register (ARG.instance_register).
const (
	irInstance = iota
	irAddr
	irLease
	irDrain
	irArgs
)
