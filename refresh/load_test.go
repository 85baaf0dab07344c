package refresh

import (
	"strings"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
)

func TestCopyQuery_SelectsColumnsAndFilters(t *testing.T) {
	all := []accelerator.ColumnSpec{
		{Name: "id", TypeOID: 23, TypeMod: -1},
		{Name: "Kind", TypeOID: 25, TypeMod: -1},
		{Name: "at", TypeOID: 1184, TypeMod: -1},
		{Name: "p", TypeOID: 600, TypeMod: -1},
	}
	ds := func(refreshSQL, timeColumn, timeFormat string, window time.Duration) *catalog.Dataset {
		return &catalog.Dataset{Schema: "public", Table: "t", Name: "t", TimeColumn: timeColumn, TimeFormat: timeFormat,
			Acceleration: catalog.Acceleration{RefreshSQL: refreshSQL, RefreshDataWindow: window}}
	}
	tests := []struct {
		name    string
		ds      *catalog.Dataset
		cols    string
		query   string
		wantErr string
	}{
		{"all columns, unsupported as NULL", ds("", "", "", 0), "id,Kind,at,p",
			`COPY (SELECT "id", "Kind", "at", NULL FROM "public"."t") TO STDOUT (FORMAT binary)`, ""},
		{"refresh_sql columns and where", ds(`SELECT id, "Kind" FROM t WHERE id > 10`, "", "", 0), "id,Kind",
			`COPY (SELECT "id", "Kind" FROM "public"."t" WHERE (id > 10)) TO STDOUT (FORMAT binary)`, ""},
		{"window with refresh_sql", ds(`SELECT * FROM t WHERE id > 10`, "at", "", time.Hour), "id,Kind,at,p",
			`COPY (SELECT "id", "Kind", "at", NULL FROM "public"."t" WHERE (id > 10) AND "at" > (now() - interval '3600000000 microseconds')) TO STDOUT (FORMAT binary)`, ""},
		{"window in unix seconds", ds("", "id", catalog.TimeFormatUnixSeconds, time.Second), "id,Kind,at,p",
			`COPY (SELECT "id", "Kind", "at", NULL FROM "public"."t" WHERE "id" > extract(epoch from (now() - interval '1000000 microseconds'))) TO STDOUT (FORMAT binary)`, ""},
		{"unknown column", ds(`SELECT id, nope FROM t`, "", "", 0), "", "", `selects column "nope"`},
		{"window without time_column", ds("", "", "", time.Hour), "", "", "needs time_column"},
	}
	for _, tt := range tests {
		cols, q, err := copyQuery(tt.ds, all)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		var names []string
		for _, c := range cols {
			names = append(names, c.Name)
		}
		if got := strings.Join(names, ","); got != tt.cols {
			t.Errorf("%s: columns %s, want %s", tt.name, got, tt.cols)
		}
		if q != tt.query {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, q, tt.query)
		}
	}
}

func TestScrubber_RemovesThePassword(t *testing.T) {
	sc := newScrubber("postgres://app:hunter2@db:5432/x")
	if got := sc.text(errorString("auth failed for app:hunter2")); strings.Contains(got, "hunter2") {
		t.Errorf("scrubbed text still has the password: %s", got)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
