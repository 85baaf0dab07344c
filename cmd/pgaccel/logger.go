package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// Log formats of -log-format.
const (
	logConsole = "console"
	logJSON    = "json"
)

// logFormatHelp is the help of -log-format.
const logFormatHelp = "log format: console (for people: durations as 21.4s, colour only on a terminal) " +
	"or json (one object a line: time RFC 3339, durations in seconds as numbers)"

// newLogger builds the one logger passed down to every component, writing
// to w at level in format (logConsole or logJSON).
//
// Durations (zerolog's Dur fields) are seconds, as floating-point numbers,
// in JSON ("duration":21.380459829); the console shows them as Go
// durations rounded to three significant digits (duration=21.4s). The
// console colours its output only when w is a terminal.
//
// The duration format is zerolog's process-wide setting, so the last
// logger built decides it; pgaccel builds one per process.
func newLogger(w io.Writer, level, format string) (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Nop(), fmt.Errorf("invalid -log-level %q: use debug, info, warn or error", level)
	}
	switch format {
	case logJSON:
		zerolog.DurationFieldUnit = time.Second
		zerolog.DurationFieldFormat = zerolog.DurationFormatFloat
	case logConsole:
		zerolog.DurationFieldFormat = zerolog.DurationFormatString
		w = zerolog.ConsoleWriter{
			Out:           w,
			NoColor:       !isTerminal(w),
			TimeFormat:    "15:04:05.000",
			FormatPrepare: roundDurations,
		}
	default:
		return zerolog.Nop(), fmt.Errorf("invalid -log-format %q: use console or json", format)
	}
	zerolog.DurationFieldInteger = false
	zerolog.TimeFieldFormat = time.RFC3339Nano
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), nil
}

// isTerminal reports whether w is a terminal (the only place colour codes
// belong; a file or a pipe gets plain text).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// roundDurations is the console's FormatPrepare: every field whose value is
// a Go duration (a Dur field, which the console format writes as
// "21.380459829s") is shown rounded, as humanDuration does.
func roundDurations(evt map[string]any) error {
	for k, v := range evt {
		switch k {
		case zerolog.TimestampFieldName, zerolog.LevelFieldName, zerolog.MessageFieldName, zerolog.CallerFieldName, zerolog.ErrorFieldName:
			continue
		}
		s, ok := v.(string)
		if !ok || s == "0" || s == "" {
			continue
		}
		if d, err := time.ParseDuration(s); err == nil {
			evt[k] = humanDuration(d)
		}
	}
	return nil
}

// humanDuration formats d for a person: three significant digits under a
// minute (21.4s, 350ms, 1.25ms), whole seconds from a minute up (2m5s), and
// no trailing zero units (1m, not 1m0s).
func humanDuration(d time.Duration) string {
	neg := d < 0
	if neg {
		d = -d
	}
	if d >= time.Minute {
		d = d.Round(time.Second)
	} else {
		unit := time.Duration(1)
		for x := d; x >= 1000; x /= 10 {
			unit *= 10
		}
		d = d.Round(unit)
	}
	s := d.String() // 1h0m0s, 1h2m0s, 2m5s, 21.4s
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	if neg {
		s = "-" + s
	}
	return s
}
