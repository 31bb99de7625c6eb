package command

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
)

// DefaultServer is the service the operator commands talk to by default:
// a local instance on the default --listen address.
const DefaultServer = "http://" + DefaultListen

const gatewaysUsage = `usage: submission-manager gateways list|pause|resume [flags] [TYPE|URL]

  list             show every gateway: targets, pause, and on the leader its
                   breaker, calls in flight, limits and recent failures
  pause TYPE|URL   stop calling a gateway type (sms, push) or one gateway URL;
                   stored, so every instance and the next leader honour it
  resume TYPE|URL  lift that pause

Run "submission-manager gateways list -h" for the flags (--url, --api-key,
--json), each also read from its environment variable.
`

// runGateways runs the gateways operator commands through the Go SDK, as any
// client of the HTTP API would.
func runGateways(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprint(stderr, gatewaysUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			return nil
		}
		return &usageError{msg: "gateways needs a subcommand: list, pause or resume"}
	}
	sub, rest := args[0], args[1:]
	fs := newFlagSet("gateways "+sub, "gateways "+sub+" [flags] [TYPE|URL]", stderr)
	server := fs.String("url", DefaultServer, "base URL of a SubmissionManager instance (SUBMISSION_URL)")
	apiKey := fs.String("api-key", "", "API key, when the service requires one")
	asJSON := fs.Bool("json", false, "print the API's JSON answer instead of a table")
	if err := parseFlags(fs, rest, env); err != nil {
		return err
	}
	var opts []client.ClientOption
	if *apiKey != "" {
		opts = append(opts, client.WithAPIKey(*apiKey))
	}
	c, err := client.NewClientWithResponses(strings.TrimRight(*server, "/"), opts...)
	if err != nil {
		return &usageError{msg: fmt.Sprintf("--url: %v", err)}
	}
	switch sub {
	case "list":
		if fs.NArg() != 0 {
			return &usageError{msg: "gateways list takes no arguments"}
		}
		return listGateways(ctx, c, *asJSON, stdout)
	case "pause", "resume":
		if fs.NArg() != 1 {
			return &usageError{msg: fmt.Sprintf("gateways %s takes one gateway type (sms, push) or gateway URL", sub)}
		}
		return switchGateway(ctx, c, sub, fs.Arg(0), *asJSON, stdout)
	default:
		return &usageError{msg: fmt.Sprintf("unknown gateways subcommand %q: want list, pause or resume", sub)}
	}
}

// selectorOf reads TYPE|URL: anything with "://" is a URL.
func selectorOf(arg string) client.GatewaySelector {
	if strings.Contains(arg, "://") {
		return client.GatewaySelector{GatewayUrl: &arg}
	}
	t := client.GatewayType(arg)
	return client.GatewaySelector{GatewayType: &t}
}

func switchGateway(ctx context.Context, c *client.ClientWithResponses, sub, arg string, asJSON bool, stdout io.Writer) error {
	sel := selectorOf(arg)
	if sub == "pause" {
		res, err := c.PauseGatewayWithResponse(ctx, sel)
		if err != nil {
			return err
		}
		if res.JSON200 == nil {
			return apiError("pause "+arg, res.StatusCode(), res.Body)
		}
		if asJSON {
			return printJSON(stdout, res.JSON200)
		}
		fmt.Fprintf(stdout, "paused %s since %s\n", arg, res.JSON200.PausedAt.Format(time.RFC3339))
		return nil
	}
	res, err := c.ResumeGatewayWithResponse(ctx, sel)
	if err != nil {
		return err
	}
	if res.JSON200 == nil {
		return apiError("resume "+arg, res.StatusCode(), res.Body)
	}
	if asJSON {
		return printJSON(stdout, res.JSON200)
	}
	if res.JSON200.WasPaused {
		fmt.Fprintf(stdout, "resumed %s\n", arg)
	} else {
		fmt.Fprintf(stdout, "%s was not paused\n", arg)
	}
	return nil
}

func listGateways(ctx context.Context, c *client.ClientWithResponses, asJSON bool, stdout io.Writer) error {
	res, err := c.ListGatewaysWithResponse(ctx)
	if err != nil {
		return err
	}
	if res.JSON200 == nil {
		return apiError("list gateways", res.StatusCode(), res.Body)
	}
	l := res.JSON200
	if asJSON {
		return printJSON(stdout, l)
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "GATEWAY URL\tTYPE\tPAUSED\tBREAKER\tIN FLIGHT\tLIMITS\tRECENT FAILURES\tTARGETS")
	for _, g := range l.Gateways {
		breaker, inFlight, limits, failures := "-", "-", "-", "-"
		if e := g.Executor; e != nil {
			breaker = "off"
			if e.Breaker != nil {
				breaker = string(*e.Breaker)
				if e.ProbeAt != nil {
					breaker += " (probe " + e.ProbeAt.Format(time.TimeOnly) + ")"
				}
			}
			inFlight = fmt.Sprint(e.InFlight)
			var parts []string
			if e.MaxInFlight != nil {
				parts = append(parts, fmt.Sprintf("max-in-flight=%d", *e.MaxInFlight))
			}
			if e.Rate != nil {
				parts = append(parts, fmt.Sprintf("rate=%g/s burst=%d", *e.Rate, deref(e.Burst)))
			}
			if len(parts) > 0 {
				limits = strings.Join(parts, " ")
			}
			failures = fmt.Sprintf("%d/%d", e.RecentFailures, e.RecentCalls)
		}
		fmt.Fprintf(w, "%s\t%s\t%v\t%s\t%s\t%s\t%s\t%s\n", g.GatewayUrl, g.GatewayType, g.Paused,
			breaker, inFlight, limits, failures, strings.Join(g.Targets, ","))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if !l.Leader {
		fmt.Fprintln(stdout, "(this instance does not lead: breakers and in-flight calls are the leader's; ask it)")
	}
	for _, p := range l.Pauses {
		what := ""
		if p.GatewayType != nil {
			what = "type " + string(*p.GatewayType)
		} else if p.GatewayUrl != nil {
			what = *p.GatewayUrl
		}
		fmt.Fprintf(stdout, "paused: %s since %s\n", what, p.PausedAt.Format(time.RFC3339))
	}
	return nil
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
