package catalog

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

func TestFallbackFilter_InvertsEachRetentionPolicy(t *testing.T) {
	cols := []ColumnInfo{{Name: "at", TypeOID: pgtype.TimestamptzOID, TypeName: "timestamp with time zone"}, {Name: "ts", TypeOID: pgtype.Int8OID, TypeName: "bigint"}, {Name: "s", TypeOID: 600, TypeName: "point"}}
	ds := func(tc, tf string, period time.Duration, sql string) *Dataset {
		return &Dataset{Schema: "public", Table: "t", Name: "t", TimeColumn: tc, TimeFormat: tf,
			Acceleration: Acceleration{RetentionPeriod: period, RetentionSQL: sql}}
	}
	tests := []struct {
		ds   *Dataset
		want string
		err  string
	}{
		{ds("", "", 0, ""), "", ""},
		{ds("", "", 0, "DELETE FROM t WHERE status = 'x'"), `(NOT (status = 'x') OR (status = 'x') IS NULL)`, ""},
		{ds("at", "", time.Hour, ""), `("at" >= (now() - interval '3600000000 microseconds') OR "at" IS NULL)`, ""},
		{ds("ts", "", time.Second, ""), `("ts" >= extract(epoch from (now() - interval '1000000 microseconds')) OR "ts" IS NULL)`, ""},
		{ds("ts", TimeFormatUnixMillis, time.Second, ""), `("ts" >= extract(epoch from (now() - interval '1000000 microseconds')) * 1000 OR "ts" IS NULL)`, ""},
		{ds("at", "", time.Hour, "DELETE FROM t WHERE d"), `("at" >= (now() - interval '3600000000 microseconds') OR "at" IS NULL) AND (NOT (d) OR (d) IS NULL)`, ""},
		{ds("", "", time.Hour, ""), "", "without time_column"},
		{ds("nope", "", time.Hour, ""), "", `"nope" is not a column`},
		{ds("s", "", time.Hour, ""), "", "is not a time"},
	}
	for _, tt := range tests {
		got, err := tt.ds.FallbackFilter(cols)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%+v: err %v, want %q", tt.ds.Acceleration, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s/%v/%q: got %q, %v\nwant %q", tt.ds.TimeColumn, tt.ds.Acceleration.RetentionPeriod, tt.ds.Acceleration.RetentionSQL, got, err, tt.want)
		}
	}
}

func TestParse_LastModifiedIsAnObjectStoreFeature(t *testing.T) {
	_, err := Parse([]byte("origin:\n  dsn: host=x\ndatasets:\n  - from: postgres:public.t\n    time_column: last_modified\n    acceleration:\n      refresh_mode: append\n"), "f.yaml")
	if err == nil || !strings.Contains(err.Error(), "time_column: last_modified is an object-store feature") {
		t.Fatalf("err = %v", err)
	}
}
