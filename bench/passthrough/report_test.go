package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReport_KeepsOtherSections(t *testing.T) {
	const md = resultsHeading + "\n\nnew run\n"
	tests := []struct {
		name, before, want string
	}{
		{name: "no file", before: "", want: md},
		{name: "appended after other sections",
			before: "# Results\n\n## TPC-H\n\ntpch run\n",
			want:   "# Results\n\n## TPC-H\n\ntpch run\n\n" + md},
		{name: "replaces its own section in the middle",
			before: "## TPC-H\n\ntpch\n\n" + resultsHeading + "\n\nold run\n\n## Other\n\nother\n",
			want:   "## TPC-H\n\ntpch\n\n" + md + "\n## Other\n\nother\n"},
		{name: "replaces its own section at the end",
			before: "## TPC-H\n\ntpch\n\n" + resultsHeading + "\n\nold run\n",
			want:   "## TPC-H\n\ntpch\n\n" + md},
		{name: "the dataset run's section is another section",
			before: resultsHeading + "\n\nold run\n\n" + datasetHeading + "\n\ndataset run\n",
			want:   md + "\n" + datasetHeading + "\n\ndataset run\n"},
		{name: "heading only counts at a line start",
			before: "see " + resultsHeading + "\n",
			want:   "see " + resultsHeading + "\n\n" + md},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "RESULTS.md")
			if tt.before != "" {
				if err := os.WriteFile(path, []byte(tt.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := writeReport(path, resultsHeading, md); err != nil {
				t.Fatalf("writeReport: %v", err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("file =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestMedian_OddAndEven(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
