package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
)

// load loads the origin's public.snap_o (id int, s text) into ds.
func load(t *testing.T, e *accelerator.Engine, ds *catalog.Dataset) {
	t.Helper()
	ctx := context.Background()
	c, err := pgconn.Connect(ctx, pg.SuperDSN())
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	go func() {
		defer c.Close(context.Background())
		_, err := c.CopyTo(ctx, pw, "COPY (SELECT id, s FROM public.snap_o) TO STDOUT (FORMAT binary)")
		pw.CloseWithError(err)
	}()
	specs := []accelerator.ColumnSpec{
		{Name: "id", TypeOID: 23, TypeMod: -1, TypeName: "integer", BinaryCollation: true},
		{Name: "s", TypeOID: 25, TypeMod: -1, TypeName: "text", BinaryCollation: true},
	}
	if _, err := e.Load(ctx, ds, specs, pr); err != nil {
		t.Fatal(err)
	}
}

func openEngine(t *testing.T) *accelerator.Engine {
	t.Helper()
	e, err := accelerator.Open(accelerator.Options{DataDir: t.TempDir(), Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func count(t *testing.T, e *accelerator.Engine, dataset string) int64 {
	t.Helper()
	r, err := e.Query(context.Background(), "SELECT count(*)::BIGINT FROM "+e.TableRef(dataset))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Next() {
		t.Fatal(r.Err())
	}
	return r.Values()[0].(int64)
}

// A writer's snapshot bootstraps a replica that never reads the origin:
// the same rows and checkpoint; nothing is made when nothing changed; a
// newer refresh makes a newer current snapshot; a snapshot the check
// refuses is not downloaded; a replica that has its file keeps it.
func TestCreateBootstrap(t *testing.T) {
	ctx := context.Background()
	if err := pg.Exec(ctx, `DROP TABLE IF EXISTS snap_o; CREATE TABLE snap_o (id int, s text);
		INSERT INTO snap_o SELECT g, 'row ' || g FROM generate_series(1, 5000) g`); err != nil {
		t.Fatal(err)
	}
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ds := &catalog.Dataset{From: "postgres:public.snap_o", Schema: "public", Table: "snap_o", Name: "snap_o",
				Acceleration: catalog.Acceleration{Enabled: true, Engine: catalog.EngineDuckDB, Mode: catalog.ModeFile, RefreshMode: catalog.RefreshFull}}
			writer := openEngine(t)
			if _, err := writer.Attach(ctx, ds); err != nil {
				t.Fatal(err)
			}
			if _, err := Create(ctx, writer, st, "snap_o", time.Time{}); err == nil {
				t.Fatal("a snapshot of a dataset never loaded was published")
			}
			load(t, writer, ds)
			s1, err := Create(ctx, writer, st, "snap_o", time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if len(s1.Schema) != 2 || s1.Schema[1] != (Column{Name: "s", Type: "text"}) || s1.LastRefresh.IsZero() {
				t.Fatalf("snapshot %+v", s1)
			}
			if again, err := Create(ctx, writer, st, "snap_o", time.Time{}); !errors.Is(err, ErrUnchanged) || again.ID != s1.ID {
				t.Fatalf("a second snapshot without a refresh: %+v, %v", again, err)
			}
			left, _ := filepath.Glob(filepath.Join(filepath.Dir(must(writer.FilePath("snap_o"))), accelerator.SnapshotDir, "*"))
			if len(left) != 0 {
				t.Fatalf("local copies left: %v", left)
			}

			replica := openEngine(t)
			got, ok, err := Bootstrap(ctx, replica, st, "snap_o", nil, false)
			if err != nil || !ok || got.ID != s1.ID {
				t.Fatalf("bootstrap: %+v, %v, %v", got, ok, err)
			}
			info, err := replica.Attach(ctx, ds)
			if err != nil || info == nil || info.Rows != 5000 || !info.LastRefresh.UTC().Equal(s1.LastRefresh) {
				t.Fatalf("attach the bootstrapped file: %+v, %v", info, err)
			}
			if n := count(t, replica, "snap_o"); n != 5000 {
				t.Fatalf("replica count %d", n)
			}
			if _, ok, err := Bootstrap(ctx, replica, st, "snap_o", nil, false); ok || err != nil {
				t.Fatalf("bootstrap over a file in place: %v, %v", ok, err)
			}

			// A newer refresh at the writer: a newer current snapshot.
			if err := pg.Exec(ctx, "INSERT INTO snap_o VALUES (5001, 'new')"); err != nil {
				t.Fatal(err)
			}
			defer pg.Exec(ctx, "DELETE FROM snap_o WHERE id > 5000")
			load(t, writer, ds)
			s2, err := Create(ctx, writer, st, "snap_o", time.Time{})
			if err != nil || s2.ID <= s1.ID {
				t.Fatalf("snapshot after a refresh: %+v, %v", s2, err)
			}
			m, _, _ := Read(ctx, st, "")
			if cur, _ := m.Current("snap_o"); cur.ID != s2.ID {
				t.Fatalf("current %s, want %s", cur.ID, s2.ID)
			}

			// The check refuses it: nothing is downloaded.
			third := openEngine(t)
			refuse := func(s Snapshot) error {
				if len(s.Schema) != 3 {
					return fmt.Errorf("%d columns, the config wants 3", len(s.Schema))
				}
				return nil
			}
			if _, ok, err := Bootstrap(ctx, third, st, "snap_o", refuse, false); ok || err == nil {
				t.Fatalf("a refused snapshot: %v, %v", ok, err)
			}
			if _, err := os.Stat(must(third.FilePath("snap_o"))); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a refused snapshot was downloaded: %v", err)
			}
			// fallback: the one before it serves.
			onlyOld := func(s Snapshot) error {
				if s.ID == s2.ID {
					return errors.New("refused")
				}
				return nil
			}
			if got, ok, err := Bootstrap(ctx, third, st, "snap_o", onlyOld, true); !ok || err == nil || got.ID != s1.ID {
				t.Fatalf("fallback: %+v, %v, %v", got, ok, err)
			}
			if info, err := third.Attach(ctx, ds); err != nil || info == nil || info.Rows != 5000 {
				t.Fatalf("attach the older snapshot: %+v, %v", info, err)
			}
			if _, ok, err := Bootstrap(ctx, third, st, "other", nil, false); ok || err != nil {
				t.Fatalf("a dataset without snapshots: %v, %v", ok, err)
			}
		})
	}
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}
