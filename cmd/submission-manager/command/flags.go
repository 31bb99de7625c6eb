package command

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
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
// whose usage shows every flag's environment variable: every flag of the
// commands built with it (serve, migrate) also reads one.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	return newCommandFlagSet(synopsis, "", stderr, func(string) bool { return true })
}

// newCommandFlagSet returns a flag set for `submission-manager synopsis`
// whose usage prints about (when given) and lists the flags in the one
// style of every command: the flag, its environment variable when fromEnv
// says it reads one, its default, and what it means.
func newCommandFlagSet(synopsis, about string, stderr io.Writer, fromEnv func(name string) bool) *flag.FlagSet {
	name, _, _ := strings.Cut(synopsis, " [")
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: submission-manager %s\n\n", synopsis)
		if about != "" {
			fmt.Fprintf(stderr, "%s\n\n", strings.TrimSpace(about))
		}
		fmt.Fprintln(stderr, "flags (with its environment variable where it reads one):")
		fs.VisitAll(func(f *flag.Flag) {
			flagName := "--" + f.Name
			if fromEnv(f.Name) {
				flagName += ", " + EnvName(f.Name)
			}
			def := ""
			if f.DefValue != "" && f.DefValue != "false" {
				def = fmt.Sprintf(" (default %s)", f.DefValue)
			}
			fmt.Fprintf(stderr, "  %s%s\n      %s\n", flagName, def, f.Usage)
		})
	}
	return fs
}

// parseFlags parses args, then gives every flag the command line left unset
// the value of its environment variable. Flags win over the environment. A
// bad value names both the variable and the flag it stands for. Errors are
// usage errors (exit 2); those of the command line itself are printed here,
// naming the flag as it is typed (--name), followed by the usage.
func parseFlags(fs *flag.FlagSet, args []string, env LookupEnv) error {
	if err := parseQuietly(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.Usage()
			return err
		}
		fmt.Fprintln(fs.Output(), flagErrorText(err))
		fs.Usage()
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

// parseQuietly parses args without letting the flag package print: it
// names flags with one dash, where this command documents two.
func parseQuietly(fs *flag.FlagSet, args []string) error {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	defer func() { fs.Usage = usage; fs.SetOutput(out) }()
	return fs.Parse(args)
}

// flagErrorText rewrites the flag package's messages to name flags as
// users type them.
func flagErrorText(err error) string {
	text := strings.Replace(err.Error(), "for flag -", "for -", 1)
	return flagNameInError.ReplaceAllString(text, "$1--$2")
}

// flagNameInError finds the flag the flag package names: "-name" after
// "for " or ": ".
var flagNameInError = regexp.MustCompile(`(for |: )-([A-Za-z0-9][\w-]*)`)

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

// instantFlag is a point in time given as RFC 3339 or as a Go duration
// meaning that long before now ("90m" is an hour and a half ago), which is
// what an operator searching recent intents types.
type instantFlag struct {
	value time.Time
	now   func() time.Time
}

func (f *instantFlag) String() string {
	if f.value.IsZero() {
		return ""
	}
	return f.value.Format(time.RFC3339Nano)
}

func (f *instantFlag) Set(s string) error {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		f.value = t
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("want an RFC 3339 time (2026-02-02T15:04:05Z) or how long ago (90m, 24h)")
	}
	f.value = f.now().Add(-d)
	return nil
}
