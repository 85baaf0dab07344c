package snapshot

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/integration/tcprelay"
)

// expiring is a context that ends as its deadline would, when expire is
// called: a client that timed out, at the moment the test chooses.
type expiring struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newExpiring() *expiring {
	return &expiring{Context: context.Background(), done: make(chan struct{})}
}

func (e *expiring) expire()                     { e.once.Do(func() { close(e.done) }) }
func (e *expiring) Done() <-chan struct{}       { return e.done }
func (e *expiring) Deadline() (time.Time, bool) { return time.Time{}, false }
func (e *expiring) Value(key any) any           { return e.Context.Value(key) }
func (e *expiring) String() string              { return "expiring" }
func (e *expiring) Err() error {
	select {
	case <-e.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// checkServed checks what a reader finds at st after a publish: the
// current snapshot of dataset is want and downloads whole, the snapshots
// listed download, and the objects of gone (dropped from the list) are
// deleted.
func checkServed(t *testing.T, st Store, dataset string, want Snapshot, gone ...Snapshot) {
	t.Helper()
	ctx := context.Background()
	m, _, err := Read(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	cur, ok := m.Current(dataset)
	if !ok || cur.ID != want.ID {
		t.Fatalf("the current snapshot is %q, want %s", cur.ID, want.ID)
	}
	for _, s := range m.Datasets[dataset].Snapshots {
		if err := Fetch(ctx, st, s, filepath.Join(t.TempDir(), "r.duckdb")); err != nil {
			t.Errorf("a reader cannot load snapshot %s, which the metadata lists: %v", s.ID, err)
		}
	}
	for _, s := range gone {
		if err := Fetch(ctx, st, s, filepath.Join(t.TempDir(), "g.duckdb")); !errors.Is(err, ErrNotFound) {
			t.Errorf("snapshot %s, dropped from the list, still downloads: %v", s.ID, err)
		}
	}
}

// A metadata write whose answer never arrives has an unknown outcome: the
// tcprelay lets the request through (the server applies it) and holds the
// response; the client is cancelled, times out, or loses the connection.
// Publish reads the metadata again, finds its snapshot there and keeps
// the object (it used to delete it, leaving the current snapshot naming a
// missing object); the next reader loads it. The snapshot the write
// dropped from the list is deleted, the listed ones stay.
func TestPublish_UnknownOutcomeOfTheMetadataWrite(t *testing.T) {
	old := keepSnapshots
	keepSnapshots = 2
	defer func() { keepSnapshots = old }()
	direct := stores(t)["s3"].(*s3Store)
	u, err := url.Parse(s3Server.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	relay, err := tcprelay.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	ctx := context.Background()
	st, err := Open(ctx, "s3://"+direct.loc.Bucket+"/"+direct.loc.Prefix, map[string]string{
		ParamEndpoint: "http://" + relay.Addr(), ParamRegion: s3Server.Region, ParamKey: s3Server.AccessKey, ParamSecret: s3Server.SecretKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	metaPut := []byte("PUT /" + direct.loc.Bucket + "/" + direct.loc.key(MetadataKey))
	src := filepath.Join(t.TempDir(), "s.duckdb")
	writeRandom(t, src, 50000)
	var all []Snapshot
	for range 2 {
		s, err := Publish(ctx, st, src, Snapshot{Dataset: "u"})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, s)
	}
	for _, tc := range []struct {
		name string
		// end ends the client's wait for the held answer.
		end func(cancel context.CancelFunc, exp *expiring)
	}{
		{"cancelled", func(cancel context.CancelFunc, _ *expiring) { cancel() }},
		{"timed out", func(_ context.CancelFunc, exp *expiring) { exp.expire() }},
		{"connection lost", func(context.CancelFunc, *expiring) { relay.Release() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exp := newExpiring()
			pctx, cancel := context.WithCancel(exp)
			defer cancel()
			relay.HoldResponseTo(metaPut)
			type result struct {
				s   Snapshot
				err error
			}
			done := make(chan result, 1)
			go func() {
				s, err := Publish(pctx, st, src, Snapshot{Dataset: "u"})
				done <- result{s, err}
			}()
			select {
			case <-relay.Stalled():
			case r := <-done:
				t.Fatalf("the publish ended before its metadata write was held: %+v", r)
			case <-time.After(time.Minute):
				t.Fatal("the metadata write was never held")
			}
			// The server has answered: the write is applied.
			m, _, err := Read(ctx, direct, "")
			if err != nil {
				t.Fatal(err)
			}
			applied, _ := m.Current("u")
			tc.end(cancel, exp)
			r := <-done
			relay.Release()
			if r.err != nil {
				t.Fatalf("publish: %v", r.err)
			}
			if r.s.ID != applied.ID {
				t.Fatalf("published %s, the metadata names %s", r.s.ID, applied.ID)
			}
			checkServed(t, direct, "u", r.s, all[len(all)-2])
			all = append(all, r.s)
		})
	}

	// The metadata cannot be read again either (every answer is held):
	// the outcome stays unknown, and nothing is deleted, neither the new
	// object nor the one the write dropped. The metadata names it: the
	// next reader loads it.
	t.Run("not found out", func(t *testing.T) {
		oldResolve := resolveTimeout
		resolveTimeout = time.Second
		defer func() { resolveTimeout = oldResolve }()
		pctx, cancel := context.WithCancel(ctx)
		defer cancel()
		relay.HoldResponseTo(metaPut)
		done := make(chan error, 1)
		go func() {
			_, err := Publish(pctx, st, src, Snapshot{Dataset: "u"})
			done <- err
		}()
		select {
		case <-relay.Stalled():
		case <-time.After(time.Minute):
			t.Fatal("the metadata write was never held")
		}
		relay.StallDownAfter(0)
		defer relay.Release()
		cancel()
		var err error
		select {
		case err = <-done:
		case <-time.After(time.Minute):
			t.Fatal("the publish hangs once its context ended")
		}
		relay.Release()
		if !errors.Is(err, ErrOutcomeUnknown) || !strings.Contains(err.Error(), "is kept") {
			t.Fatalf("publish: %v, want an unknown outcome", err)
		}
		m, _, rerr := Read(ctx, direct, "")
		if rerr != nil {
			t.Fatal(rerr)
		}
		cur, _ := m.Current("u")
		checkServed(t, direct, "u", cur)
		if err := Fetch(ctx, direct, all[len(all)-2], filepath.Join(t.TempDir(), "kept.duckdb")); err != nil {
			t.Errorf("the object of the snapshot the unsettled write dropped was deleted: %v", err)
		}
	})
}

// On a file:// location, a failure after the metadata's rename (the
// directory sync) leaves the new metadata in place: Publish finds its
// snapshot there and keeps the object.
func TestPublish_FileMetadataFailingAfterTheRename(t *testing.T) {
	st := stores(t)["file"]
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "s.duckdb")
	writeRandom(t, src, 1000)
	if _, err := Publish(ctx, st, src, Snapshot{Dataset: "f"}); err != nil {
		t.Fatal(err)
	}
	failed := false
	dirSync = func(dir string) error {
		if !failed {
			failed = true
			return errors.New("sync: input/output error")
		}
		return syncDir(dir)
	}
	defer func() { dirSync = syncDir }()
	s, err := Publish(ctx, st, src, Snapshot{Dataset: "f"})
	if err != nil || !failed {
		t.Fatalf("publish: %v (the sync failed: %v)", err, failed)
	}
	checkServed(t, st, "f", s)
}

// unsure is a real store whose metadata writes fail with an unknown
// outcome, applied or not, as write decides; the test's hook runs first.
type unsure struct {
	Store
	fail  int  // writes still to fail
	apply bool // whether a failing write is applied all the same
	hook  func()
}

func (u *unsure) WriteMeta(ctx context.Context, data []byte, ifMatch string) (string, error) {
	if u.fail == 0 {
		return u.Store.WriteMeta(ctx, data, ifMatch)
	}
	u.fail--
	if u.hook != nil {
		u.hook()
	}
	if u.apply {
		if _, err := u.Store.WriteMeta(ctx, data, ifMatch); err != nil {
			return "", err
		}
	}
	return "", storeErr("write", MetadataKey, unknownOutcome(errors.New("i/o timeout")))
}

// What Publish makes of a metadata write of unknown outcome, by what the
// metadata says when it reads it again: its snapshot there is published;
// the metadata unchanged since (the write may still land) keeps the object
// and says the outcome is unknown; the metadata moved on by another writer
// (the write can never land) deletes the object; with time left, the
// write is made again.
func TestPublish_SettlesAnUnknownOutcome(t *testing.T) {
	for _, tc := range []struct {
		name         string
		fail         int
		apply, other bool // the write is applied; another writer moves the metadata on
		endCtx       bool // the publish's context ends in the write
		published    bool // Publish succeeds
		unknown      bool // its error is ErrOutcomeUnknown
		kept         bool // the new object is kept
	}{
		{name: "applied, the context ended", fail: 1, apply: true, endCtx: true, published: true, kept: true},
		{name: "not applied, nothing changed since", fail: 1, endCtx: true, unknown: true, kept: true},
		{name: "not applied, another writer since", fail: 1, other: true, endCtx: true},
		{name: "not applied, time to write again", fail: 1, published: true, kept: true},
		{name: "not applied, another writer since, time to write again", fail: 1, other: true, published: true, kept: true},
		{name: "never settled", fail: maxUnknown + 1, unknown: true, kept: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			file, err := NewFile(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(t.TempDir(), "s.duckdb")
			writeRandom(t, src, 1000)
			first, err := Publish(ctx, file, src, Snapshot{Dataset: "a"})
			if err != nil {
				t.Fatal(err)
			}
			st := &unsure{Store: file, fail: tc.fail, apply: tc.apply}
			st.hook = func() {
				if tc.other {
					tc.other = false
					if _, err := Publish(context.Background(), file, src, Snapshot{Dataset: "b"}); err != nil {
						t.Error(err)
					}
				}
				if tc.endCtx {
					cancel()
				}
			}
			s, err := Publish(ctx, st, src, Snapshot{Dataset: "a"})
			if tc.published != (err == nil) || tc.unknown != errors.Is(err, ErrOutcomeUnknown) {
				t.Fatalf("publish: %v", err)
			}
			if err == nil {
				checkServed(t, file, "a", s)
				return
			}
			m, _, _ := Read(context.Background(), file, "")
			if cur, _ := m.Current("a"); cur.ID != first.ID {
				t.Fatalf("the current snapshot is %s, want %s", cur.ID, first.ID)
			}
			objs, _ := filepath.Glob(filepath.Join(file.(*fileStore).dir, "month=*", "day=*", "dataset=a", "*.duckdb"))
			if tc.kept != (len(objs) == 2) {
				t.Fatalf("objects of a: %v (kept: %v)", objs, tc.kept)
			}
		})
	}
}
