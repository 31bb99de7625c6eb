package protection

import (
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// lastTries remembers, for one gateway, the intents that had their last
// try (core.LastTry) in this leadership term, until their deadlines pass.
// An open breaker or a busy gateway lets an intent's last try through
// once: were it admitted for every retry in its last second, an outage
// would see each deadline intent called again and again at its backoff
// until the deadline, the very calls the breaker is there to spare.
type lastTries struct {
	deadlines map[string]time.Time
	// sweptAt is when ended entries were last dropped: a sweep runs at
	// most once per core.LastTryLead, so the set costs its size once a
	// second at most, never per call.
	sweptAt time.Time
}

// left reports whether the intent may still have its last try.
func (l *lastTries) left(intentID string) bool {
	_, taken := l.deadlines[intentID]
	return !taken
}

// take records the intent's last try, made at now before its deadline.
func (l *lastTries) take(intentID string, deadline, now time.Time) {
	if l.deadlines == nil {
		l.deadlines = map[string]time.Time{}
	}
	if now.Sub(l.sweptAt) >= core.LastTryLead {
		for id, d := range l.deadlines {
			if !now.Before(d) {
				delete(l.deadlines, id)
			}
		}
		l.sweptAt = now
	}
	l.deadlines[intentID] = deadline
}
