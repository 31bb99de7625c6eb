package e2e

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestClientFaultsAreNotServerErrors sends the hostile probe's requests to
// a real instance: a malformed chunked body, a gzip-encoded body, lone
// surrogates that would merge intentIds and a top-level huge number. Each
// is answered as the client's (or accepted, for the number), and the
// request metrics count no server error.
func TestClientFaultsAreNotServerErrors(t *testing.T) {
	svc, _ := startStandard(t)
	u, err := url.Parse(svc.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "POST /v1/intents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"+
		"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n")
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("malformed chunked body: %d, want 400", res.StatusCode)
	}

	post := func(body string, header map[string]string) int {
		req, _ := http.NewRequest(http.MethodPost, svc.srv.URL()+"/v1/intents", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		return res.StatusCode
	}
	if code := post(`{"intentId":"g","submissionTarget":"sms.realtime","payload":{}}`, map[string]string{"Content-Encoding": "gzip"}); code != 415 {
		t.Fatalf("gzip body: %d, want 415", code)
	}
	if code := post(`{"intentId":"a\ufffdb","submissionTarget":"sms.realtime","payload":{}}`, nil); code != 201 {
		t.Fatalf("U+FFFD in an intentId: %d, want 201", code)
	}
	for _, id := range []string{`a\ud800b`, `a\udc00b`} {
		if code := post(`{"intentId":"`+id+`","submissionTarget":"sms.realtime","payload":{}}`, nil); code != 422 {
			t.Fatalf("intentId %s: %d, want 422 (it would be the same intent as a\\ufffdb)", id, code)
		}
	}
	if code := post(`{"intentId":"n","submissionTarget":"sms.realtime","payload":1e999999999}`, nil); code != 201 {
		t.Fatalf("a top-level 1e999999999 payload: %d, want 201", code)
	}
	res, err = http.Get(svc.srv.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	metrics, _ := io.ReadAll(res.Body)
	for _, line := range strings.Split(string(metrics), "\n") {
		if strings.HasPrefix(line, "submission_manager_http_requests_total{") && strings.Contains(line, `code="5`) {
			t.Errorf("a client's fault counted as a server error: %s", line)
		}
	}
	if !strings.Contains(string(metrics), `code="400"`) {
		t.Error("the malformed body is not counted as a 400")
	}
}
