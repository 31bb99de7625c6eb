package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/submissionmanager/submission-manager/adapters/httpapi/internal/apigen"
	"github.com/submissionmanager/submission-manager/core"
)

// DefaultMaxBodiesInFlight is how many request bodies the API holds at once
// unless configured otherwise. With the default body limit (about 528 KiB)
// it bounds what bodies can pin to roughly 135 MB whatever the number of
// connections.
const DefaultMaxBodiesInFlight = 256

// bodySlots bounds the request bodies held in memory at once. A request that
// finds every slot taken is answered 503 with Retry-After at once, before
// any of its body is read, rather than queued: a queue would hold the
// connection and grow without bound under a burst.
type bodySlots chan struct{}

func newBodySlots(n int) bodySlots { return make(bodySlots, n) }

// tryAcquire takes a slot if one is free.
func (s bodySlots) tryAcquire() bool {
	select {
	case s <- struct{}{}:
		return true
	default:
		return false
	}
}

func (s bodySlots) release() { <-s }

// requestBody is a request body the API has read, checked and kept: the
// submission decoder works on its bytes in place instead of reading a copy.
type requestBody struct {
	*bytes.Reader
	data []byte
}

func (b *requestBody) Close() error { return nil }

// bodyGate is what admits a route's request bodies: the most of one it
// reads, the slots that bound how many are held at once, and the byte
// budget (shared by every route) that bounds how much they hold, charged as
// a batch or a single body.
type bodyGate struct {
	limit  int64
	slots  bodySlots
	budget *bodyBudget
	batch  bool
}

// readJSONBody refuses request bodies that are not JSON before reading
// them, reads a JSON body up to the gate's limit, and refuses it unless it
// is exactly one JSON document. Reading once here bounds what any client
// can make the server buffer, and settles "is this JSON at all" (a 400)
// before the fields are judged (a 422). The body stays in one buffer until
// the handler returns; the gate's slots bound how many such buffers exist
// at once and its budget how many bytes they hold, both before any of the
// body is read.
func readJSONBody(gate bodyGate, log *slog.Logger) apigen.MiddlewareFunc {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost && r.Method != http.MethodPut && r.Method != http.MethodPatch {
				next.ServeHTTP(w, r)
				return
			}
			ct := r.Header.Get("Content-Type")
			if mt, params, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" ||
				(params["charset"] != "" && !strings.EqualFold(params["charset"], "utf-8")) {
				writeProblem(log, w, r, &unsupportedMediaTypeError{contentType: ct})
				return
			}
			if enc := contentEncoding(r.Header); enc != "" {
				writeProblem(log, w, r, &unsupportedEncodingError{encoding: enc})
				return
			}
			if r.ContentLength > gate.limit {
				// Announced too large: refused before a byte is read.
				writeProblem(log, w, r, &http.MaxBytesError{Limit: gate.limit})
				return
			}
			if !gate.slots.tryAcquire() {
				writeProblem(log, w, r, errTooManyBodies)
				return
			}
			defer gate.slots.release()
			charge, ok := gate.budget.chargeBody(r.ContentLength, gate.limit, gate.batch)
			if !ok {
				writeProblem(log, w, r, errTooManyBodies)
				return
			}
			defer charge.release()
			body, err := readBody(w, r, gate.limit)
			charge.shrinkTo(int64(cap(body)))
			switch {
			case err != nil:
				writeProblem(log, w, r, err)
				return
			case len(bytes.TrimSpace(body)) == 0:
				writeProblem(log, w, r, errBodyRequired)
				return
			case !utf8.Valid(body):
				// encoding/json would turn invalid bytes into U+FFFD, so two
				// different intentIds could silently become one intent.
				writeProblem(log, w, r, &malformedError{reason: "the request body is not valid UTF-8"})
				return
			case !json.Valid(body):
				writeProblem(log, w, r, notJSON(body))
				return
			}
			r.Body = &requestBody{Reader: bytes.NewReader(body), data: body}
			r.ContentLength = int64(len(body))
			r.GetBody = func() (io.ReadCloser, error) { return &requestBody{Reader: bytes.NewReader(body), data: body}, nil }
			next.ServeHTTP(w, r)
		})
	}
}

// notJSON says why json.Valid refused a body: nesting deeper than it reads
// is a 422 naming where (a request body must be an object, so a deep
// array at its root is only not an object), anything else a 400.
func notJSON(body []byte) error {
	path, deep := tooDeepAt(body)
	switch {
	case !deep:
		return &malformedError{reason: "the request body is not a valid JSON document"}
	case strings.HasPrefix(path, "["):
		return errNotAnObject
	default:
		return core.TooDeep(path)
	}
}

// contentEncoding returns the request's Content-Encoding unless it is
// absent or identity: the server decodes no other, and reading a gzip body
// as JSON would refuse it with a misleading message, or worse, store it.
func contentEncoding(h http.Header) string {
	var codings []string
	for _, v := range h.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				codings = append(codings, c)
			}
		}
	}
	return strings.Join(codings, ", ")
}

// readBody reads the whole body into one buffer of the right size when the
// client announced it (no doubling growth), and turns a failure to read it
// into the client's fault it is: too large (413), too slow (408), or broken
// framing such as malformed chunked encoding (400).
func readBody(w http.ResponseWriter, r *http.Request, maxBody int64) ([]byte, error) {
	src := http.MaxBytesReader(w, r.Body, maxBody)
	var (
		body []byte
		err  error
	)
	if n := r.ContentLength; n >= 0 && n <= maxBody {
		body = make([]byte, n)
		_, err = io.ReadFull(src, body)
	} else {
		body, err = io.ReadAll(src)
	}
	if err == nil {
		return body, nil
	}
	var maxBytes *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &maxBytes):
		return nil, err
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return nil, &bodyTimeoutError{cause: err}
	default:
		return nil, &bodyReadError{cause: err}
	}
}
