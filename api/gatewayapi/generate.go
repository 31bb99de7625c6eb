// Package gatewayapi is the code oapi-codegen generates from api/gateway.yaml,
// the gateway wire protocol: request and answer types, request builders and
// the ServeMux server interface. The gateway client (adapters/gateway) and the
// simulator (adapters/gatewaysim) both use it, so neither can drift from the
// protocol. It is regenerated, never edited.
package gatewayapi

//go:generate go tool oapi-codegen -config cfg.yaml ../gateway.yaml
