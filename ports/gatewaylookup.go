package ports

import (
	"context"

	"github.com/submissionmanager/submission-manager/core"
)

// LookupParams asks a gateway what became of one reference.
type LookupParams struct {
	GatewayType core.GatewayType
	GatewayURL  string
	Reference   string
	// TraceParent, when not empty, is the W3C traceparent the lookup
	// carries, as SubmitParams.TraceParent.
	TraceParent string
}

// LookupResult is a gateway's statement about a reference. Outcome is set
// only when Answer is core.LookupKnown.
type LookupResult struct {
	Answer  core.LookupAnswer
	Outcome core.Outcome
}

// GatewayLookup is the optional half of a gateway client: asking what the
// gateway did with a reference whose attempt is in doubt (the leader that
// made it stopped during the call). A client that offers it implements it
// beside Gateway; the engine asks only clients that do. Any answer that is
// not a clear statement (the gateway lacks the route, an HTTP error, an
// unreadable body, a transport failure) is core.LookupUnsupported with a nil
// error or an error saying why: then the engine does what it would do
// without a lookup.
type GatewayLookup interface {
	Lookup(ctx context.Context, p LookupParams) (LookupResult, error)
}
