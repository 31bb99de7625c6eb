package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// page is what every template gets; each page fills its own part.
type page struct {
	Title   string
	Error   string
	Notice  string
	Session session
	// Filled by render.
	CSRF     string
	Open     bool
	Operator bool
	Data     any
}

// pageNames are the templates, each rendered inside layout.html.
var pageNames = []string{"overview", "intents", "intent", "bulk", "signin", "error"}

// whenLayout is how the console writes every time: UTC, to the
// millisecond.
const whenLayout = "2006-01-02 15:04:05.000Z"

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format(whenLayout)
	},
	"dur": func(d time.Duration) string {
		switch {
		case d <= 0:
			return "0"
		case d < time.Millisecond:
			return d.String()
		default:
			return d.Round(time.Millisecond).String()
		}
	},
	"since": func(a, b time.Time) string {
		if a.IsZero() || b.IsZero() {
			return "—"
		}
		return b.Sub(a).Round(time.Millisecond).String()
	},
	// intentPath is the console path of an intent, percent-encoded so an
	// intentId is always one path value.
	"intentPath": func(id string) string { return "/ui/intents/" + url.PathEscape(id) },
	"jsonText": func(v any) string {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	},
}

func parsePages() (map[string]*template.Template, error) {
	pages := make(map[string]*template.Template, len(pageNames))
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// render writes a page, buffered so that a template error never sends half
// a page with a 200.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	p.Open = c.open()
	p.Operator = p.Session.Operator
	if p.Session.Nonce != "" {
		p.CSRF = p.Session.csrfToken()
	}
	var buf bytes.Buffer
	if err := c.pages[name].Execute(&buf, p); err != nil {
		c.log.Error("console: rendering a page failed", "page", name, "error", err)
		http.Error(w, "the console failed to render this page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// failure renders an error page for a failed port call.
func (c *Console) failure(w http.ResponseWriter, r *http.Request, ss session, what string, err error) {
	status := http.StatusInternalServerError
	msg := what + ": " + err.Error()
	if errors.Is(err, core.ErrStoreUnavailable) {
		status = http.StatusServiceUnavailable
	}
	c.log.Warn("console: "+what, "error", err)
	c.render(w, r, status, "error", page{Title: "Error", Error: msg, Session: ss})
}
