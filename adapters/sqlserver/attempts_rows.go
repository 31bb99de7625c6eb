package sqlserver

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/ports"
)

// The executor's batches travel as rows of text that the procedures split
// with STRING_SPLIT and cut with SUBSTRING (migration 00023 gives the
// layout and why: Babelfish reads the same items from JSON about four
// times as slowly). rowEnd ends every row; no text of a row holds it, because
// jsonText spells every control character, and an item whose texts needed
// spelling says so in its row.
const rowEnd = "\x1e"

// The fixed-width columns of an item's row, in the order they are written.
const (
	ordWidth     = 10
	numberWidth  = 10
	timeWidth    = 27
	textAtWidth  = 3
	statusWidth  = 16
	reasonWidth  = 32
	keysWidth    = 1 + ordWidth + numberWidth + timeWidth + 1 + textAtWidth // "i", ..., spelled, text_at
	resultsWidth = timeWidth + 3 + 3*statusWidth + reasonWidth              // next_due_at, three bits, ...
)

// The codes of a result's texts, one row each (migration 00023): no two
// differ only in case, which the database's collation may not tell apart.
const (
	textOutcomeReason      = 'r'
	textMessageID          = 'm'
	textError              = 'e'
	textFinalOutcomeReason = 'f'
	textFinalMessageID     = 'g'
	textAcceptedMessageID  = 'a'
)

// rowText is one of a result's texts and its code.
type rowText struct {
	code byte
	text string
}

// batchRows writes a batch's rows.
type batchRows struct {
	b   strings.Builder
	err error
}

// item writes an item's row: its keys, the fixed-width columns fixed
// (already padded to their widths, empty for a reservation), and its
// intentId, spelled as sp spells it, to the end of the row.
func (w *batchRows) item(ord int, number int32, at time.Time, sp *speller, id string, fixed string) {
	id = sp.text(id)
	w.b.WriteByte('i')
	w.digits(ord, ordWidth)
	w.digits(int(number), numberWidth)
	w.b.WriteString(rowTime(at))
	w.b.WriteString(bitColumn(sp.spelled))
	w.digits(keysWidth+len(fixed)+1, textAtWidth)
	w.b.WriteString(fixed)
	w.b.WriteString(id)
	w.b.WriteString(rowEnd)
}

// text writes one of a result's texts, already spelled, as a row of its
// own under code; an empty text is absent, and reads as NULL.
func (w *batchRows) text(ord int, code byte, s string) {
	if s == "" {
		return
	}
	w.b.WriteByte('t')
	w.digits(ord, ordWidth)
	w.b.WriteByte(code)
	w.b.WriteString(s)
	w.b.WriteString(rowEnd)
}

// digits writes n zero-padded to width, or notes the error when it does
// not fit.
func (w *batchRows) digits(n, width int) {
	s := strconv.Itoa(n)
	if n < 0 || len(s) > width {
		w.fail(fmt.Errorf("sqlserver: %d does not fit a batch row's column of %d digits", n, width))
		return
	}
	w.b.WriteString(strings.Repeat("0", width-len(s)))
	w.b.WriteString(s)
}

func (w *batchRows) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// String is the batch's rows, or the first error of writing them.
func (w *batchRows) String() (string, error) { return w.b.String(), w.err }

// rowTime is a time as a row's column: ISO 8601 in UTC to 100 ns, which
// CAST reads as datetime2(7), always 27 characters.
func rowTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.0000000") }

// padded is s left-aligned in a column of width, blank for NULL; a value
// longer than its column is an error, never cut short.
func (w *batchRows) padded(s string, width int) string {
	if len(s) > width {
		w.fail(fmt.Errorf("sqlserver: %q does not fit a batch row's column of %d characters", s, width))
		return strings.Repeat(" ", width)
	}
	return s + strings.Repeat(" ", width-len(s))
}

// bitColumn is a bit as a row's column.
func bitColumn(b bool) string { return strconv.Itoa(bit(b)) }

// start writes one reservation.
func (w *batchRows) start(ord int, p ports.StartAttemptParams, n int32) {
	var sp speller
	w.item(ord, n, p.StartedAt, &sp, p.IntentID, "")
}

// finish writes one result from parameters that passed Validate: the
// attempt's outcome or error, and the decision. Its texts are spelled
// first, so that the item's row says whether any was.
func (w *batchRows) finish(ord int, p ports.FinishAttemptParams, n int32) {
	d := p.Decision
	var sp speller
	var outcomeStatus, finalStatus string
	texts := []rowText{{textError, p.Error}, {textAcceptedMessageID, d.AcceptedMessageID}}
	if o := p.Outcome; o != nil {
		outcomeStatus = string(o.Status)
		texts = append(texts, rowText{textOutcomeReason, o.Reason}, rowText{textMessageID, o.MessageID})
	}
	if o := d.FinalOutcome; o != nil {
		finalStatus = string(o.Status)
		texts = append(texts, rowText{textFinalOutcomeReason, o.Reason}, rowText{textFinalMessageID, o.MessageID})
	}
	for i := range texts {
		texts[i].text = sp.text(texts[i].text)
	}
	next := strings.Repeat(" ", timeWidth)
	if !d.NextDueAt.IsZero() {
		next = rowTime(d.NextDueAt)
	}
	fixed := next + bitColumn(p.Sent) + bitColumn(d.PossiblyAccepted) + bitColumn(d.AcceptedAfterDeadline) +
		w.padded(string(d.Status), statusWidth) + w.padded(outcomeStatus, statusWidth) +
		w.padded(finalStatus, statusWidth) + w.padded(string(d.ExhaustedReason), reasonWidth)
	w.item(ord, n, p.FinishedAt, &sp, p.IntentID, fixed)
	for _, t := range texts {
		w.text(ord, t.code, t.text)
	}
}
