package tracefake_test

import (
	"testing"

	"github.com/submissionmanager/submission-manager/fakes/tracefake"
	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/tracertest"
)

// The fake is held to the port's suite like every implementation.
func TestTracerConformance(t *testing.T) {
	tracertest.Run(t, func(*testing.T) ports.Tracer { return &tracefake.Tracer{} })
}
