// Package storetest is the conformance suite of ports.Store. Every store
// adapter runs it from its own tests, on its own real database:
//
//	func TestStoreConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) storetest.Harness {
//			return harnessFor(t, openFreshDatabase(t))
//		})
//	}
//
// newHarness is called once per subtest and must return a Harness on an
// empty, migrated database that nothing else writes to, and close it when
// the test ends (t.Cleanup). Adapters whose database cannot run here skip
// with a message saying why before calling Run.
//
// What the suite holds every store to, beyond the port's doc comments:
//   - Times round-trip exactly at microsecond precision (the suite uses
//     microsecond times) and compare with time.Time.Equal.
//   - Payloads are stored and compared as bytes: the service compacts them
//     first, so the store never normalizes JSON.
//   - CreateIntent returns the intent as stored, its LastModifiedAt included;
//     an idempotent repeat writes nothing: it does not move last_modified_at.
//   - A fenced write whose lease does not hold fails with core.ErrFenced even
//     when the intent would also refuse it, and writes nothing.
//   - A StartAttempt, FinishAttempt or Reschedule whose parameters their
//     Validate method refuses fails with ports.ErrInvalidWrite, whatever
//     the fence or the intent, and writes nothing.
//   - StartAttempt and FinishAttempt on a missing intent fail with
//     core.ErrIntentNotFound; on an intent that moved on (terminal, another
//     attempt number, attempt already closed) with core.ErrIntentNotRunnable.
//   - CreateIntent under a taken intentId returns the stored intent,
//     unjudged: the service decides whether it is a repeat.
//   - An intent's TraceParent (empty when none) is stored with it, read
//     back by every read of intents and never replaced by a repeat's.
//   - An intent's NotBefore (zero when none) round-trips like every time,
//     through every read and a restart; the store keeps no schedule of its
//     own: the first attempt's due time is NextDueAt.
//   - ListIntents answers one query shape (at most Limit intents strictly
//     after Before, or the Limit nearest strictly before After, newest
//     first, that match every filter set); the service cuts the pages. An
//     intentId prefix is taken literally (no character is a wildcard), the
//     latest attempt's text is searched ignoring the case of ASCII letters,
//     and a creation bound beyond what the store holds is an open side.
//   - CreateResubmission writes the new intent and its link together or not
//     at all, and is idempotent per original, also under concurrent calls
//     naming different new intentIds; GetIntent does not fill the links
//     (ResubmissionLinks does, for the service).
//   - Attempts report the holder and epoch of the fence that started them.
//
// Lease expiry is waited out on the database's clock, read through the lease
// port (leasetest.WaitExpired), never with a fixed sleep.
package storetest

import (
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/ports"
)

// Harness is one empty, migrated database seen through the ports, plus the
// two things the suite cannot do through them.
type Harness struct {
	// Store and Leases work on the same database, so fences taken from
	// Leases guard writes through Store.
	Store  ports.Store
	Leases ports.LeaseStore
	// Restart closes the database and opens the same one again, as a process
	// restart would, returning the reopened harness. Everything from before
	// must be there.
	Restart func(t *testing.T) Harness
	// ShareLastModified sets last_modified_at of the given intents, which
	// exist, to one single value, in one transaction: the database's current
	// time, at least as late as every other row's. It produces what a bulk
	// write does on a coarse clock (many rows sharing one change timestamp),
	// which the refresh cursor must page through without skipping any.
	ShareLastModified func(t *testing.T, intentIDs []string)
	// StatementTime, when the database's clock moves with every statement
	// instead of with real time (the in-memory store's), is how far each
	// reading moves it; the suite sizes its time-bound cases by it. Zero for
	// a real database.
	StatementTime time.Duration
}

// Run runs every store case as a subtest, each on a fresh harness.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	for _, c := range storeCases() {
		t.Run(c.name, func(t *testing.T) {
			c.fn(t, newHarness(t))
		})
	}
}

// RunCases runs the named store cases as Run does. A name that is no case
// fails the test, so a renamed case cannot silently drop out.
func RunCases(t *testing.T, newHarness func(t *testing.T) Harness, names ...string) {
	t.Helper()
	byName := map[string]storeCase{}
	for _, c := range storeCases() {
		byName[c.name] = c
	}
	for _, name := range names {
		c, ok := byName[name]
		if !ok {
			t.Fatalf("storetest: no case is named %q", name)
		}
		t.Run(c.name, func(t *testing.T) {
			c.fn(t, newHarness(t))
		})
	}
}

// storeCase is one case of the suite.
type storeCase struct {
	name string
	fn   func(t *testing.T, h Harness)
}

// storeCases returns every case of the suite, in the order Run runs them.
func storeCases() []storeCase {
	cases := []storeCase{
		{"CreateAndGet", testCreateAndGet},
		{"GetMissing", testGetMissing},
		{"CreateIdempotentRepeat", testCreateRepeat},
		{"CreateConcurrentSameID", testCreateConcurrent},
		{"CreateUnderATakenID", testCreateTakenID},
		{"CreateUnderATerminalIntentsID", testTakenIDTerminal},
		{"CreateIntentsMixed", testCreateIntentsMixed},
		{"CreateIntentsRepeatWritesNothing", testCreateIntentsRepeatWritesNothing},
		{"CreateIntentsLarge", testCreateIntentsLarge},
		{"CreateNeedsNextDueAt", testCreateNeedsNextDue},
		{"GetIntents", testGetIntents},
		{"StartAttempt", testStartAttempt},
		{"StartAttemptNotRunnable", testStartAttemptNotRunnable},
		{"StartAttemptConcurrent", testStartAttemptConcurrent},
		{"FinishAttemptRetry", testFinishRetry},
		{"FinishAttemptTerminal", testFinishTerminal},
		{"FinishAttemptNotRunnable", testFinishNotRunnable},
		{"TerminalIsAppendOnly", testTerminalAppendOnly},
		{"AttemptsInOrder", testAttemptsInOrder},
		{"AttemptSentIsData", testAttemptSent},
		{"FinishAttemptNeedsOneResult", testFinishNeedsOneResult},
		{"MalformedWritesRefused", testMalformedWritesRefused},
		{"FencedNoLease", testFencedNoLease},
		{"FencedOtherHolder", testFencedOtherHolder},
		{"FencedStaleEpoch", testFencedStaleEpoch},
		{"FencedExpiredLease", testFencedExpired},
		{"RenewalUnderFencedWrites", testRenewalUnderFencedWrites},
		{"StartAttemptsMixed", testStartAttemptsMixed},
		{"FinishAttemptsMixed", testFinishAttemptsMixed},
		{"BatchesFenced", testBatchesFenced},
		{"AttemptBatchesLarge", testAttemptBatchesLarge},
		{"ListPendingPaging", testListPendingPaging},
		{"LatestChangeEmpty", testLatestChangeEmpty},
		{"ListChangedPaging", testListChangedPaging},
		{"ListChangedSharedTimestamp", testListChangedSharedTimestamp},
		{"ListIntentsNewestFirst", testListIntents},
		{"ListIntentsFilters", testListIntentsFilters},
		{"ListIntentsSearch", testListIntentsSearch},
		{"ListIntentsAfterSharedTimes", testListIntentsAfterSharedTimes},
		{"RestartKeepsEverything", testRestart},
		{"PossiblyAccepted", testPossiblyAccepted},
		{"AcceptedAfterDeadline", testAcceptedAfterDeadline},
		{"NotBeforeStoredAndScheduled", testNotBefore},
		{"TraceParentRoundTrip", testTraceParent},
		{"Reschedule", testReschedule},
		{"Pauses", testPauses},
	}
	cases = append(cases, operatorCases...)
	cases = append(cases, interventionCases...)
	cases = append(append(cases, historyCases...), instanceCases...)
	return cases
}
