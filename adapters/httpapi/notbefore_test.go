package httpapi_test

import (
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
)

func TestNotBeforeMustBeAnRFC3339DateTimeGivenOnce(t *testing.T) {
	c := start(t, httpapi.Config{})
	for _, nb := range []string{`"tomorrow"`, `"2026-02-02"`, `"2026-02-02T09:00:00"`, `"2026-02-30T09:00:00Z"`, `12`, `null`, `"x", "notBefore": "2026-02-02T09:00:00Z"`} {
		body := `{"intentId":"a","submissionTarget":"t","payload":{},"notBefore":` + nb + `}`
		res := submitRaw(t, c, "application/json", body)
		p := problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "invalid-field")
		if f := invalidField(t, p); f != "notBefore" {
			t.Errorf("notBefore %s: the problem names %q", nb, f)
		}
	}
	dup := `{"intentId":"a","submissionTarget":"t","payload":{},"notBefore":"2026-02-02T09:00:00Z","notBefore":"2026-02-02T09:00:00Z"}`
	res := submitRaw(t, c, "application/json", dup)
	p := problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "invalid-field")
	if f := invalidField(t, p); f != "notBefore" || !strings.Contains(*p.Detail, "once") {
		t.Errorf("notBefore twice: %s", res.Body)
	}
}
