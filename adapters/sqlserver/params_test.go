package sqlserver

import (
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var testContract = core.Contract{
	SubmissionTarget: "alerts",
	GatewayType:      core.GatewaySMS,
	GatewayURL:       "http://127.0.0.1:9/sms",
	Mode:             core.ModeRealtime,
	Policy:           core.PolicyMaxAttempts,
	MaxAttempts:      3,
	TerminalOutcomes: []string{core.ReasonInvalidRecipient},
}

// TestDBTimeIsUTC pins the parameter choice for times: go-mssqldb sends a
// time.Time as datetimeoffset, and SQL Server keeps its local clock reading
// when converting to datetime2, so every time must be sent in UTC.
func TestDBTimeIsUTC(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	local := time.Date(2026, 3, 14, 10, 26, 53, 589793000, berlin)
	got := dbTime(local)
	if got.Location() != time.UTC || !got.Equal(local) || got.Hour() != 9 {
		t.Fatalf("dbTime(%v) = %v, want the same instant in UTC", local, got)
	}
	if n := nullTime(time.Time{}); n.Valid {
		t.Error("the zero time must be NULL")
	}
	if n := nullTime(local); !n.Valid || n.Time.Location() != time.UTC {
		t.Errorf("nullTime(%v) = %+v, want a valid UTC time", local, n)
	}
}

func TestInsertIntentParams(t *testing.T) {
	created := time.Date(2026, 3, 14, 9, 26, 53, 0, time.FixedZone("X", -7200))
	in := core.NewIntent("intent-1", testContract, json.RawMessage(`{"a":1}`), created)
	p, err := insertIntentParams(in)
	if err != nil {
		t.Fatal(err)
	}
	if p.GatewayType != "sms" || p.Mode != "realtime" || string(p.Payload) != `{"a":1}` {
		t.Errorf("params %+v", p)
	}
	if p.CreatedAt.Location() != time.UTC || !p.NextDueAt.Equal(created) {
		t.Errorf("times %v / %v, want UTC and next due = created", p.CreatedAt, p.NextDueAt)
	}
	var back core.Contract
	if err := json.Unmarshal([]byte(p.Contract), &back); err != nil || back.MaxAttempts != 3 || back.TerminalOutcomes[0] != core.ReasonInvalidRecipient {
		t.Errorf("contract snapshot %s does not round-trip (%v)", p.Contract, err)
	}

	long := strings.Repeat("x", 254) + "👋" // 256 UTF-16 code units
	cases := map[string]struct {
		mutate func(*core.Intent)
		field  string
	}{
		"empty id":        {func(i *core.Intent) { i.IntentID = "" }, "intentId"},
		"id too long":     {func(i *core.Intent) { i.IntentID = long }, "intentId"},
		"target too long": {func(i *core.Intent) { i.SubmissionTarget = long }, "submissionTarget"},
		"no payload":      {func(i *core.Intent) { i.Payload = nil }, "payload"},
	}
	for name, c := range cases {
		bad := in
		c.mutate(&bad)
		_, err := insertIntentParams(bad)
		var fe *core.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: err = %v, want a FieldError on %s", name, err, c.field)
		}
	}
	fits := in
	fits.IntentID = strings.Repeat("x", 253) + "👋" // exactly 255 code units
	if _, err := insertIntentParams(fits); err != nil {
		t.Errorf("an id of 255 UTF-16 code units was refused: %v", err)
	}
	terminal := in
	terminal.Status = core.StatusAccepted
	if _, err := insertIntentParams(terminal); err == nil {
		t.Error("CreateIntent params accepted a terminal intent")
	}
}

func TestFinishItemOf(t *testing.T) {
	at := time.Date(2026, 3, 14, 9, 27, 0, 0, time.UTC)
	rejected := &core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonInvalidRecipient, MessageID: `m"1`}
	p := ports.FinishAttemptParams{IntentID: "intent-1", Number: 2, FinishedAt: at, Outcome: rejected, Sent: true,
		Decision: core.Decision{Status: core.StatusRejected, FinalOutcome: rejected}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	got := finishItemOf(3, 1, p, 2)
	want := finishItem{Ord: 3, IntentID: "intent-1", AttemptNumber: 2, FinishedAt: "2026-03-14T09:27:00",
		OutcomeStatus: "rejected", OutcomeReason: core.ReasonInvalidRecipient, MessageID: "m~11", Sent: 1,
		Status: "rejected", FinalOutcomeStatus: "rejected", FinalOutcomeReason: core.ReasonInvalidRecipient,
		FinalMessageID: "m~11", Spelled: 1}
	if got != want {
		t.Errorf("finishItemOf:\n got  %+v\n want %+v", got, want)
	}
	// A text of more than 4000 UTF-16 code units marks the item long, by its
	// position in the batch; one of 4000 (two units per emoji) does not.
	for _, c := range []struct {
		error string
		long  bool
	}{{strings.Repeat("👋", 2000), false}, {strings.Repeat("👋", 2000) + "x", true}} {
		p.Error = c.error
		it := finishItemOf(3, 1, p, 2).(finishItem)
		if (it.Long != nil) != c.long || (c.long && *it.Long != 1) {
			t.Errorf("error of %d bytes: long = %v, want %v at position 1", len(c.error), it.Long, c.long)
		}
	}
}

func TestLeaseNameChecks(t *testing.T) {
	if err := validateLeaseNames(core.DefaultLeaseName, "sm-01-1234-abcd"); err != nil {
		t.Fatalf("default names refused: %v", err)
	}
	for _, c := range [][2]string{
		{"", "h"},
		{"l", ""},
		{strings.Repeat("l", 65), "h"},
		{"l", strings.Repeat("h", 129)},
		{"l", "h "},        // SQL Server ignores trailing spaces in comparisons
		{"l", "hôst"},      // would be mangled by the cast to varchar
		{"l\t", "holder"},  // control character
		{"lease", "h\x00"}, // control character
	} {
		if err := validateLeaseNames(c[0], c[1]); err == nil {
			t.Errorf("validateLeaseNames(%q, %q) accepted", c[0], c[1])
		}
	}
}

func TestDurationMillis(t *testing.T) {
	for d, want := range map[time.Duration]int32{0: 0, 300 * time.Millisecond: 300, time.Hour: 3_600_000, 1500 * time.Microsecond: 1} {
		if got, err := durationMillis(d); err != nil || got != want {
			t.Errorf("durationMillis(%v) = %d, %v; want %d", d, got, err, want)
		}
	}
	for _, d := range []time.Duration{-time.Second, 25 * 24 * time.Hour} {
		if _, err := durationMillis(d); err == nil {
			t.Errorf("durationMillis(%v) accepted", d)
		}
	}
}

func TestRowConversion(t *testing.T) {
	contract, _ := json.Marshal(testContract)
	created := time.Date(2026, 3, 14, 9, 26, 53, 589793000, time.UTC)
	row := intentRow{
		IntentID: "intent-1", SubmissionTarget: "alerts", Payload: []byte(`{"a":1}`), Contract: string(contract),
		Status: "accepted", CreatedAt: created, AttemptCount: 2,
		FinalOutcomeStatus: valid("accepted"), FinalMessageID: valid("m-2"), LastModifiedAt: created.Add(time.Second),
	}
	in, err := intentFromRow(row)
	if err != nil {
		t.Fatal(err)
	}
	if in.Status != core.StatusAccepted || !in.NextDueAt.IsZero() || in.FinalOutcome == nil || in.FinalOutcome.MessageID != "m-2" ||
		in.FinalOutcome.Reason != "" || in.Contract.MaxAttempts != 3 || in.AttemptCount != 2 {
		t.Fatalf("intent %+v", in)
	}
	// Attempts beyond the intent's count were started after the intent row
	// was read: they must not show.
	attempts := []attemptRow{
		{AttemptNumber: 1, StartedAt: created, FinishedAt: sql.NullTime{Time: created, Valid: true}, Error: valid("timeout")},
		{AttemptNumber: 2, StartedAt: created, FinishedAt: sql.NullTime{Time: created, Valid: true}, OutcomeStatus: valid("accepted"), MessageID: valid("m-2")},
		{AttemptNumber: 3, StartedAt: created},
	}
	in = withAttempts(in, attempts)
	if len(in.Attempts) != 2 || in.Attempts[0].Error != "timeout" || in.Attempts[0].Outcome != nil ||
		in.Attempts[1].Outcome == nil || in.Attempts[1].Outcome.MessageID != "m-2" || !in.Attempts[1].Finished() {
		t.Fatalf("attempts %+v", in.Attempts)
	}
	row.Contract = "not json"
	if _, err := intentFromRow(row); err == nil {
		t.Error("an unreadable contract snapshot was accepted")
	}
}

// TestFirstPageSentinelFitsBothEngines checks the "before" position of a
// first listing page: Babelfish keeps 6 fractional digits of datetime2 and
// refuses 23:59:59.9999999, so the sentinel is the last microsecond.
func TestFirstPageSentinelFitsBothEngines(t *testing.T) {
	if maxDatetime2.Nanosecond()%1000 != 0 || maxDatetime2.Year() != 9999 || maxDatetime2.Location() != time.UTC {
		t.Errorf("sentinel %s: want datetime2's last microsecond in UTC", maxDatetime2.Format(time.RFC3339Nano))
	}
	if !maxDatetime2.Add(time.Microsecond).After(time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)) {
		t.Errorf("sentinel %s is not the last microsecond of 9999", maxDatetime2.Format(time.RFC3339Nano))
	}
}

func valid(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
