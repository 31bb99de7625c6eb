package client_test

import (
	"context"
	"path/filepath"
	"sort"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestOpenAPIDocumentIsValidWithExamples checks api/openapi.yaml, the
// contract this SDK is generated from: it must be a valid OpenAPI 3.0
// document, every schema must carry an example, and every example must
// satisfy its schema, so the documentation never shows a request or answer
// the service would refuse or never send.
func TestOpenAPIDocumentIsValidWithExamples(t *testing.T) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(filepath.Join("..", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("api/openapi.yaml is invalid: %v", err)
	}
	names := make([]string, 0, len(doc.Components.Schemas))
	for name := range doc.Components.Schemas {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := doc.Components.Schemas[name].Value
		if s.Example == nil {
			t.Errorf("schema %s has no example", name)
		}
		for prop, ref := range s.Properties {
			// A referenced schema, or an array of one, has its own example.
			arrayOfRef := ref.Value.Items != nil && ref.Value.Items.Ref != ""
			if ref.Ref == "" && !arrayOfRef && ref.Value.Example == nil {
				t.Errorf("property %s.%s has no example", name, prop)
			}
		}
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for _, p := range op.Parameters {
				if p.Value.Schema.Ref == "" && p.Value.Schema.Value.Example == nil && p.Value.Example == nil {
					t.Errorf("%s %s: parameter %s has no example", method, path, p.Value.Name)
				}
			}
		}
	}
}
