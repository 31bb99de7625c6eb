package sqlserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// printableASCII is every byte from 0x20 to 0x7E, as a JSON string: the
// quote and the backslash, which JSON escapes, appear as the escapes `\"`
// and `\\`, which are those bytes too.
func printableASCII() string {
	var b strings.Builder
	b.WriteByte('"')
	for c := byte(0x20); c <= 0x7e; c++ {
		if c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}

// asciiPayloads are payloads of printable ASCII only, which a batch
// carries in its JSON: every such byte; JSON's escapes (of a newline, a
// quote, a backslash, a slash, a NUL, non-ASCII text), which are ASCII
// backslash sequences in the payload's bytes; jsonText's own codes; a
// payload with nothing to spell; and two longer than Babelfish's OPENJSON
// WITH reads whole, between shorter ones, which travel apart from the
// items and must meet their own.
var asciiPayloads = []json.RawMessage{
	json.RawMessage(`{"all":` + printableASCII() + `}`),
	json.RawMessage(`{"esc":"a\nb\t\"q\" \\ \/ \u0000 \u00e9 \ud83d\udc4b"}`),
	json.RawMessage(`{"codes":"~ ~0 ~1 ~2 ~3A ~~3"}`),
	json.RawMessage(`[` + strings.Repeat(`{"k":"v\"~\\"},`, 700) + `0]`),
	json.RawMessage(`[1,2,3]`),
	json.RawMessage(`["` + strings.Repeat(`~2\"`, 1100) + `"]`),
}

// TestPayloadTravelsInJSON pins the rule that routes a batch: printable
// ASCII travels in the JSON, any other byte (a control byte, DEL, any byte
// of a non-ASCII character) sends the batch as the text statement, and a
// compacted JSON payload holds no control byte.
func TestPayloadTravelsInJSON(t *testing.T) {
	for payload, want := range map[string]bool{
		" ~":     true,
		"{}":     true,
		"":       false,
		"a\x1fb": false,
		"a\nb":   false,
		"a\x7fb": false,
		"é":      false,
		"👋":      false,
	} {
		if got := payloadTravelsInJSON([]byte(payload)); got != want {
			t.Errorf("payloadTravelsInJSON(%q) = %v, want %v", payload, got, want)
		}
	}
	for _, p := range asciiPayloads {
		if !payloadTravelsInJSON(p) {
			t.Errorf("payload %.40s... does not travel in the JSON", p)
		}
	}
	compacted, err := core.CompactPayload([]byte("{\n\t\"a\": \"x\\ny\",\r\n \"b\": [1, 2]\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !payloadTravelsInJSON(compacted) {
		t.Errorf("the compacted payload %q does not travel in the JSON", compacted)
	}
}

// TestBatchesChooseTheirRequestByPayload stores batches whose payloads are
// all ASCII (one call of the procedure), all non-ASCII and mixed (the text
// statement, padded), with ids and a target that are spelled, and checks
// the request each sent, that each payload is stored and read back byte
// for byte, and that a repeat of each batch creates nothing and answers
// the stored rows.
func TestBatchesChooseTheirRequestByPayload(t *testing.T) {
	db, rc := countedDB(t, Config{})
	s := db.Store()
	ctx := context.Background()
	contract := testContract
	contract.SubmissionTarget = `tar"get\~x`
	created := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	nonASCII := []json.RawMessage{awkwardPayload, json.RawMessage(`"é"`), json.RawMessage(`["` + strings.Repeat("☃", 4100) + `"]`)}
	for _, c := range []struct {
		name     string
		payloads []json.RawMessage
		want     string
	}{
		{"ASCII", asciiPayloads, insertIntentsProcSQL},
		{"non-ASCII", nonASCII, insertIntentsSQL(4)},
		{"mixed", append(append([]json.RawMessage{}, asciiPayloads...), nonASCII[0]), insertIntentsSQL(8)},
	} {
		var batch []core.Intent
		for i, p := range c.payloads {
			id := fmt.Sprintf("%s %d", c.name, i)
			if i%2 == 1 {
				id = fmt.Sprintf(`%s "%d\~`, c.name, i)
			}
			batch = append(batch, core.NewIntent(id, contract, p, created))
		}
		for _, round := range []string{"new", "repeat"} {
			before := rc.snapshot(poolQueries)
			res, err := s.CreateIntents(ctx, batch)
			if err != nil {
				t.Fatalf("%s, %s: CreateIntents: %v", c.name, round, err)
			}
			if sent := rc.since(poolQueries, before).Queries; len(sent) != 1 || sent[0] != c.want {
				t.Errorf("%s, %s: sent %d requests, the first %.60q; want one, %.60q", c.name, round, len(sent), sent, c.want)
			}
			for i, r := range res {
				if r.Created != (round == "new") || r.Refused != nil {
					t.Errorf("%s, %s: item %d created=%v refused=%v", c.name, round, i, r.Created, r.Refused)
				}
				assertExact(t, c.name+", "+round, r.Intent, batch[i])
			}
		}
		ids := make([]string, len(batch))
		for i, in := range batch {
			ids[i] = in.IntentID
		}
		read, err := s.GetIntents(ctx, ids)
		if err != nil || len(read) != len(batch) {
			t.Fatalf("%s: GetIntents read %d of %d intents: %v", c.name, len(read), len(batch), err)
		}
		for _, in := range read {
			for _, sent := range batch {
				if sent.IntentID == in.IntentID {
					assertExact(t, c.name+", GetIntents", in, sent)
				}
			}
		}
	}
}
