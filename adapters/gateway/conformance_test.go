package gateway_test

import (
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/gateway"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/gatewaytest"
)

func TestClientConformance(t *testing.T) {
	gatewaytest.Run(t, gatewaytest.Harness{
		NewGateway: func(t *testing.T, gt core.GatewayType) ports.Gateway {
			c, err := gateway.New(gt, gateway.Config{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			return c
		},
		StartFarSide: startFarSide,
		KindOf:       func(err error) string { return string(gateway.KindOf(err)) },
	})
}
