package intake

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// MaxLastResultLength bounds the text searched for in the latest attempts'
// outcomes and errors, in characters: a fragment of a reason or an error
// message, not a document.
const MaxLastResultLength = 200

// ListIntents returns a page of intents, newest first, after checking the
// filters so that a typo is a field error rather than an empty page. The
// page is cut by ports.PageIntents, which asks the store for one row more.
func (s *Service) ListIntents(ctx context.Context, p ports.ListIntentsParams) (ports.IntentPage, error) {
	if err := checkListing(p); err != nil {
		return ports.IntentPage{}, err
	}
	page, err := ports.PageIntents(ctx, s.cfg.Store.ListIntents, p)
	if err != nil {
		return ports.IntentPage{}, err
	}
	if page.Intents, err = s.withLinks(ctx, page.Intents); err != nil {
		return ports.IntentPage{}, err
	}
	return page, nil
}

// checkListing refuses a listing no intent could answer sensibly, naming
// the API's parameter: a filter that cannot match anything by construction
// is an error, not an empty page.
func checkListing(p ports.ListIntentsParams) error {
	field := func(name, format string, args ...any) error {
		return &core.FieldError{Field: name, Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case p.Limit < 1:
		return field("limit", "must be at least 1")
	case p.Status != "" && !p.Status.Valid():
		return field("status", "%q is not an intent status", p.Status)
	case !utf8.ValidString(p.IntentIDPrefix):
		return field("intentIdPrefix", "is not valid UTF-8")
	case utf8.RuneCountInString(p.IntentIDPrefix) > core.MaxIntentIDLength:
		return field("intentIdPrefix", "has %d characters; no intentId has more than %d",
			utf8.RuneCountInString(p.IntentIDPrefix), core.MaxIntentIDLength)
	case !utf8.ValidString(p.LastResult):
		return field("lastResult", "is not valid UTF-8")
	case utf8.RuneCountInString(p.LastResult) > MaxLastResultLength:
		return field("lastResult", "has %d characters, the limit is %d", utf8.RuneCountInString(p.LastResult), MaxLastResultLength)
	case !p.CreatedFrom.IsZero() && !p.CreatedBefore.IsZero() && !p.CreatedBefore.After(p.CreatedFrom):
		return field("createdBefore", "must be later than createdFrom (%s): the range [createdFrom, createdBefore) is empty",
			p.CreatedFrom.UTC().Format("2006-01-02T15:04:05.999999999Z07:00"))
	case p.Before != nil && p.After != nil:
		return field(ports.CursorField, "names a position in both directions")
	}
	return nil
}
