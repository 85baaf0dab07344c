package benchutil

import (
	"os"
	"path/filepath"
	"testing"
)

// run writes before to a results file (none when before is ""), calls
// write on it and returns what the file then holds.
func run(t *testing.T, before string, write func(path string) error) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "RESULTS.md")
	if before != "" {
		if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := write(path); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

func TestAppendToSection_KeepsOtherSections(t *testing.T) {
	const heading = "## TPC-H (accelerated reads)"
	tests := []struct {
		name, before, want string
	}{
		{"missing file", "", heading + "\n\n### new\n"},
		{"no section yet", "# Results\n\n## Pass-through (pgbench)\n\nx\n",
			"# Results\n\n## Pass-through (pgbench)\n\nx\n\n" + heading + "\n\n### new\n"},
		{"section last", heading + "\n\n### old\n",
			heading + "\n\n### old\n\n### new\n"},
		{"section in the middle", "## A\n\na\n\n" + heading + "\n\n### old\n\n## B\n\nb\n",
			"## A\n\na\n\n" + heading + "\n\n### old\n\n### new\n\n## B\n\nb\n"},
		{"heading last without a newline", "## A\n\na\n\n" + heading,
			"## A\n\na\n\n" + heading + "\n\n### new\n"},
		// The first occurrence of the heading is quoted within a line;
		// the section is the one whose heading starts a line.
		{"heading quoted before the section", "## A\n\nsee " + heading + "\n\n" + heading + "\n\n### old\n\n## B\n\nb\n",
			"## A\n\nsee " + heading + "\n\n" + heading + "\n\n### old\n\n### new\n\n## B\n\nb\n"},
		{"heading only quoted", "## A\n\nsee " + heading + "\n",
			"## A\n\nsee " + heading + "\n\n" + heading + "\n\n### new\n"},
		{"a longer heading is another section", heading + " at SF10\n\n### old\n",
			heading + " at SF10\n\n### old\n\n" + heading + "\n\n### new\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, tt.before, func(path string) error { return AppendToSection(path, heading, "### new\n") })
			if got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// Two runs appended one after the other land under the one section.
func TestAppendToSection_Twice(t *testing.T) {
	const heading = "## Change data capture (refresh_mode: changes)"
	got := run(t, "## TPC-H (accelerated reads)\n\nold\n", func(path string) error {
		if err := AppendToSection(path, heading, "### run 1\n"); err != nil {
			return err
		}
		return AppendToSection(path, heading, "### run 2\n")
	})
	want := "## TPC-H (accelerated reads)\n\nold\n\n" + heading + "\n\n### run 1\n\n### run 2\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestReplaceSection_KeepsOtherSections(t *testing.T) {
	const (
		heading = "## Pass-through (pgbench)"
		other   = "## Pass-through with one accelerated dataset (pgbench)"
		md      = heading + "\n\nnew run\n"
	)
	tests := []struct {
		name, before, want string
	}{
		{name: "no file", before: "", want: md},
		{name: "appended after other sections",
			before: "# Results\n\n## TPC-H\n\ntpch run\n",
			want:   "# Results\n\n## TPC-H\n\ntpch run\n\n" + md},
		{name: "replaces its own section in the middle",
			before: "## TPC-H\n\ntpch\n\n" + heading + "\n\nold run\n\n## Other\n\nother\n",
			want:   "## TPC-H\n\ntpch\n\n" + md + "\n## Other\n\nother\n"},
		{name: "replaces its own section at the end",
			before: "## TPC-H\n\ntpch\n\n" + heading + "\n\nold run\n",
			want:   "## TPC-H\n\ntpch\n\n" + md},
		{name: "a section whose heading starts the same is another section",
			before: heading + "\n\nold run\n\n" + other + "\n\ndataset run\n",
			want:   md + "\n" + other + "\n\ndataset run\n"},
		{name: "heading only counts at a line start",
			before: "see " + heading + "\n",
			want:   "see " + heading + "\n\n" + md},
		{name: "the section after a quoted heading is replaced",
			before: "see " + heading + "\n\n" + heading + "\n\nold run\n",
			want:   "see " + heading + "\n\n" + md},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := run(t, tt.before, func(path string) error { return ReplaceSection(path, heading, md) })
			if got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
