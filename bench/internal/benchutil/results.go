package benchutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// findSection finds the section headed heading in text: start is where
// its heading line begins, -1 when text has none, and end where the next
// "## " heading begins, or len(text). The heading counts only as a whole
// line, not where it is quoted within one.
func findSection(text, heading string) (start, end int) {
	// In the padded text the "\n" before the heading is at the heading's
	// own offset in text.
	start = strings.Index("\n"+text+"\n", "\n"+heading+"\n")
	if start < 0 {
		return -1, -1
	}
	after := start + len(heading)
	end = len(text)
	if i := strings.Index(text[after:], "\n## "); i >= 0 {
		end = after + i + 1
	}
	return start, end
}

// AppendToSection adds md to the file at path under heading: at the end
// of that section if the file has it, else in a new section at the end of
// the file (created if missing). md is what goes under the heading; other
// sections are kept as they are.
func AppendToSection(path, heading, md string) error {
	text, err := readResults(path)
	if err != nil {
		return err
	}
	var out string
	start, end := findSection(text, heading)
	if start < 0 {
		if text != "" && !strings.HasSuffix(text, "\n\n") {
			text = strings.TrimRight(text, "\n") + "\n\n"
		}
		out = text + heading + "\n\n" + md
	} else {
		out = strings.TrimRight(text[:end], "\n") + "\n\n" + md
		if end < len(text) {
			out = strings.TrimRight(out, "\n") + "\n\n" + text[end:]
		}
	}
	return writeResults(path, out)
}

// ReplaceSection writes md to the file at path in place of the section
// headed heading (up to the next "## " heading) if the file has it, else
// at the end of the file (created if missing). md is the whole section,
// its heading line included; other sections are kept as they are.
func ReplaceSection(path, heading, md string) error {
	text, err := readResults(path)
	if err != nil {
		return err
	}
	var out string
	start, end := findSection(text, heading)
	switch {
	case start < 0 && strings.TrimSpace(text) == "":
		out = md
	case start < 0:
		out = strings.TrimRight(text, "\n") + "\n\n" + md
	default:
		out = text[:start] + strings.TrimRight(md, "\n") + "\n"
		if end < len(text) {
			out += "\n" + text[end:]
		}
	}
	return writeResults(path, out)
}

// readResults is the file's text, "" when it does not exist.
func readResults(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return string(b), nil
}

func writeResults(path, text string) error {
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
