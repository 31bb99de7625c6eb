package console_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

// desk is the console's double of the application service
// (ports.IntentService and ports.OperatorService) over the in-memory
// store: it reads intents with their resubmission links, pages them, and
// resubmits an ended intent as the ports say, for the one contract of
// these tests. Taking submissions is not the console's business: the
// tests store their intents with create, and SubmitIntent refuses.
type desk struct {
	store *memstore.Store
	clock ports.Clock
}

var (
	_ ports.IntentService   = (*desk)(nil)
	_ ports.OperatorService = (*desk)(nil)
)

// create stores a pending intent of the tests' contract.
func (d *desk) create(t *testing.T, id string) {
	t.Helper()
	res, err := d.store.CreateIntent(t.Context(), core.NewIntent(id, contract, []byte(`{}`), d.clock.Now()))
	if err != nil || !res.Created {
		t.Fatalf("create %s: created=%v err=%v", id, res.Created, err)
	}
}

var errNotTheConsoles = errors.New("the console takes no submissions")

func (d *desk) SubmitIntent(context.Context, ports.SubmitIntentParams) (ports.SubmitIntentResult, error) {
	return ports.SubmitIntentResult{}, errNotTheConsoles
}

func (d *desk) SubmitIntents(context.Context, []ports.SubmitIntentParams) ([]ports.SubmitIntentsItem, error) {
	return nil, errNotTheConsoles
}

func (d *desk) GetIntent(ctx context.Context, id string) (core.Intent, error) {
	in, err := d.store.GetIntent(ctx, id)
	if err != nil {
		return core.Intent{}, err
	}
	linked, err := d.withLinks(ctx, []core.Intent{in})
	if err != nil {
		return core.Intent{}, err
	}
	linked[0].Events, err = d.store.IntentEvents(ctx, id)
	return linked[0], err
}

// ListIntents cuts the page as the service does.
func (d *desk) ListIntents(ctx context.Context, p ports.ListIntentsParams) (ports.IntentPage, error) {
	if p.Limit < 1 {
		return ports.IntentPage{}, &core.FieldError{Field: "limit", Message: "must be at least 1"}
	}
	page, err := ports.PageIntents(ctx, d.store.ListIntents, p)
	if err != nil {
		return ports.IntentPage{}, err
	}
	page.Intents, err = d.withLinks(ctx, page.Intents)
	return page, err
}

func (d *desk) Targets() []core.Contract { return []core.Contract{contract} }

func (d *desk) Target(target string) (core.Contract, error) {
	if target != contract.SubmissionTarget {
		return core.Contract{}, fmt.Errorf("%w: %q", core.ErrUnknownTarget, target)
	}
	return contract, nil
}

func (d *desk) ResubmitIntent(ctx context.Context, p ports.ResubmitIntentParams) (ports.SubmitIntentResult, error) {
	original, err := d.store.GetIntent(ctx, p.IntentID)
	if err != nil {
		return ports.SubmitIntentResult{}, err
	}
	if !original.Status.Terminal() {
		return ports.SubmitIntentResult{}, fmt.Errorf("%w: %q is %s", core.ErrIntentNotEnded, p.IntentID, original.Status)
	}
	if risk := core.DeliveryRisk(original); risk != nil && !p.AcknowledgeDeliveryRisk {
		// As the service: unless the original has its resubmission already.
		links, err := d.store.ResubmissionLinks(ctx, []string{original.IntentID})
		if err != nil {
			return ports.SubmitIntentResult{}, err
		}
		if links[original.IntentID].As == "" {
			return ports.SubmitIntentResult{}, risk
		}
	}
	newID := cmp.Or(p.NewIntentID, core.DeriveResubmissionID(original.IntentID))
	if err := core.ValidateIntentID(newID); err != nil {
		return ports.SubmitIntentResult{}, err
	}
	res, err := d.store.CreateResubmission(ctx, core.NewResubmission(original, newID, contract, d.clock.Now()))
	if err != nil {
		return ports.SubmitIntentResult{}, err
	}
	in, err := d.GetIntent(ctx, res.Intent.IntentID)
	return ports.SubmitIntentResult{Intent: in, Created: res.Created}, err
}

func (d *desk) CountIntents(ctx context.Context) ([]ports.IntentCount, error) {
	return d.store.CountIntents(ctx)
}

// withLinks fills the intents' resubmission links from the store.
func (d *desk) withLinks(ctx context.Context, intents []core.Intent) ([]core.Intent, error) {
	ids := make([]string, len(intents))
	for i, in := range intents {
		ids[i] = in.IntentID
	}
	links, err := d.store.ResubmissionLinks(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(intents)
	for i := range out {
		l := links[out[i].IntentID]
		out[i].ResubmittedFrom, out[i].ResubmittedAs = l.From, l.As
	}
	return out, nil
}
