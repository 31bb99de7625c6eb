package console

import (
	"cmp"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// Defaults of Config.
const (
	DefaultSessionTTL = 8 * time.Hour
	// DefaultBulkLimit bounds one bulk resubmission: an operator acting on
	// a filtered list acts on at most this many intents per confirmation.
	DefaultBulkLimit = 100
	// DefaultPageSize is the intents list's page size.
	DefaultPageSize = 25
)

// Config wires the console to the application.
type Config struct {
	// Service and Operator are the application service (one value
	// implements both). Required.
	Service  ports.IntentService
	Operator ports.OperatorService
	// Leadership reports this instance's role and the lease; nil shows a
	// follower that knows no leader (an API-only instance).
	Leadership ports.LeadershipReporter
	// Gateways reports the gateways' protection state and pauses and
	// resumes them; nil shows that gateway state is not available and no
	// controls.
	Gateways ports.GatewayOperator
	// Activity feeds the overview's rates; nil shows none.
	Activity *Activity
	// Clock stamps and expires sessions. Required.
	Clock    ports.Clock
	HolderID string
	APIOnly  bool
	// OperatorKeys are the keys an operator signs in with. ClientKeys only
	// tell whether any key is configured: with neither kind the console is
	// open to everyone who can reach it (loopback by default), and says so.
	OperatorKeys []string
	ClientKeys   []string
	// Sessions keeps the session secret and the signed-in sessions, shared
	// by every instance. Required.
	Sessions ports.SessionStore
	// Throttle refuses sign-ins from client addresses that presented too
	// many unknown keys; nil throttles nothing.
	Throttle ports.AuthThrottle
	// SessionTTL is how long a sign-in lasts, and the most any session
	// cookie may claim.
	SessionTTL time.Duration
	BulkLimit  int
	PageSize   int
	Logger     *slog.Logger
}

// Console is the /ui/ handler.
type Console struct {
	cfg      Config
	log      *slog.Logger
	sessions *sessions
	keys     core.KeySet
	throttle ports.AuthThrottle
	pages    map[string]*template.Template
	mux      *http.ServeMux
}

// New validates cfg and builds the console.
func New(cfg Config) (*Console, error) {
	var errs []error
	if cfg.Service == nil || cfg.Operator == nil {
		errs = append(errs, errors.New("console: Config.Service and Config.Operator are required"))
	}
	if cfg.Clock == nil {
		errs = append(errs, errors.New("console: Config.Clock is required"))
	}
	if cfg.Sessions == nil {
		errs = append(errs, errors.New("console: Config.Sessions is required"))
	}
	if cfg.SessionTTL < 0 || cfg.BulkLimit < 0 || cfg.PageSize < 0 {
		errs = append(errs, errors.New("console: SessionTTL, BulkLimit and PageSize must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	cfg.SessionTTL = cmp.Or(cfg.SessionTTL, DefaultSessionTTL)
	cfg.BulkLimit = cmp.Or(cfg.BulkLimit, DefaultBulkLimit)
	cfg.PageSize = cmp.Or(cfg.PageSize, DefaultPageSize)
	c := &Console{
		cfg:      cfg,
		log:      cmp.Or(cfg.Logger, slog.Default()),
		sessions: newSessions(cfg.Sessions, cfg.Clock, cfg.SessionTTL),
		keys:     core.NewKeySet(cfg.ClientKeys, cfg.OperatorKeys),
		throttle: cfg.Throttle,
	}
	if c.throttle == nil {
		c.throttle = admitAll{}
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	c.pages = pages
	c.routes()
	return c, nil
}

// routes mounts every page under /ui/.
func (c *Console) routes() {
	static, _ := fs.Sub(staticFiles, "static") // a constant embedded above
	mux := http.NewServeMux()
	mux.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /ui/signin", c.signInPage)
	mux.HandleFunc("POST /ui/signin", c.signIn)
	mux.HandleFunc("POST /ui/signout", c.operator(c.signOut))
	mux.HandleFunc("GET /ui/{$}", c.reader(c.overview))
	mux.HandleFunc("GET /ui/intents", c.reader(c.intents))
	mux.HandleFunc("GET /ui/intents/{id...}", c.reader(c.intent))
	mux.HandleFunc("GET /ui/payloads/{id...}", c.reader(c.payload))
	mux.HandleFunc("POST /ui/resubmit", c.operator(c.resubmit))
	mux.HandleFunc("POST /ui/cancel", c.operator(c.cancel))
	mux.HandleFunc("POST /ui/run-now", c.operator(c.runNow))
	mux.HandleFunc("GET /ui/bulk-resubmit", c.reader(c.bulkConfirm))
	mux.HandleFunc("POST /ui/bulk", c.operator(c.bulk))
	mux.HandleFunc("POST /ui/gateways/{action}", c.operator(c.gatewayAction))
	mux.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		c.render(w, r, http.StatusNotFound, "error", page{Title: "Not found", Error: "No console page at this address."})
	})
	c.mux = mux
}

// ServeHTTP serves the console with headers that keep its pages inert
// outside it: no inline or foreign script, no framing, no caching of data,
// no referrer carrying an intentId elsewhere.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	c.mux.ServeHTTP(w, r)
}

// open reports whether no key of either kind is configured: then the
// console, like the API, is open to everyone who can reach it.
func (c *Console) open() bool { return c.keys.Open() }

// reader wraps a page that reads: it needs a signed-in operator (or the
// open console), and otherwise sends the browser to the sign-in form.
func (c *Console) reader(h func(http.ResponseWriter, *http.Request, session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ss, ok, err := c.session(w, r)
		if err != nil {
			c.failure(w, r, session{}, "checking the session", err)
			return
		}
		if !ok {
			http.Redirect(w, r, "/ui/signin", http.StatusSeeOther)
			return
		}
		h(w, r, ss)
	}
}

// operator wraps a state-changing request: it needs what reader needs plus
// the session's CSRF token in the form.
func (c *Console) operator(h func(http.ResponseWriter, *http.Request, session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// A bulk form names up to BulkLimit intentIds of up to 255
		// characters each, percent-encoded.
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		ss, ok, err := c.session(w, r)
		if err != nil {
			c.failure(w, r, session{}, "checking the session", err)
			return
		}
		if !ok {
			c.render(w, r, http.StatusUnauthorized, "error", page{Title: "Signed out", Error: "Your session has ended; sign in again."})
			return
		}
		if err := ss.checkCSRF(r.PostFormValue("csrf")); err != nil {
			c.log.Debug("console refused a form without a valid CSRF token", "path", r.URL.Path)
			c.render(w, r, http.StatusForbidden, "error", page{Title: "Refused", Error: err.Error(), Session: ss})
			return
		}
		h(w, r, ss)
	}
}

// session returns the request's session when it may use the console. On
// the open console a visitor without one gets a fresh anonymous session,
// which forms need for their CSRF token. err is the store's failure to
// check the session, never a refusal of it.
func (c *Console) session(w http.ResponseWriter, r *http.Request) (session, bool, error) {
	now := c.cfg.Clock.Now()
	ss, err := c.sessions.read(r, now)
	switch {
	case err == nil && (ss.Operator || c.open()):
		return ss, true, nil
	case err != nil && !refused(err):
		return session{}, false, err
	case !c.open():
		return session{}, false, nil
	}
	if ss, err = c.sessions.anonymous(r.Context(), now); err != nil {
		return session{}, false, err
	}
	c.sessions.write(w, r, ss, now)
	return ss, true, nil
}

// admitAll is the throttle of a console configured without one.
type admitAll struct{}

func (admitAll) Admit(ports.AuthClient) time.Duration  { return 0 }
func (admitAll) Failed(ports.AuthClient) time.Duration { return 0 }
