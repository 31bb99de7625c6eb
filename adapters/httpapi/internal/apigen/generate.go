// Package apigen is the server code oapi-codegen generates from
// api/openapi.yaml: request and response types, the ServeMux routing, the
// strict server interface and the embedded spec. It is regenerated, never
// edited; the handwritten server lives in the parent package.
package apigen

//go:generate go tool oapi-codegen -config oapi-codegen.yaml ../../../../api/openapi.yaml
