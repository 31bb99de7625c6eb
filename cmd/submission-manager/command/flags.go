package command

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// EnvPrefix starts the environment variable of every flag: --max-in-flight
// is also SUBMISSION_MAX_IN_FLIGHT. Containers and systemd units configure
// the service by environment; operators at a shell use flags.
const EnvPrefix = "SUBMISSION_"

// EnvName returns the environment variable that sets the flag named name.
func EnvName(name string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// LookupEnv reads one environment variable; os.LookupEnv in production, a
// map in tests, so no test has to change the process environment.
type LookupEnv func(name string) (string, bool)

// newFlagSet returns a flag set that reports errors instead of exiting and
// whose usage shows every flag's environment variable.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: submission-manager %s\n\nflags (each also read from its environment variable):\n", synopsis)
		fs.VisitAll(func(f *flag.Flag) {
			def := ""
			if f.DefValue != "" {
				def = fmt.Sprintf(" (default %s)", f.DefValue)
			}
			fmt.Fprintf(stderr, "  --%s, %s%s\n      %s\n", f.Name, EnvName(f.Name), def, f.Usage)
		})
	}
	return fs
}

// parseFlags parses args, then gives every flag the command line left unset
// the value of its environment variable. Flags win over the environment. A
// bad value names both the variable and the flag it stands for. Errors are
// usage errors (exit 2); those of the command line itself the flag package
// has already printed, with the usage.
func parseFlags(fs *flag.FlagSet, args []string, env LookupEnv) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &silentError{code: ExitUsage}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || env == nil {
			return
		}
		name := EnvName(f.Name)
		if v, ok := env(name); ok {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("invalid value %q for %s (flag --%s): %v", v, name, f.Name, err))
			}
		}
	})
	if len(errs) > 0 {
		return &usageError{msg: errors.Join(errs...).Error()}
	}
	return nil
}

// given reports whether the flag called name was set, on the command line
// or from its environment variable (parseFlags sets those through fs.Set).
func given(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// listFlag is a comma-separated list flag; empty items are dropped so that
// "a,,b," and a trailing comma in an environment file mean what they look like.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	*l = (*l)[:0]
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			*l = append(*l, item)
		}
	}
	return nil
}

// choiceFlag is a string flag limited to a fixed set of values.
type choiceFlag struct {
	value   string
	choices []string
}

func (c *choiceFlag) String() string { return c.value }

func (c *choiceFlag) Set(s string) error {
	for _, choice := range c.choices {
		if s == choice {
			c.value = s
			return nil
		}
	}
	return fmt.Errorf("must be one of %s", strings.Join(c.choices, ", "))
}
