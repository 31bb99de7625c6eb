package console_test

import (
	"context"

	"github.com/submissionmanager/submission-manager/ports"
)

// CancelIntent and RunNow act through the in-memory store and answer the
// intent as the desk reads it, events included, as the service does.

func (d *desk) CancelIntent(ctx context.Context, p ports.IntentActionParams) (ports.IntentActionResult, error) {
	return d.act(ctx, p, d.store.CancelIntent)
}

func (d *desk) RunNow(ctx context.Context, p ports.IntentActionParams) (ports.IntentActionResult, error) {
	return d.act(ctx, p, d.store.RunIntentNow)
}

func (d *desk) act(ctx context.Context, p ports.IntentActionParams,
	write func(context.Context, ports.IntentActionParams) (bool, error)) (ports.IntentActionResult, error) {
	applied, err := write(ctx, p)
	if err != nil {
		return ports.IntentActionResult{}, err
	}
	in, err := d.GetIntent(ctx, p.IntentID)
	return ports.IntentActionResult{Intent: in, Applied: applied}, err
}
