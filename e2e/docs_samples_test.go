package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
)

// TestDocsSamplesMatchTheService keeps the JSON samples of docs/api.md
// true: each object a sample shows (the answers of its curl session, its
// ```json blocks, and every object nested in them) may have only members
// its schema in api/openapi.yaml has, and must have every member the real
// service sent in every answer of that kind below. An answer's kind is its
// operation and schema where the sample names the request (a curl command),
// else its schema; a sample object with a "..." member is abridged, and
// only its members are checked.
func TestDocsSamplesMatchTheService(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromFile(filepath.Join("..", "api", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	seen := realAnswers(t, doc)

	text, err := os.ReadFile(filepath.Join("..", "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	samples, err := docSamples(string(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) < 10 {
		t.Fatalf("found %d samples in docs/api.md; the parser lost them", len(samples))
	}
	for _, s := range samples {
		var name, op string
		if s.method != "" {
			route := routeOf(doc, s.path)
			name, err = answerSchema(doc, s.method, route, s.status)
			if err != nil {
				t.Errorf("docs/api.md:%d: %v", s.line, err)
				continue
			}
			op = s.method + " " + route + " "
		} else if fits := classify(doc, s.value); len(fits) == 1 {
			name = fits[0]
		} else {
			t.Errorf("docs/api.md:%d: the sample fits the schemas %v of api/openapi.yaml, want exactly one "+
				"(none: a member no schema has, or a required one missing)", s.line, fits)
			continue
		}
		for i, o := range objects(doc, name, name, s.value) {
			props := doc.Components.Schemas[o.schema].Value.Properties
			for _, k := range o.keys {
				if props[k] == nil {
					t.Errorf("docs/api.md:%d: %s shows %q, which schema %s does not have", s.line, o.where, k, o.schema)
				}
			}
			kind := o.schema
			if i == 0 && seen[op+kind] != nil {
				kind = op + kind
			}
			always, observed := alwaysSent(seen[kind])
			if !observed {
				t.Errorf("docs/api.md:%d: %s: no real %s answer to compare with; add one to realAnswers", s.line, o.where, kind)
				continue
			}
			for _, k := range always {
				if !o.elided && !slices.Contains(o.keys, k) {
					t.Errorf("docs/api.md:%d: %s lacks %q, which every real %s has", s.line, o.where, k, kind)
				}
			}
		}
	}
}

// alwaysSent returns the members every one of the key sets has.
func alwaysSent(sets [][]string) ([]string, bool) {
	if len(sets) == 0 {
		return nil, false
	}
	out := slices.Clone(sets[0])
	for _, set := range sets[1:] {
		out = slices.DeleteFunc(out, func(k string) bool { return !slices.Contains(set, k) })
	}
	return out, true
}

// realAnswers makes the requests the samples show against the real service
// and records, by schema and by operation and schema, the members of every
// object answered.
func realAnswers(t *testing.T, doc *openapi3.T) map[string][][]string {
	t.Helper()
	svc, sim := startStandard(t)
	base := svc.srv.URL()
	seen := map[string][][]string{}
	call := func(method, path, contentType, body string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(context.Background(), method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", contentType)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		data, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		p, _, _ := strings.Cut(path, "?")
		route := routeOf(doc, p)
		name, err := answerSchema(doc, method, route, res.StatusCode)
		if err != nil {
			t.Fatalf("%s %s answered %d %s: %v", method, path, res.StatusCode, data, err)
		}
		var v map[string]any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("%s %s: %s: %v", method, path, data, err)
		}
		for i, o := range objects(doc, name, name, v) {
			seen[o.schema] = append(seen[o.schema], o.keys)
			if i == 0 {
				kind := method + " " + route + " " + o.schema
				seen[kind] = append(seen[kind], o.keys)
			}
		}
		return res.StatusCode
	}
	intent := func(id, target, payload string) string {
		return fmt.Sprintf(`{"intentId":%q,"submissionTarget":%q,"payload":%s}`, id, target, payload)
	}
	const order = `{"to":"+15551234567","text":"Your order has shipped."}`
	const js = "application/json"

	script(t, sim, "docs-2", gatewaysim.Rejected("provider_failure"), gatewaysim.StepAccepted)
	// An attempt that ends in an error has no outcome: samples need not show one.
	script(t, sim, "docs-5", gatewaysim.Fault(gatewaysim.ModeNotJSON), gatewaysim.StepAccepted)
	call("GET", "/v1/targets", "", "")
	call("GET", "/v1/targets/sms.realtime", "", "")
	call("POST", "/v1/intents", js, intent("docs-1", "sms.realtime", order))
	call("POST", "/v1/intents", js, intent("docs-2", "sms.realtime", order))
	call("POST", "/v1/intents", js, intent("docs-5", "sms.batch", order))
	for _, id := range []string{"docs-1", "docs-2", "docs-5"} {
		waitTerminal(t, svc.api, id)
	}
	call("POST", "/v1/intents", js, intent("docs-1", "sms.realtime", order))
	call("POST", "/v1/intents", js, intent("docs-1", "sms.realtime", `{}`))
	call("POST", "/v1/intents", js, intent("docs-3", "fax.realtime", order))
	call("POST", "/v1/intents", js, intent(strings.Repeat("x", 256), "sms.realtime", order))
	call("POST", "/v1/intents", js, `{"intentId":`)
	call("POST", "/v1/intents", "text/plain", "hello")
	call("GET", "/v1/intents/docs-1", "", "")
	call("GET", "/v1/intents/docs-2", "", "")
	call("GET", "/v1/intents/docs-5", "", "")
	later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	if code := call("POST", "/v1/intents", js, `{"intentId":"docs-6","submissionTarget":"sms.realtime","payload":{},"notBefore":"`+later+`"}`); code != 201 {
		t.Fatalf("a scheduled intent: %d", code)
	}
	call("GET", "/v1/intents/docs-6", "", "")
	// The operator's actions, on intents scheduled an hour ahead (so that
	// no attempt is in flight): events in the answers, and the conflict.
	for _, id := range []string{"docs-7", "docs-8"} {
		if code := call("POST", "/v1/intents", js, `{"intentId":"`+id+`","submissionTarget":"sms.realtime","payload":{},"notBefore":"`+later+`"}`); code != 201 {
			t.Fatalf("a scheduled intent: %d", code)
		}
	}
	if code := call("POST", "/v1/intents/docs-7/cancel", js, `{}`); code != 200 {
		t.Fatalf("cancel: %d", code)
	}
	if code := call("POST", "/v1/intents/docs-8/run-now", js, `{}`); code != 200 {
		t.Fatalf("run now: %d", code)
	}
	call("GET", "/v1/intents/docs-7", "", "")
	call("POST", "/v1/intents/docs-1/cancel", js, `{}`)
	call("GET", "/v1/intents/never-submitted", "", "")
	call("GET", "/v1/intents?limit=1", "", "")
	call("GET", "/v1/intents?limit=50", "", "")
	call("POST", "/v1/intents/batch", js, `{"intents":[`+intent("docs-4", "sms.realtime", order)+","+
		intent("docs-1", "sms.realtime", order)+`,{"submissionTarget":"sms.realtime","payload":{}}]}`)
	return seen
}
