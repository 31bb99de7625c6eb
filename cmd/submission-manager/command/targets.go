package command

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/submissionmanager/submission-manager/core"
)

const targetsUsage = `usage: submission-manager targets validate FILE

Checks a submission target registry: prints every problem, one per line
with its JSON path, and exits 1 when there is any, 0 when the registry is
valid. Run it before rolling out a registry change. To check a file
named -h, write ./-h.
`

// runTargets runs `targets validate FILE`: it prints every problem of the
// registry, one per line with its JSON path, and fails when there is any,
// so CI can check a registry change before it is deployed. -h or --help
// anywhere prints the usage instead, on stderr like every command's flags.
func runTargets(args []string, stdout, stderr io.Writer) error {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprint(stderr, targetsUsage)
			return nil
		}
	}
	if len(args) != 2 || args[0] != "validate" {
		return &usageError{msg: "usage: submission-manager targets validate FILE"}
	}
	file := args[1]
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	reg, err := core.DecodeRegistry(data)
	var regErr *core.RegistryError
	if errors.As(err, &regErr) {
		for _, p := range regErr.Problems {
			fmt.Fprintf(stdout, "%s: %s\n", file, p)
		}
		fmt.Fprintf(stderr, "%s: %d problem(s)\n", file, len(regErr.Problems))
		return &silentError{code: ExitError}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	fmt.Fprintf(stdout, "%s: %d targets, valid\n", file, reg.Len())
	return nil
}

// loadRegistry reads and decodes the registry the service runs with.
func loadRegistry(path string) (*core.Registry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--registry: %w", err)
	}
	reg, err := core.DecodeRegistry(data)
	if err != nil {
		return nil, fmt.Errorf("--registry %s: %w", path, err)
	}
	return reg, nil
}
