package httpapi

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// DefaultMaxWait caps the wait a client may ask for with Prefer: wait=N.
const DefaultMaxWait = 30 * time.Second

// longestPreferredWait is what preferredWait makes of a wait too long for a
// time.Duration: the longest whole number of seconds one holds, which every
// cap is below.
const longestPreferredWait = time.Duration(math.MaxInt64/int64(time.Second)) * time.Second

// preferredWait reads the wait preference of a Prefer header (RFC 7240):
// "wait=N" with N whole seconds, among other preferences separated by
// commas, each perhaps with ";" parameters. It is the one place Prefer is
// parsed. A header without a wait, or with a wait that is not a positive
// whole number of seconds (a negative, a fraction, a word), asks for no
// wait: RFC 7240 says a preference the server does not understand is
// ignored, never an error. A whole number too large for any cap, however
// many digits it has, is longestPreferredWait, so the caller's cap applies
// to it as to any other long wait.
func preferredWait(prefer *string) (time.Duration, bool) {
	if prefer == nil {
		return 0, false
	}
	for pref := range strings.SplitSeq(*prefer, ",") {
		pref, _, _ = strings.Cut(pref, ";")
		name, value, found := strings.Cut(pref, "=")
		if !found || !strings.EqualFold(strings.TrimSpace(name), "wait") {
			continue
		}
		value = strings.Trim(strings.TrimSpace(value), `"`)
		n, err := strconv.ParseUint(value, 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange): // all digits, beyond 64 bits
			return longestPreferredWait, true
		case err != nil || n == 0:
			return 0, false
		case n > uint64(longestPreferredWait/time.Second):
			return longestPreferredWait, true
		}
		return time.Duration(n) * time.Second, true
	}
	return 0, false
}

// awaitFinal honours a wait preference for an intent a request has just
// read or created: it returns the intent as soon as it is final, or once the
// (capped) wait has passed, with the Preference-Applied value to send. The
// preference is not applied, and the intent returned as it is, when there
// is no waiter (an API without one), or the waiter admits no wait (at its
// cap, or shutting down). The wait itself is the waiter's protocol
// (app/watch): the handler only translates.
func (h *handlers) awaitFinal(ctx context.Context, in core.Intent, prefer *string) (core.Intent, *string, error) {
	d, ok := preferredWait(prefer)
	if !ok || h.waiter == nil {
		return in, nil, nil
	}
	d = min(d, h.maxWait)
	cur, waited, err := h.waiter.AwaitFinal(ctx, in, d)
	if err != nil || !waited {
		return cur, nil, err
	}
	return cur, ptr("wait=" + strconv.Itoa(int(d/time.Second))), nil
}

// joinPreferLines folds several Prefer header lines into one, as RFC 9110
// (section 5.3) allows for any list-valued field, so that a client sending
// "Prefer: return=minimal" and "Prefer: wait=5" on separate lines is read
// like one sending both on one line, instead of failing the header's
// binding as a repeated parameter.
func joinPreferLines(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lines := r.Header.Values("Prefer"); len(lines) > 1 {
			r.Header.Set("Prefer", strings.Join(lines, ", "))
		}
		next.ServeHTTP(w, r)
	})
}
