package ports

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// CursorField is the name under which every driving adapter takes a
// listing's cursor, and the field a refused one is reported under.
const CursorField = "cursor"

// cursor is the wire form of an IntentCursor: base64url-encoded JSON that
// clients must treat as opaque. The time keeps nanoseconds so no intent is
// skipped or repeated at a page boundary. Prev is left out of a next
// page's cursor, so the cursors issued before listings paged both ways
// read as what they always were: next-page cursors.
type cursor struct {
	CreatedAt time.Time `json:"c"`
	IntentID  string    `json:"i"`
	Prev      bool      `json:"p,omitempty"`
}

// IntentCursor is where a listing continues: from Position toward older
// intents (the next page), or toward newer ones (the previous page) when
// Prev is set.
type IntentCursor struct {
	Position IntentPosition
	Prev     bool
}

// Continue returns p continued from the cursor, in the cursor's direction.
func (c IntentCursor) Continue(p ListIntentsParams) ListIntentsParams {
	pos := c.Position
	if c.Prev {
		p.Before, p.After = nil, &pos
	} else {
		p.Before, p.After = &pos, nil
	}
	return p
}

// The times a cursor may carry: the span of Unix nanoseconds in an int64,
// which the stores use. A forged cursor outside it is refused, not wrapped
// around into a wrong page.
var (
	minCursorTime = time.Unix(0, math.MinInt64).UTC()
	maxCursorTime = time.Unix(0, math.MaxInt64).UTC()
)

// EncodeCursor is the one way a next page's position (IntentPage.Next)
// leaves the service as a cursor, for the HTTP API and the console alike.
func EncodeCursor(p IntentPosition) string {
	return encodeCursor(cursor{CreatedAt: p.CreatedAt.UTC(), IntentID: p.IntentID})
}

// EncodePrevCursor is EncodeCursor for a previous page's position
// (IntentPage.Prev).
func EncodePrevCursor(p IntentPosition) string {
	return encodeCursor(cursor{CreatedAt: p.CreatedAt.UTC(), IntentID: p.IntentID, Prev: true})
}

func encodeCursor(c cursor) string { return base64.RawURLEncoding.EncodeToString(marshalCursor(c)) }

// DecodeCursor reads a cursor back into the position and direction it
// names. It accepts only what EncodeCursor and EncodePrevCursor issue: the
// JSON must be exactly the encoding of the cursor it decodes to, so bytes
// that are not UTF-8, lone surrogate escapes, a spelled-out "p":false, or
// any other spelling that would decode to a different intentId than the
// one written are refused, as are a missing intentId or a time no store
// can hold. A refusal is a *core.FieldError naming CursorField.
func DecodeCursor(s string) (IntentCursor, error) {
	invalid := &core.FieldError{Field: CursorField, Message: "is not a cursor this service issued"}
	data, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return IntentCursor{}, invalid
	}
	var c cursor
	if err := json.Unmarshal(data, &c); err != nil || c.IntentID == "" || c.CreatedAt.IsZero() ||
		c.CreatedAt.Before(minCursorTime) || c.CreatedAt.After(maxCursorTime) {
		return IntentCursor{}, invalid
	}
	// The time is compared as written (a cursor issued in another zone
	// re-encodes in it), the rest as EncodeCursor would write it.
	if !bytes.Equal(marshalCursor(c), data) {
		return IntentCursor{}, invalid
	}
	return IntentCursor{Position: IntentPosition{CreatedAt: c.CreatedAt.UTC(), IntentID: c.IntentID}, Prev: c.Prev}, nil
}

// marshalCursor writes a cursor's JSON; a string and a time in range always
// marshal.
func marshalCursor(c cursor) []byte {
	data, _ := json.Marshal(c)
	return data
}
