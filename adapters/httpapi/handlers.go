package httpapi

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/submissionmanager/submission-manager/adapters/httpapi/internal/apigen"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// defaultPageSize is the listing page size when the client names none; the
// OpenAPI document states the same default.
const defaultPageSize = 50

// handlers implements the generated strict server interface. Each handler
// only translates: the request into a port call, the result into a response
// type. Errors are returned untouched for problemFor to answer.
type handlers struct {
	service    ports.IntentService
	operator   ports.OperatorService // nil when the service offers none
	gateways   ports.GatewayOperator
	instances  ports.InstanceDirectory // nil answers 501
	leadership ports.LeadershipReporter
	holderID   string
	apiOnly    bool
	// waiter and maxWait serve Prefer: wait=N; a nil waiter ignores it.
	waiter  ports.FinalWaiter
	maxWait time.Duration
}

var _ apigen.StrictServerInterface = (*handlers)(nil)

// SubmitIntent answers 201 when this call created the intent and 200 when it
// repeated an existing one, so a client can tell a retry from a first send.
func (h *handlers) SubmitIntent(ctx context.Context, req apigen.SubmitIntentRequestObject) (apigen.SubmitIntentResponseObject, error) {
	if req.Body == nil {
		return nil, errBodyRequired
	}
	res, err := h.service.SubmitIntent(ctx, ports.SubmitIntentParams{
		IntentID:         req.Body.IntentId,
		SubmissionTarget: req.Body.SubmissionTarget,
		Payload:          req.Body.Payload,
		NotBefore:        deref(req.Body.NotBefore),
		TraceParent:      deref(req.Params.Traceparent),
	})
	if err != nil {
		return nil, err
	}
	in, applied, err := h.awaitFinal(ctx, res.Intent, req.Params.Prefer)
	if err != nil {
		return nil, err
	}
	if res.Created {
		return apigen.SubmitIntent201JSONResponse{Body: intentFromCore(in), Headers: apigen.SubmitIntent201ResponseHeaders{PreferenceApplied: applied}}, nil
	}
	return apigen.SubmitIntent200JSONResponse{Body: intentFromCore(in), Headers: apigen.SubmitIntent200ResponseHeaders{PreferenceApplied: applied}}, nil
}

// GetIntent returns one intent with its payload and attempts.
func (h *handlers) GetIntent(ctx context.Context, req apigen.GetIntentRequestObject) (apigen.GetIntentResponseObject, error) {
	if !utf8.ValidString(req.IntentId) {
		// No intentId ever accepted is invalid UTF-8, and a store could
		// read such bytes as another id (U+FFFD in place of each bad byte).
		return nil, core.ErrIntentNotFound
	}
	in, err := h.service.GetIntent(ctx, req.IntentId)
	if err != nil {
		return nil, err
	}
	in, applied, err := h.awaitFinal(ctx, in, req.Params.Prefer)
	if err != nil {
		return nil, err
	}
	body := intentFromCore(in)
	// Only a single intent's read carries the payload: submitters sent it,
	// and a page of intents with up to 256 KiB each would be too heavy.
	body.Payload = in.Payload
	return apigen.GetIntent200JSONResponse{Body: body, Headers: apigen.GetIntent200ResponseHeaders{PreferenceApplied: applied}}, nil
}

// ListIntents returns a page, newest first, with the cursors of the pages
// on either side. The service checks the filters.
func (h *handlers) ListIntents(ctx context.Context, req apigen.ListIntentsRequestObject) (apigen.ListIntentsResponseObject, error) {
	p, err := listingParams(req.Params)
	if err != nil {
		return nil, err
	}
	if p.SubmissionTarget != "" && !utf8.ValidString(p.SubmissionTarget) {
		return nil, &core.FieldError{Field: "submissionTarget", Message: "is not valid UTF-8"}
	}
	page, err := h.service.ListIntents(ctx, p)
	if err != nil {
		return nil, err
	}
	out := apigen.IntentPage{Intents: make([]apigen.Intent, 0, len(page.Intents))}
	for _, in := range page.Intents {
		out.Intents = append(out.Intents, intentFromCore(in))
	}
	if page.Next != nil {
		out.NextCursor = ptr(ports.EncodeCursor(*page.Next))
	}
	if page.Prev != nil {
		out.PrevCursor = ptr(ports.EncodePrevCursor(*page.Prev))
	}
	return apigen.ListIntents200JSONResponse(out), nil
}

// ListTargets returns every contract of the registry the service runs with.
func (h *handlers) ListTargets(context.Context, apigen.ListTargetsRequestObject) (apigen.ListTargetsResponseObject, error) {
	contracts := h.service.Targets()
	out := apigen.TargetList{Targets: make([]apigen.Contract, 0, len(contracts))}
	for _, c := range contracts {
		out.Targets = append(out.Targets, contractFromCore(c))
	}
	return apigen.ListTargets200JSONResponse(out), nil
}

// GetTarget returns one contract. An unknown target is a missing resource
// here (404), unlike in a submission, where it is an invalid field (422).
func (h *handlers) GetTarget(_ context.Context, req apigen.GetTargetRequestObject) (apigen.GetTargetResponseObject, error) {
	c, err := h.service.Target(req.SubmissionTarget)
	if errors.Is(err, core.ErrUnknownTarget) {
		return nil, &targetNotFoundError{target: req.SubmissionTarget}
	}
	if err != nil {
		return nil, err
	}
	return apigen.GetTarget200JSONResponse(contractFromCore(c)), nil
}

// Healthz says the process serves HTTP; it checks nothing else, so a slow
// database never takes every instance out of rotation at once.
func (h *handlers) Healthz(context.Context, apigen.HealthzRequestObject) (apigen.HealthzResponseObject, error) {
	return apigen.Healthz200TextResponse("ok"), nil
}

// Readyz names this instance's role for operators. Leaders and followers
// both answer 200 so that followers stay in HTTP rotation.
func (h *handlers) Readyz(context.Context, apigen.ReadyzRequestObject) (apigen.ReadyzResponseObject, error) {
	return apigen.Readyz200TextResponse(readiness(h.holderID, h.leadership, h.apiOnly)), nil
}

// readiness formats the role line of the lease spec, for example
// "mode=leader holder_id=sm-01 lease_epoch=3 lease_expires_at=2026-02-02T12:00:10Z".
// A follower names itself and, when known, the leader it last saw; an
// API-only instance, which never leads, adds api_only=true.
func readiness(holderID string, r ports.LeadershipReporter, apiOnly bool) string {
	var (
		lease  core.Lease
		leader bool
	)
	if r != nil {
		lease, leader = r.Leadership()
	}
	if leader {
		return fmt.Sprintf("mode=leader holder_id=%s lease_epoch=%d lease_expires_at=%s",
			lease.HolderID, lease.Epoch, lease.ExpiresAt.UTC().Format(time.RFC3339))
	}
	line := "mode=follower holder_id=" + holderID
	if lease.HolderID != "" && lease.HolderID != holderID {
		line += fmt.Sprintf(" leader_holder_id=%s lease_expires_at=%s",
			lease.HolderID, lease.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if apiOnly {
		line += " api_only=true"
	}
	return line
}
