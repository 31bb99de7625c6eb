package httpapi

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/submissionmanager/submission-manager/adapters/httpapi/internal/apigen"
	"github.com/submissionmanager/submission-manager/core"
)

// intentIDCases are ids on both sides of every clause of the rule.
var intentIDCases = []string{
	"order-1234-shipping-sms", "a", "a b", " x ", "é日本😀", "a\ufffdb", "%2F", `back\slash`, "?#&=+;:@!$'()*,",
	"...", ".a", "a.", strings.Repeat("x", 255), strings.Repeat("😀", 255),
	"", strings.Repeat("x", 256), ".", "..", "/", "a/b", "a/", "/a", "//", "a/../b", "a\x00b", "a\tb", "a\x7fb", "a\u0085b",
	"a\u200bb", "a\u200eb", "a\u202eb", "a\u2066b", "\ufeffa", "a\u00adb", "a\u2028b", "a\u2029b",
}

// intentIDSchema loads the embedded document's IntentID schema once.
var intentIDSchema = func() func(t *testing.T) *openapi3.Schema {
	var (
		once   sync.Once
		schema *openapi3.Schema
		err    error
	)
	return func(t *testing.T) *openapi3.Schema {
		t.Helper()
		once.Do(func() {
			var spec *openapi3.T
			if spec, err = apigen.GetSwagger(); err == nil {
				schema = spec.Components.Schemas["IntentID"].Value
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		return schema
	}
}()

// checkIntentIDAgreement fails when the OpenAPI IntentID schema and
// core.ValidateIntentID judge id differently.
func checkIntentIDAgreement(t *testing.T, id string) {
	t.Helper()
	schema := intentIDSchema(t)
	if schema.Pattern != core.IntentIDPattern {
		t.Fatalf("openapi.yaml's IntentID pattern is %q, core.IntentIDPattern is %q", schema.Pattern, core.IntentIDPattern)
	}
	specErr := schema.VisitJSON(id)
	coreErr := core.ValidateIntentID(id)
	if (specErr == nil) != (coreErr == nil) {
		t.Fatalf("intentId %q: the OpenAPI schema says %v, core.ValidateIntentID says %v", id, specErr, coreErr)
	}
}

// TestIntentIDRuleAgreesWithTheOpenAPIDocument keeps the published schema
// and the rule the service applies the same rule.
func TestIntentIDRuleAgreesWithTheOpenAPIDocument(t *testing.T) {
	for _, id := range intentIDCases {
		checkIntentIDAgreement(t, id)
	}
}

// FuzzIntentIDRuleAgreement looks for an id the two homes judge differently.
func FuzzIntentIDRuleAgreement(f *testing.F) {
	for _, id := range intentIDCases {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if !utf8.ValidString(id) {
			t.Skip("the schema sees decoded JSON strings, which are always UTF-8")
		}
		checkIntentIDAgreement(t, id)
	})
}
