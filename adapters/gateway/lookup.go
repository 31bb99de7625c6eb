package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"

	"github.com/submissionmanager/submission-manager/api/gatewayapi"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.GatewayLookup = (*Client)(nil)

// lookupBody is the lookup answer as read: the answer is kept raw so that
// it goes through the gateway type's answer reader, the same rule as a
// submission's answer.
type lookupBody struct {
	Lookup *string          `json:"lookup"`
	Answer *json.RawMessage `json:"answer"`
}

// Lookup asks the gateway what it did with a reference (the optional
// GET {gatewayUrl}/v1/submissions/{reference}). Only a 200 whose JSON body
// carries a known `lookup` is a statement; anything else (404, 405, 501,
// any other status, a body without `lookup`, a transport failure) is
// core.LookupUnsupported with an error saying why.
func (c *Client) Lookup(ctx context.Context, p ports.LookupParams) (ports.LookupResult, error) {
	unsupported := ports.LookupResult{Answer: core.LookupUnsupported}
	if p.GatewayType != c.gatewayType {
		return unsupported, fmt.Errorf("lookup not sent: a %s client cannot look up on gateway type %q", c.gatewayType, p.GatewayType)
	}
	base, err := baseURL(p.GatewayURL)
	if err != nil {
		return unsupported, fmt.Errorf("lookup not sent: %w", err)
	}
	req, err := gatewayapi.NewLookupSubmissionRequest(base, p.Reference)
	if err != nil {
		return unsupported, fmt.Errorf("lookup not sent: %w", err)
	}
	req.Header = maps.Clone(c.lookupHeaders)
	withTraceParent(req.Header, p.TraceParent)
	callCtx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	resp, err := c.send(req.WithContext(callCtx))
	if err != nil {
		return unsupported, fmt.Errorf("lookup failed: %w", err)
	}
	defer c.release(resp)
	if resp.StatusCode != http.StatusOK {
		return unsupported, fmt.Errorf("lookup answered HTTP %d: the gateway offers no lookup", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxAnswerBytes+1))
	if err != nil {
		return unsupported, fmt.Errorf("lookup failed reading the answer: %w", err)
	}
	if int64(len(body)) > c.cfg.MaxAnswerBytes {
		return unsupported, fmt.Errorf("lookup answer exceeds %d bytes", c.cfg.MaxAnswerBytes)
	}
	var lb lookupBody
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&lb); err != nil || lb.Lookup == nil {
		return unsupported, fmt.Errorf("lookup answer carries no lookup field")
	}
	switch gatewayapi.LookupAnswerLookup(*lb.Lookup) {
	case gatewayapi.NeverReceived:
		return ports.LookupResult{Answer: core.LookupNeverReceived}, nil
	case gatewayapi.Answered:
		if lb.Answer == nil {
			return unsupported, fmt.Errorf("lookup answered without an answer")
		}
		o, err := c.read(c, *lb.Answer)
		if err != nil {
			return unsupported, fmt.Errorf("lookup answer: %w", err)
		}
		return ports.LookupResult{Answer: core.LookupKnown, Outcome: o}, nil
	default:
		return unsupported, fmt.Errorf("lookup answer %q is not known", *lb.Lookup)
	}
}
