package httpapi_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/core"
)

// specOperation is one operation of api/openapi.yaml with the role its
// security and responses declare: no security means open, a listed 403
// means operator keys only, anything else any key.
type specOperation struct {
	method, path string
	op           *openapi3.Operation
	role         string // "none", "client" or "operator"
}

// loadSpecOperations reads every operation of the OpenAPI file, so that a
// route added to the file is held to its declared role without touching
// the test.
func loadSpecOperations(t *testing.T) []specOperation {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile("../../api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ops []specOperation
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			o := specOperation{method: method, path: path, op: op, role: "client"}
			switch {
			case op.Security != nil && len(*op.Security) == 0:
				o.role = "none"
			case op.Responses.Value("403") != nil:
				o.role = "operator"
			}
			ops = append(ops, o)
		}
	}
	slices.SortFunc(ops, func(a, b specOperation) int { return strings.Compare(a.method+a.path, b.method+b.path) })
	if len(ops) == 0 {
		t.Fatal("the OpenAPI file has no operations")
	}
	return ops
}

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// TestEveryRouteAnswersEveryRoleAsTheOpenAPIFileSays sends each operation
// of api/openapi.yaml with no key, a client key and an operator key: an
// open operation never asks for a key, a secured one answers 401 without
// one, an operator one answers 403 to a client key, and every status the
// server answers is one the file lists for that operation.
func TestEveryRouteAnswersEveryRoleAsTheOpenAPIFileSays(t *testing.T) {
	srv, err := httpapi.New(httpapi.Config{Service: answeringService{}, APIKeys: []string{"c-key"}, OperatorKeys: []string{"o-key"},
		Gateways: &pauseBook{pauses: map[string]core.GatewayPause{}}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range loadSpecOperations(t) {
		t.Run(o.method+" "+o.path, func(t *testing.T) {
			if o.role != "none" && o.op.Responses.Value("401") == nil {
				t.Errorf("secured, but the file lists no 401")
			}
			if o.role == "none" && (o.op.Responses.Value("401") != nil || o.op.Responses.Value("403") != nil) {
				t.Errorf("open, but the file lists 401 or 403")
			}
			for _, key := range []string{"", "c-key", "o-key"} {
				req := httptest.NewRequest(o.method, pathParam.ReplaceAllString(o.path, "x"), nil)
				if o.op.RequestBody != nil {
					req = httptest.NewRequest(o.method, req.URL.Path, strings.NewReader(`{}`))
					req.Header.Set("Content-Type", "application/json")
				}
				if key != "" {
					req.Header.Set("Authorization", "Bearer "+key)
				}
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				got := rec.Code
				want := 0 // any status but 401 and 403
				switch {
				case o.role != "none" && key == "":
					want = http.StatusUnauthorized
				case o.role == "operator" && key == "c-key":
					want = http.StatusForbidden
				}
				switch {
				case want != 0 && got != want:
					t.Errorf("key %q: %d, want %d (role %s); %s", key, got, want, o.role, rec.Body)
				case want == 0 && (got == http.StatusUnauthorized || got == http.StatusForbidden):
					t.Errorf("key %q: %d, want it let through (role %s); %s", key, got, o.role, rec.Body)
				}
				if o.op.Responses.Value(strconv.Itoa(got)) == nil {
					t.Errorf("key %q: answered %d, which the file does not list; %s", key, got, rec.Body)
				}
			}
		})
	}
}
