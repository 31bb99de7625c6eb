package gateway_test

import (
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/gateway"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/gatewaytest"
)

func TestClientConformance(t *testing.T) {
	gatewaytest.Run(t, func(t *testing.T, gt core.GatewayType) ports.Gateway {
		c, err := gateway.New(gt, gateway.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	})
}

func TestRouterConformance(t *testing.T) {
	r, err := gateway.NewRouter(gateway.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	gatewaytest.Run(t, func(*testing.T, core.GatewayType) ports.Gateway { return r })
}
