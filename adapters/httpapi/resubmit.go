package httpapi

import (
	"context"
	"errors"

	"github.com/submissionmanager/submission-manager/adapters/httpapi/internal/apigen"
	"github.com/submissionmanager/submission-manager/ports"
)

// errNoOperatorService means the service wired into the API offers no
// operator operations; cmd always wires one, so this is a wiring defect.
var errNoOperatorService = errors.New("httpapi: the service offers no operator operations")

// ResubmitIntent answers 201 when this call created the resubmission and
// 200 when the intent already had one. The body's acknowledgeDeliveryRisk
// goes to the service, which holds the rule (core.DeliveryRisk).
func (h *handlers) ResubmitIntent(ctx context.Context, req apigen.ResubmitIntentRequestObject) (apigen.ResubmitIntentResponseObject, error) {
	if h.operator == nil {
		return nil, errNoOperatorService
	}
	p := ports.ResubmitIntentParams{IntentID: req.IntentId}
	if req.Body != nil && req.Body.IntentId != nil {
		p.NewIntentID = *req.Body.IntentId
	}
	if req.Body != nil && req.Body.AcknowledgeDeliveryRisk != nil {
		p.AcknowledgeDeliveryRisk = *req.Body.AcknowledgeDeliveryRisk
	}
	res, err := h.operator.ResubmitIntent(ctx, p)
	if err != nil {
		return nil, err
	}
	if res.Created {
		return apigen.ResubmitIntent201JSONResponse(intentFromCore(res.Intent)), nil
	}
	return apigen.ResubmitIntent200JSONResponse(intentFromCore(res.Intent)), nil
}
