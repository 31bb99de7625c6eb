package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/core"
)

// The fuzz targets below run their seeds in every `go test` and search
// further under `make fuzz`. Each drives the real API over loopback.

// submitStatuses are the answers a submission may get; anything else (a
// 500 above all) is a defect.
var submitStatuses = map[int]bool{200: true, 201: true, 400: true, 409: true, 413: true, 415: true, 422: true}

// FuzzSubmitBody sends arbitrary bodies: no body may make the API fail, and
// whatever it accepts must be readable back under the same intentId.
func FuzzSubmitBody(f *testing.F) {
	for _, seed := range []string{
		submitBody("order-1", "sms.realtime", `{"to":"+1555","text":"hi"}`),
		`{"intentId":"a\ud800b","submissionTarget":"sms.realtime","payload":{}}`,
		`{"intentId":"a\udc00b","submissionTarget":"sms.realtime","payload":{}}`,
		`{"intentId":"a\ufffdb","submissionTarget":"sms.realtime","payload":{}}`,
		`{"intentId":"\ud83d\ude00","submissionTarget":"sms.realtime","payload":{}}`,
		`{"intentId":"/","submissionTarget":"sms.realtime","payload":{}}`,
		`{"intentId":"..","submissionTarget":"sms.realtime","payload":{}}`,
		`{"intentId":"a\u202eb","submissionTarget":"sms.realtime","payload":{}}`,
		`{"intentId":"a\u2028b","submissionTarget":"sms.realtime","payload":{}}`,
		`{"intentId":"n","submissionTarget":"sms.realtime","payload":1e999999999}`,
		`{"intentId":"n","submissionTarget":"sms.realtime","payload":{"deep":[[[[[[[[[[]]]]]]]]]]}}`,
		`{"intentId":"d","intentId":"e","submissionTarget":"sms.realtime","payload":{}}`,
		`{"intent\u0049d":"esc","submissionTarget":"sms.realtime","payload":null}`,
		`{"intentId":"a\\","submissionTarget":"sms.realtime","payload":"\\\"\\u0000"}`,
		`[]`, `"x"`, `1e999999999`, `{`, `{}}`, `{} {}`, ``, "{\"intentId\":\"\xff\"}",
	} {
		f.Add(seed)
	}
	svc := &storingService{}
	_, c := startStoring(f, httpapi.Config{MaxPayloadBytes: 4 << 10}, svc)
	f.Fuzz(func(t *testing.T, body string) {
		res := submitRaw(t, c, "application/json", body)
		if !submitStatuses[res.StatusCode()] {
			t.Fatalf("body %q: status %d %s", body, res.StatusCode(), res.Body)
		}
		if res.JSON201 == nil && res.JSON200 == nil {
			return
		}
		in := res.JSON201
		if in == nil {
			in = res.JSON200
		}
		got, err := c.GetIntentWithResponse(context.Background(), in.IntentId, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.JSON200 == nil || got.JSON200.IntentId != in.IntentId {
			t.Fatalf("accepted intentId %q cannot be read back: %d %s", in.IntentId, got.StatusCode(), got.Body)
		}
	})
}

// FuzzIntentIDReadback submits an id and reads it back through the SDK's
// path encoding: every accepted id must be readable, and the API must
// accept exactly the ids core.ValidateIntentID allows.
func FuzzIntentIDReadback(f *testing.F) {
	for _, id := range []string{"order-1", "/", "a/b", ".", "..", "...", "./a", "a/..", "%2F", "%", "?", "#", "a b",
		"\\", "a\u202eb", "a\u2028b", "a\ufffdb", "é", "😀", ";", "a//b", "~", "\x00", strings.Repeat("x", 255),
		"/a", "a/", "//", "a/./b", "order/42", "a/../b", "%2E%2E"} {
		f.Add(id)
	}
	svc := &storingService{}
	_, c := startStoring(f, httpapi.Config{}, svc)
	f.Fuzz(func(t *testing.T, id string) {
		if !utf8.ValidString(id) {
			t.Skip("a JSON string sent by the SDK is always UTF-8")
		}
		res := submitRaw(t, c, "application/json", submitBody(id, "sms.realtime", "{}"))
		valid := core.ValidateIntentID(id) == nil
		switch {
		case valid && res.StatusCode() != 201 && res.StatusCode() != 200:
			t.Fatalf("valid intentId %q: status %d %s", id, res.StatusCode(), res.Body)
		case !valid && res.StatusCode() != 422:
			t.Fatalf("invalid intentId %q: status %d %s, want 422", id, res.StatusCode(), res.Body)
		case !valid:
			return
		}
		got, err := c.GetIntentWithResponse(context.Background(), id, nil)
		if err != nil {
			t.Fatalf("intentId %q: the SDK cannot build the request: %v", id, err)
		}
		if got.JSON200 == nil || got.JSON200.IntentId != id {
			t.Fatalf("accepted intentId %q cannot be read back: %d %s", id, got.StatusCode(), got.Body)
		}
	})
}

// FuzzListQuery sends arbitrary query strings to the listing: a refusal
// names a parameter, and nothing fails.
func FuzzListQuery(f *testing.F) {
	for _, q := range []string{"", "limit=10", "limit=0", "limit=501", "limit=ten", "status=pending", "status=done",
		"submissionTarget=sms.realtime", "submissionTarget=a%FF", "submissionTarget=", "cursor=", "cursor=%21%21",
		"cursor=eyJjIjoiMjAyNi0wMi0wMlQxMjowMDowMC4xMjM0NTZaIiwiaSI6Im9yZGVyLTEyMzQifQ",
		"cursor=eyJjIjoiOTk5OS0wMS0wMVQwMDowMDowMFoiLCJpIjoiYSJ9", "limit=1&limit=2", "%zz", "a=%00&&&=",
		"cursor=eyJjIjoiMjAyNi0wMi0wMlQxMjowMDowMFoiLCJpIjoiXHVkODAwIn0"} {
		f.Add(q)
	}
	url0, _ := startStoring(f, httpapi.Config{}, &storingService{})
	f.Fuzz(func(t *testing.T, query string) {
		u, err := url.Parse(url0 + "/v1/intents")
		if err != nil {
			t.Fatal(err)
		}
		u.RawQuery = query
		res, err := http.Get(u.String())
		if err != nil {
			t.Skip("the client refused to send it")
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		status := res.StatusCode
		if status != 200 && status != 400 && status != 422 {
			t.Fatalf("query %q: status %d", query, status)
		}
	})
}

// FuzzIntentPath sends arbitrary paths under /v1/intents/: a read answers
// 200 or 404 (or 400 for what is not a path), never a failure.
func FuzzIntentPath(f *testing.F) {
	for _, p := range []string{"order-1", "%2F", "a%2Fb", ".", "..", "%2E%2E", "a%FFb", "%ED%A0%80", "a/b", "%00",
		"a%E2%80%AEb", "%", "x?y=1", "%C0%AF"} {
		f.Add(p)
	}
	svc := &storingService{}
	base, _ := startStoring(f, httpapi.Config{}, svc)
	f.Fuzz(func(t *testing.T, path string) {
		req, err := http.NewRequest(http.MethodGet, base+"/v1/intents/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.Opaque = "//" + req.URL.Host + "/v1/intents/" + path
		if strings.ContainsAny(path, " \r\n\t\x00#") || !utf8.ValidString(path) {
			t.Skip("not a request line the client can send")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Skip("the client refused to send it")
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		if res.StatusCode >= 500 {
			t.Fatalf("path %q: status %d", path, res.StatusCode)
		}
	})
}
