package httpapi

import (
	"context"
	"unicode/utf8"

	"github.com/submissionmanager/submission-manager/adapters/httpapi/internal/apigen"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// CancelIntent answers 200 with the cancelled intent, also when it was
// cancelled before; refusals (in flight, ended, not found) are problems.
func (h *handlers) CancelIntent(ctx context.Context, req apigen.CancelIntentRequestObject) (apigen.CancelIntentResponseObject, error) {
	res, err := h.intervene(ctx, req.IntentId, ports.OperatorService.CancelIntent)
	if err != nil {
		return nil, err
	}
	return apigen.CancelIntent200JSONResponse(intentFromCore(res.Intent)), nil
}

// RunIntentNow answers 200 with the intent, due now (or already due).
func (h *handlers) RunIntentNow(ctx context.Context, req apigen.RunIntentNowRequestObject) (apigen.RunIntentNowResponseObject, error) {
	res, err := h.intervene(ctx, req.IntentId, ports.OperatorService.RunNow)
	if err != nil {
		return nil, err
	}
	return apigen.RunIntentNow200JSONResponse(intentFromCore(res.Intent)), nil
}

// intervene runs an operator action with the request's actor: the API,
// and the role of the key the request presented (never the key).
func (h *handlers) intervene(ctx context.Context, intentID string,
	act func(ports.OperatorService, context.Context, ports.IntentActionParams) (ports.IntentActionResult, error)) (ports.IntentActionResult, error) {
	if h.operator == nil {
		return ports.IntentActionResult{}, errNoOperatorService
	}
	if !utf8.ValidString(intentID) {
		return ports.IntentActionResult{}, core.ErrIntentNotFound // as GetIntent: no stored id is invalid UTF-8
	}
	return act(h.operator, ctx, ports.IntentActionParams{
		IntentID: intentID,
		Actor:    core.Actor{Surface: ports.SurfaceAPI, Role: keyRole(ctx)},
	})
}
