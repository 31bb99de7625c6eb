package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// searchFixture stores the intents the search cases look for, each created
// at(i) for its index i, and returns them as stored, by intentId. Their
// latest attempts differ in outcome and error; otp-04 has an earlier
// attempt whose error its latest does not repeat, and otp-05's only
// attempt is still open. The ids carry the wildcards of LIKE (% _ [) and
// letter case that a prefix must take literally, and re-otp-1 has a prefix
// of others in its middle.
func searchFixture(t *testing.T, h Harness) map[string]core.Intent {
	f := leader(t, h)
	ids := []string{
		"otp-01", "otp-02", "otp-03", "otp-04", "otp-05", "otp-06",
		"order-1", "OTP-upper", "otpx", "otp%_1", "otp[1]", "order-2", "re-otp-1",
	}
	for i, id := range ids {
		c := smsContract("alerts")
		if i >= 6 && i%2 == 0 {
			c = pushContract("news")
		}
		mustCreate(t, h.Store, newIntent(id, c, `{}`, at(i)))
	}
	timeout := retryAfter(f, "otp-01", 1, at(100), at(1000))
	timeout.Error = "gateway TimeOut after 5s"
	complete(t, h.Store, timeout)
	complete(t, h.Store, exhaust(f, "otp-02", 1, at(101))) // rejected provider_failure
	complete(t, h.Store, accept(f, "otp-03", 1, at(102)))
	refused := retryAfter(f, "otp-04", 1, at(103), at(104))
	refused.Error = "connection refused"
	complete(t, h.Store, refused)
	complete(t, h.Store, accept(f, "otp-04", 2, at(105)))
	start(t, h.Store, f, "otp-05", 1, at(106))
	o := core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonInvalidRecipient}
	complete(t, h.Store, ports.FinishAttemptParams{Fence: f, IntentID: "order-1", Number: 1, FinishedAt: at(107),
		Outcome: &o, Sent: true, Decision: core.Decision{Status: core.StatusRejected, FinalOutcome: &o}})
	out := map[string]core.Intent{}
	for _, id := range ids {
		out[id] = mustGet(t, h.Store, id)
	}
	return out
}

// searchCase is one listing and the intentIds it must return, newest
// first.
type searchCase struct {
	name string
	p    ports.ListIntentsParams
	want []string
}

// testListIntentsSearch pins every search filter alone and combined, read
// in one page and paged both ways.
func testListIntentsSearch(t *testing.T, h Harness) {
	stored := searchFixture(t, h)
	far := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	early := time.Date(1, 1, 2, 0, 0, 0, 0, time.UTC) // the zero time is an open side
	cases := []searchCase{
		{"prefix", ports.ListIntentsParams{IntentIDPrefix: "otp-"}, []string{"otp-06", "otp-05", "otp-04", "otp-03", "otp-02", "otp-01"}},
		{"prefix is case-sensitive", ports.ListIntentsParams{IntentIDPrefix: "otp"},
			[]string{"otp[1]", "otp%_1", "otpx", "otp-06", "otp-05", "otp-04", "otp-03", "otp-02", "otp-01"}},
		{"prefix in upper case", ports.ListIntentsParams{IntentIDPrefix: "OTP"}, []string{"OTP-upper"}},
		{"prefix with %", ports.ListIntentsParams{IntentIDPrefix: "otp%"}, []string{"otp%_1"}},
		{"prefix with _", ports.ListIntentsParams{IntentIDPrefix: "otp_"}, nil},
		{"prefix with [", ports.ListIntentsParams{IntentIDPrefix: "otp["}, []string{"otp[1]"}},
		{"prefix that is a whole id", ports.ListIntentsParams{IntentIDPrefix: "otp-03"}, []string{"otp-03"}},
		{"prefix longer than every id", ports.ListIntentsParams{IntentIDPrefix: "otp-03-and-more"}, nil},
		{"created range", ports.ListIntentsParams{CreatedFrom: at(2), CreatedBefore: at(5)}, []string{"otp-05", "otp-04", "otp-03"}},
		{"created from", ports.ListIntentsParams{CreatedFrom: at(10)}, []string{"re-otp-1", "order-2", "otp[1]"}},
		{"created before", ports.ListIntentsParams{CreatedBefore: at(1)}, []string{"otp-01"}},
		{"created range between intents", ports.ListIntentsParams{CreatedFrom: at(2).Add(time.Microsecond), CreatedBefore: at(3)}, nil},
		{"created from year 1", ports.ListIntentsParams{CreatedFrom: early, IntentIDPrefix: "order"}, []string{"order-2", "order-1"}},
		{"created before 9999", ports.ListIntentsParams{CreatedBefore: far, IntentIDPrefix: "order"}, []string{"order-2", "order-1"}},
		{"created from 9999", ports.ListIntentsParams{CreatedFrom: far}, nil},
		{"created before year 1", ports.ListIntentsParams{CreatedBefore: early}, nil},
		{"error fragment in another case", ports.ListIntentsParams{LastResult: "timeout"}, []string{"otp-01"}},
		{"an earlier attempt's error", ports.ListIntentsParams{LastResult: "refused"}, nil},
		{"outcome reason", ports.ListIntentsParams{LastResult: "PROVIDER_FAIL"}, []string{"otp-02"}},
		{"outcome status", ports.ListIntentsParams{LastResult: "accepted"}, []string{"otp-04", "otp-03"}},
		{"rejections", ports.ListIntentsParams{LastResult: "rejected"}, []string{"order-1", "otp-02"}},
		{"fragment with wildcards", ports.ListIntentsParams{LastResult: "%"}, nil},
		{"status and reason", ports.ListIntentsParams{Status: core.StatusRejected, LastResult: "invalid_recipient"}, []string{"order-1"}},
		{"status and fragment that differ", ports.ListIntentsParams{Status: core.StatusPending, LastResult: "invalid"}, nil},
		{"target, range and prefix", ports.ListIntentsParams{SubmissionTarget: "alerts", CreatedFrom: at(3), IntentIDPrefix: "o"},
			[]string{"order-2", "otp%_1", "otp-06", "otp-05", "otp-04"}},
		{"status, target and range", ports.ListIntentsParams{Status: core.StatusPending, SubmissionTarget: "alerts", CreatedBefore: at(6)},
			[]string{"otp-06", "otp-05", "otp-01"}},
		{"status and prefix", ports.ListIntentsParams{Status: core.StatusAccepted, IntentIDPrefix: "otp"}, []string{"otp-04", "otp-03"}},
		{"target and fragment", ports.ListIntentsParams{SubmissionTarget: "news", LastResult: "recipient"}, []string{"order-1"}},
		{"everything at once", ports.ListIntentsParams{Status: core.StatusAccepted, SubmissionTarget: "alerts", IntentIDPrefix: "otp-0",
			CreatedFrom: at(3), CreatedBefore: at(4), LastResult: "ACCEPT"}, []string{"otp-04"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, limit := range []int{1, 50} {
				p := c.p
				p.Limit = limit
				got := intentIDs(listAll(t, h.Store, p))
				if !slices.Equal(got, c.want) {
					t.Fatalf("limit %d: %v, want %v", limit, got, c.want)
				}
				if back := intentIDs(listBackward(t, h.Store, p, stored)); !slices.Equal(back, c.want) {
					t.Fatalf("limit %d, read backwards from the end: %v, want %v", limit, back, c.want)
				}
			}
		})
	}
	// Listed intents come whole, with every attempt.
	got, err := h.Store.ListIntents(t.Context(), ports.ListIntentsParams{Limit: 1, IntentIDPrefix: "otp-04"})
	if err != nil || len(got) != 1 {
		t.Fatalf("listing otp-04: %v, %v", got, err)
	}
	assertIntent(t, got[0], stored["otp-04"])
}

// listBackward pages a listing toward newer intents with After, from just
// below its oldest intent to its newest, checking the query shape on the
// way (at most Limit intents, newest first, strictly newer than After and
// the nearest to it), and returns the intents newest first.
func listBackward(t *testing.T, s ports.Store, p ports.ListIntentsParams, stored map[string]core.Intent) []core.Intent {
	t.Helper()
	// A position older than every intent: before the first one created.
	p.After = &ports.IntentPosition{CreatedAt: at(-1), IntentID: ""}
	var pages [][]core.Intent
	for n := 0; ; n++ {
		if n > 1000 {
			t.Fatal("ListIntents with After never returned a short page")
		}
		got, err := s.ListIntents(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) > p.Limit {
			t.Fatalf("ListIntents returned %d intents, the limit is %d", len(got), p.Limit)
		}
		for i, in := range got {
			if !newer(in, *p.After) {
				t.Fatalf("intent (%v, %s) is not strictly newer than the position %+v", in.CreatedAt, in.IntentID, *p.After)
			}
			if i > 0 && !newer(got[i-1], ports.IntentPosition{CreatedAt: in.CreatedAt, IntentID: in.IntentID}) {
				t.Fatalf("page %v is not newest first", intentIDs(got))
			}
		}
		// Nearest to After: nothing stored that matches lies between the
		// position and the page's oldest intent. The listing with Before
		// at the page's oldest intent, read forwards, must end at After.
		if len(got) > 0 {
			oldest := got[len(got)-1]
			q := p
			q.After, q.Limit = nil, 1
			q.Before = &ports.IntentPosition{CreatedAt: oldest.CreatedAt, IntentID: oldest.IntentID}
			if below, err := s.ListIntents(t.Context(), q); err != nil {
				t.Fatal(err)
			} else if len(below) == 1 && newer(below[0], *p.After) {
				t.Fatalf("page %v skips %s, which lies nearer to %+v", intentIDs(got), below[0].IntentID, *p.After)
			}
		}
		pages = append(pages, got)
		if len(got) < p.Limit {
			break
		}
		newest := got[0]
		p.After = &ports.IntentPosition{CreatedAt: newest.CreatedAt, IntentID: newest.IntentID}
	}
	var out []core.Intent
	for _, page := range slices.Backward(pages) {
		out = append(out, page...)
	}
	for _, in := range out {
		if want, ok := stored[in.IntentID]; ok && len(in.Attempts) != len(want.Attempts) {
			t.Errorf("listed intent %s carries %d attempts, want %d", in.IntentID, len(in.Attempts), len(want.Attempts))
		}
	}
	return out
}

// newer reports whether in comes strictly before pos in newest-first order.
func newer(in core.Intent, pos ports.IntentPosition) bool {
	if c := in.CreatedAt.Compare(pos.CreatedAt); c != 0 {
		return c > 0
	}
	return in.IntentID > pos.IntentID
}

// testListIntentsAfterSharedTimes pages backward through intents that share
// creation times, so the intentId breaks every tie both ways.
func testListIntentsAfterSharedTimes(t *testing.T, h Harness) {
	var want []core.Intent
	for i, id := range ids("intent", 14) {
		in := newIntent(id, smsContract("alerts"), `{}`, at(i/3))
		mustCreate(t, h.Store, in)
		want = append(want, in)
	}
	sortNewestFirst(want)
	for _, limit := range []int{1, 2, 3, 4, 14, 20} {
		got := listBackward(t, h.Store, ports.ListIntentsParams{Limit: limit}, nil)
		if gotIDs, wantIDs := intentIDs(got), intentIDs(want); !slices.Equal(gotIDs, wantIDs) {
			t.Fatalf("limit %d backwards: %v, want %v", limit, gotIDs, wantIDs)
		}
	}
	// From the middle of a shared time: the nearest newer intents.
	mid := want[7]
	got, err := h.Store.ListIntents(t.Context(), ports.ListIntentsParams{Limit: 3,
		After: &ports.IntentPosition{CreatedAt: mid.CreatedAt, IntentID: mid.IntentID}})
	if err != nil {
		t.Fatal(err)
	}
	if gotIDs, wantIDs := intentIDs(got), intentIDs(want[4:7]); !slices.Equal(gotIDs, wantIDs) {
		t.Fatalf("three after %s: %v, want %v", mid.IntentID, gotIDs, wantIDs)
	}
}
