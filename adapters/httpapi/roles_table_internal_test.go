package httpapi

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestRoleTableHasARowPerOperationOfTheOpenAPIFile holds routeRoles to
// api/openapi.yaml both ways: every operation of the file has a row with the
// role the file declares (open with `security: []`, operator when it lists
// 403, any key otherwise), and every row names an operation of the file. A
// route added to the file without a row fails here.
func TestRoleTableHasARowPerOperationOfTheOpenAPIFile(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromFile("../../api/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inFile := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			route := method + " " + path
			inFile[route] = true
			declared := roleClient
			switch {
			case op.Security != nil && len(*op.Security) == 0:
				declared = roleNone
			case op.Responses.Value("403") != nil:
				declared = roleOperator
			}
			got, ok := routeRoles[route]
			switch {
			case !ok:
				t.Errorf("%s (%s) has no row in routeRoles", route, op.OperationID)
			case got != declared:
				t.Errorf("%s: routeRoles says %s, the OpenAPI file declares %s", route, got, declared)
			}
		}
	}
	for route := range routeRoles {
		if !inFile[route] {
			t.Errorf("routeRoles has a row for %s, which the OpenAPI file does not declare", route)
		}
	}
}

func TestRequiredRoleOfRoutesWithoutARow(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          role
	}{
		{"GET /metrics", "/metrics", roleNone},
		{"/ui/", "/ui/intents", roleNone},
		{notFoundPattern, "/nowhere", roleNone},
		{notFoundPattern, "/v1/nowhere", roleClient},
		{"DELETE /v1/intents/{intentId}", "/v1/intents/a", roleOperator},
	}
	for _, tt := range tests {
		if got := requiredRole(tt.pattern, tt.path); got != tt.want {
			t.Errorf("requiredRole(%q, %q) = %s, want %s", tt.pattern, tt.path, got, tt.want)
		}
	}
}
