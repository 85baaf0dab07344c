package refresh

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// A table whose primary key is one column of an indexable type gets a
// DuckDB index on it at every full load; composite keys, keys of other
// types and tables without a key get none. Point reads by the key answer
// from the index.
func TestLoad_IndexesASingleColumnPrimaryKey(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS ix_single, ix_composite, ix_numeric, ix_none, ix_text, ix_unique;
		CREATE TABLE ix_single (id bigint PRIMARY KEY, v text);
		INSERT INTO ix_single SELECT g, 'v' || g FROM generate_series(1, 20000) g ORDER BY random();
		CREATE TABLE ix_composite (a int, b int, v text, PRIMARY KEY (a, b));
		INSERT INTO ix_composite SELECT g, 1, 'v' FROM generate_series(1, 100) g;
		CREATE TABLE ix_numeric (k numeric(10,2) PRIMARY KEY, v text);
		INSERT INTO ix_numeric VALUES (1.50, 'a');
		CREATE TABLE ix_none (id int, v text);
		INSERT INTO ix_none VALUES (1, 'a');
		CREATE TABLE ix_text (code varchar(10) PRIMARY KEY, v text);
		INSERT INTO ix_text VALUES ('x1', 'a'), ('x2', 'b');
		CREATE TABLE ix_unique (id int, email text UNIQUE, v text);
		CREATE UNIQUE INDEX ix_unique_v ON ix_unique (lower(v));
		INSERT INTO ix_unique VALUES (1, 'a@x', 'a');`)
	tables := []string{"ix_single", "ix_composite", "ix_numeric", "ix_none", "ix_text", "ix_unique"}
	var yaml strings.Builder
	for _, tbl := range tables {
		yaml.WriteString(dataset(tbl, "memory", ""))
	}
	cfg := parseConfig(t, "", t.TempDir(), yaml.String())
	h := newHarness(t, cfg)
	ctx := context.Background()
	indexed := func() []string {
		return duckRows(t, h, "SELECT table_name, expressions FROM duckdb_indexes() WHERE index_name = '_pgaccel_key' ORDER BY table_name")
	}
	for round := 1; round <= 2; round++ { // the second full load replaces a table that has the index
		for _, tbl := range tables {
			if err := h.run.Refresh(ctx, tbl); err != nil {
				t.Fatalf("round %d, %s: %v", round, tbl, err)
			}
		}
		got := strings.Join(indexed(), "; ")
		if want := "ix_single [id]; ix_text [code]"; got != want {
			t.Fatalf("round %d: indexes %q, want %q", round, got, want)
		}
	}
	// A one-column unique index marks its column (for routing), without a
	// DuckDB index; an expression index marks nothing.
	var unique []string
	for _, c := range h.state(t, "ix_unique").Columns {
		if c.Unique || c.KeyPart > 0 {
			unique = append(unique, c.Name)
		}
	}
	if got := strings.Join(unique, ","); got != "email" {
		t.Errorf("ix_unique: unique columns %q, want email", got)
	}
	var parts []string
	for _, c := range h.state(t, "ix_composite").Columns {
		parts = append(parts, fmt.Sprintf("%s:%d", c.Name, c.KeyPart))
	}
	if got := strings.Join(parts, ","); got != "a:1,b:2,v:0" {
		t.Errorf("ix_composite: key parts %q, want a:1,b:2,v:0", got)
	}
	if got := duckRows(t, h, "SELECT v FROM "+h.eng.TableRef("ix_single")+" WHERE id = 12345"); len(got) != 1 || got[0] != "v12345" {
		t.Errorf("point read by key = %v", got)
	}
	originExec(t, "ALTER TABLE ix_single DROP CONSTRAINT ix_single_pkey")
	if err := h.run.Refresh(ctx, "ix_single"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(indexed(), "; "); got != "ix_text [code]" {
		t.Errorf("after the origin dropped the key: indexes %q, want only ix_text's", got)
	}
}
