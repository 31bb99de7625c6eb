package ports

import (
	"context"

	"github.com/submissionmanager/submission-manager/core"
)

// IntentLister is Store.ListIntents, or anything that answers its query
// shape.
type IntentLister func(ctx context.Context, p ListIntentsParams) ([]core.Intent, error)

// PageIntents cuts one page of p.Limit intents from list: the one home of
// what Next and Prev mean, for the service and for its test doubles. It
// asks for one row more than the page, which tells whether another page
// lies beyond it without a count.
//
//   - A page toward older intents (the first page, or one continued with
//     Before) has Next when more intents follow it, and Prev when it was
//     continued and holds an intent to go back from.
//   - A page toward newer intents (continued with After) holds the p.Limit
//     intents nearest to its position. When fewer than that are newer, the
//     previous page is the first page, and it is read as the first page,
//     full, rather than shown short; otherwise it has Prev when still newer
//     intents exist, and Next to go back.
func PageIntents(ctx context.Context, list IntentLister, p ListIntentsParams) (IntentPage, error) {
	size := p.Limit
	p.Limit++
	intents, err := list(ctx, p)
	if err != nil {
		return IntentPage{}, err
	}
	if p.After == nil {
		page := IntentPage{Intents: intents}
		if len(intents) > size {
			page.Intents = intents[:size]
			page.Next = positionOf(page.Intents[size-1])
		}
		if p.Before != nil && len(page.Intents) > 0 {
			page.Prev = positionOf(page.Intents[0])
		}
		return page, nil
	}
	if len(intents) < size {
		p.After = nil
		p.Limit = size
		return PageIntents(ctx, list, p)
	}
	page := IntentPage{Intents: intents}
	if len(intents) > size {
		// Newest first: the extra intent is the one farthest from After.
		page.Intents = intents[1:]
		page.Prev = positionOf(page.Intents[0])
	}
	page.Next = positionOf(page.Intents[len(page.Intents)-1])
	return page, nil
}

func positionOf(in core.Intent) *IntentPosition {
	return &IntentPosition{CreatedAt: in.CreatedAt, IntentID: in.IntentID}
}
