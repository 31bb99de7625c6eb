package console_test

import (
	"encoding/base64"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestIntentsPageWithTheSharedCursor pages the list with the cursor the
// console issues, and refuses, naming the field, a cursor it did not issue,
// one naming a time no store can hold included.
func TestIntentsPageWithTheSharedCursor(t *testing.T) {
	b, svc, _ := newConsole(t, nil)
	for i := range 30 { // more than one page of 25
		svc.create(t, fmt.Sprintf("i-%02d", i))
	}
	code, _, first := b.do("GET", "/ui/intents", nil)
	next := regexp.MustCompile(`href="(/ui/intents\?[^"]*cursor=[^"]*)"`).FindStringSubmatch(first)
	if code != http.StatusOK || next == nil {
		t.Fatalf("first page: %d, next link %v", code, next)
	}
	code, _, second := b.do("GET", html.UnescapeString(next[1]), nil)
	if code != http.StatusOK || !strings.Contains(second, `id="first"`) {
		t.Fatalf("second page through the issued cursor: %d", code)
	}
	forged := base64.RawURLEncoding.EncodeToString([]byte(`{"c":"9999-01-01T00:00:00Z","i":"a"}`))
	for _, cursor := range []string{"!!", "bm90IGEgY3Vyc29y", forged} {
		code, _, page := b.do("GET", "/ui/intents?"+url.Values{"cursor": {cursor}}.Encode(), nil)
		if code != http.StatusBadRequest || !strings.Contains(page, "cursor: ") {
			t.Errorf("cursor %q: %d, want 400 naming the cursor", cursor, code)
		}
	}
}
