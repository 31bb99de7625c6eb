package command

import (
	"io"
	"log/slog"
)

// newLogger builds the process logger: text for people at a terminal, JSON
// for log shippers.
func newLogger(w io.Writer, level slog.Level, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
