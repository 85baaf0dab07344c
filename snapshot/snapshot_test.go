package snapshot

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/pgaccel/pgaccel/integration/s3test"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

var (
	s3Once   sync.Once
	s3Server *s3test.Server
	s3Err    error
)

// stores returns the stores under test: a file:// directory and a bucket
// of a real S3-compatible server (versitygw, started by the harness).
func stores(t *testing.T) map[string]Store {
	t.Helper()
	ctx := context.Background()
	s3Once.Do(func() {
		c, cancel := context.WithTimeout(ctx, 20*time.Minute)
		defer cancel()
		s3Server, s3Err = s3test.Start(c)
	})
	if s3Err != nil {
		t.Fatalf("the S3-compatible test server (versitygw): %v", s3Err)
	}
	file, err := Open(ctx, "file://"+t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	bucket := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(bucket) > 50 {
		bucket = bucket[:50]
	}
	bucket = strings.Trim(bucket, "-") + fmt.Sprint("-", time.Now().UnixNano()%1e6)
	raw := s3.New(s3.Options{Region: s3Server.Region, BaseEndpoint: aws.String(s3Server.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(s3Server.AccessKey, s3Server.SecretKey, "")})
	if _, err := raw.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("create bucket %s: %v\n%s", bucket, err, s3Server.LogTail(2000))
	}
	st, err := Open(ctx, "s3://"+bucket+"/snaps/", map[string]string{
		ParamEndpoint: s3Server.Endpoint, ParamRegion: s3Server.Region, ParamKey: s3Server.AccessKey, ParamSecret: s3Server.SecretKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Store{"file": file, "s3": st}
}

// pg is the harness's origin (create_test.go); the S3 server dies with
// the test process.
var pg *pgtest.Server

func TestMain(m *testing.M) { pgtest.RunMain(m, &pg) }

func writeRandom(t *testing.T, path string, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	_, _ = rand.Read(b)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// A published snapshot is listed as current with its size, checksum,
// schema and source position, and downloads whole; the layout is
// Hive-style; the metadata is read conditionally.
func TestPublishFetch(t *testing.T) {
	ctx := context.Background()
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "orders.duckdb")
			want := writeRandom(t, src, 300<<10)
			schema := []Column{{Name: "id", Type: "INTEGER"}, {Name: "note", Type: "VARCHAR"}}
			refreshed := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
			s, err := Publish(ctx, st, src, Snapshot{Dataset: "orders", Schema: schema, LastRefresh: refreshed})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(s.Object, "month="+s.Created.Format("2006-01")+"/day="+s.Created.Format("2006-01-02")+"/dataset=orders/orders_") ||
				!strings.HasSuffix(s.Object, ".duckdb") {
				t.Errorf("object key %q", s.Object)
			}
			m, etag, err := Read(ctx, st, "")
			if err != nil || etag == "" {
				t.Fatalf("read: %v, etag %q", err, etag)
			}
			cur, ok := m.Current("orders")
			if !ok || cur.ID != s.ID || cur.Size != int64(len(want)) || cur.SHA256 != s.SHA256 || len(cur.Schema) != 2 || !cur.LastRefresh.Equal(refreshed) {
				t.Fatalf("current %+v, published %+v", cur, s)
			}
			if _, _, err := Read(ctx, st, etag); !errors.Is(err, ErrNotModified) {
				t.Errorf("read with the current ETag: %v, want not modified", err)
			}
			dst := filepath.Join(dir, "replica", "orders.duckdb")
			if err := Fetch(ctx, st, cur, dst); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(dst); !bytes.Equal(got, want) {
				t.Fatal("the downloaded file differs")
			}
			// A newer snapshot becomes current; the older stays listed.
			writeRandom(t, src, 1000)
			s2, err := Publish(ctx, st, src, Snapshot{Dataset: "orders", Schema: schema})
			if err != nil {
				t.Fatal(err)
			}
			m, etag2, err := Read(ctx, st, etag)
			if err != nil || etag2 == etag {
				t.Fatalf("read after a publish: %v (etag %q, was %q)", err, etag2, etag)
			}
			if cur, _ := m.Current("orders"); cur.ID != s2.ID || len(m.Datasets["orders"].Snapshots) != 2 {
				t.Fatalf("after a second publish: %+v", m.Datasets["orders"])
			}
			// An empty file is never published.
			if err := os.WriteFile(src, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Publish(ctx, st, src, Snapshot{Dataset: "orders"}); err == nil {
				t.Fatal("an empty file was published")
			}
			if m, _, _ := Read(ctx, st, ""); m.Datasets["orders"].Current != s2.ID {
				t.Fatal("a refused publish changed the metadata")
			}
		})
	}
}

// Writers publishing at once never lose each other's update: every
// snapshot each of them published is in the metadata.
func TestPublish_ConcurrentWritersLoseNothing(t *testing.T) {
	ctx := context.Background()
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			const writers, each = 6, 3
			var wg sync.WaitGroup
			errs := make(chan error, writers*each)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ds := fmt.Sprint("ds", w)
					src := filepath.Join(dir, ds+".duckdb")
					writeRandom(t, src, 4096)
					for range each {
						if _, err := Publish(ctx, st, src, Snapshot{Dataset: ds}); err != nil {
							errs <- err
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			m, _, err := Read(ctx, st, "")
			if err != nil {
				t.Fatal(err)
			}
			for w := range writers {
				ds := m.Datasets[fmt.Sprint("ds", w)]
				if ds == nil || len(ds.Snapshots) != each || ds.Current != ds.Snapshots[each-1].ID {
					t.Errorf("dataset ds%d: %+v, want %d snapshots", w, ds, each)
				}
			}
		})
	}
}

// A download whose bytes are not the published ones is refused, and the
// file in place stays as it was.
func TestFetch_RefusesACorruptObject(t *testing.T) {
	ctx := context.Background()
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "a.duckdb")
			writeRandom(t, src, 10000)
			s, err := Publish(ctx, st, src, Snapshot{Dataset: "a"})
			if err != nil {
				t.Fatal(err)
			}
			// Overwrite the object with other bytes of the same size.
			other := filepath.Join(dir, "other")
			writeRandom(t, other, 10000)
			if _, _, err := st.PutFile(ctx, s.Object, other); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(dir, "in-place.duckdb")
			if err := os.WriteFile(dst, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := Fetch(ctx, st, s, dst); err == nil || !strings.Contains(err.Error(), "SHA-256") {
				t.Fatalf("fetch of a corrupt object: %v", err)
			}
			if got, _ := os.ReadFile(dst); string(got) != "old" {
				t.Fatal("a refused download replaced the file")
			}
			if left, _ := filepath.Glob(dst + ".download-*"); len(left) != 0 {
				t.Fatalf("temporary files left: %v", left)
			}
			s.Object = "month=2000-01/day=2000-01-01/dataset=a/missing.duckdb"
			if err := Fetch(ctx, st, s, dst); !errors.Is(err, ErrNotFound) {
				t.Fatalf("fetch of a missing object: %v", err)
			}
		})
	}
}

// Large files go up in parts (S3 multipart), checksummed as they stream.
func TestPutFile_Multipart(t *testing.T) {
	ctx := context.Background()
	old := multipartPart
	multipartPart = 5 << 20 // S3's smallest part
	defer func() { multipartPart = old }()
	st := stores(t)["s3"]
	dir := t.TempDir()
	src := filepath.Join(dir, "big.duckdb")
	want := writeRandom(t, src, 11<<20+123)
	s, err := Publish(ctx, st, src, Snapshot{Dataset: "big"})
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "back.duckdb")
	if err := Fetch(ctx, st, s, dst); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, want) {
		t.Fatal("the multipart object differs")
	}
}

func TestParseLocation(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Location
		bad  bool
	}{
		{in: "s3://bucket/snaps/", want: Location{Scheme: "s3", Bucket: "bucket", Prefix: "snaps"}},
		{in: "s3://bucket", want: Location{Scheme: "s3", Bucket: "bucket"}},
		{in: "file:///var/snaps", want: Location{Scheme: "file", Dir: "/var/snaps"}},
		{in: "s3:///nobucket", bad: true},
		{in: "gs://b/p", bad: true},
		{in: "/var/snaps", bad: true},
	} {
		got, err := ParseLocation(tc.in)
		if tc.bad != (err != nil) || !tc.bad && got != tc.want {
			t.Errorf("ParseLocation(%q) = %+v, %v", tc.in, got, err)
		}
	}
	if _, err := Open(context.Background(), "s3://b/p", map[string]string{}); err == nil || !strings.Contains(err.Error(), "s3_key") {
		t.Errorf("s3 without credentials: %v", err)
	}
}

// The metadata lists the last keepSnapshots snapshots of a dataset; the
// object of one that drops off the list is deleted, the listed ones stay.
func TestPublish_DeletesSnapshotsDroppedFromTheList(t *testing.T) {
	old := keepSnapshots
	keepSnapshots = 3
	defer func() { keepSnapshots = old }()
	ctx := context.Background()
	for name, st := range stores(t) {
		src := filepath.Join(t.TempDir(), "s.duckdb")
		writeRandom(t, src, 1000)
		var all []Snapshot
		for i := 0; i < 5; i++ {
			s, err := Publish(ctx, st, src, Snapshot{Dataset: "trim"})
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, s)
		}
		m, _, err := Read(ctx, st, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Datasets["trim"].Snapshots; len(got) != 3 || got[0].ID != all[2].ID || m.Datasets["trim"].Current != all[4].ID {
			t.Fatalf("%s: listed %+v", name, got)
		}
		for i, s := range all {
			err := Fetch(ctx, st, s, filepath.Join(t.TempDir(), "x.duckdb"))
			if i < 2 && !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: snapshot %d, dropped from the list, still downloads: %v", name, i, err)
			}
			if i >= 2 && err != nil {
				t.Errorf("%s: listed snapshot %d: %v", name, i, err)
			}
		}
	}
}

// s3_auth: iam_role takes the AWS SDK's default credential chain; its
// first link, the environment, reaches the test server.
func TestOpen_IAMRoleUsesTheDefaultChain(t *testing.T) {
	direct := stores(t)["s3"].(*s3Store)
	t.Setenv("AWS_ACCESS_KEY_ID", s3Server.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3Server.SecretKey)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	ctx := context.Background()
	st, err := Open(ctx, "s3://"+direct.loc.Bucket+"/"+direct.loc.Prefix, map[string]string{
		ParamEndpoint: s3Server.Endpoint, ParamRegion: s3Server.Region, ParamAuth: "iam_role"})
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "s.duckdb")
	writeRandom(t, src, 100)
	if _, err := Publish(ctx, st, src, Snapshot{Dataset: "iam"}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong")
	st, err = Open(ctx, "s3://"+direct.loc.Bucket+"/"+direct.loc.Prefix, map[string]string{
		ParamEndpoint: s3Server.Endpoint, ParamRegion: s3Server.Region, ParamAuth: "iam_role"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Publish(ctx, st, src, Snapshot{Dataset: "iam"}); err == nil {
		t.Fatal("a wrong secret in the environment was accepted")
	}
}

// A location's own failures are ErrStore, for the failure metrics; the
// store's other errors stay what they are.
func TestStoreErrors_AreMarked(t *testing.T) {
	ctx := context.Background()
	for name, st := range stores(t) {
		_, _, err := st.GetFile(ctx, "no/such.duckdb", filepath.Join(t.TempDir(), "x"))
		if !errors.Is(err, ErrNotFound) || errors.Is(err, ErrStore) {
			t.Errorf("%s: a missing object: %v", name, err)
		}
		_, _, err = st.PutFile(ctx, "a.duckdb", filepath.Join(t.TempDir(), "missing-source"))
		if name == "file" && !errors.Is(err, ErrStore) {
			t.Errorf("%s: a failed upload is not ErrStore: %v", name, err)
		}
	}
	st, err := Open(ctx, "s3://no-such-bucket-here/p/", map[string]string{
		ParamEndpoint: s3Server.Endpoint, ParamRegion: s3Server.Region, ParamKey: s3Server.AccessKey, ParamSecret: s3Server.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteMeta(ctx, []byte("{}"), ""); !errors.Is(err, ErrStore) {
		t.Errorf("s3: a write to a missing bucket is not ErrStore: %v", err)
	}
}

// TestStatus_NoStatusIsAFailure: an S3 error whose response has no status
// (0) is a failure without a response, never success: taken for success,
// its nil output crashed a WriteMeta.
func TestStatus_NoStatusIsAFailure(t *testing.T) {
	for _, err := range []error{
		&smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{}}, Err: errors.New("x")},
		&smithyhttp.ResponseError{Err: errors.New("no response")},
		errors.New("dial: refused"),
	} {
		if got := status(err); got != -1 {
			t.Errorf("status(%v) = %d, want -1", err, got)
		}
	}
	if got := status(&smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: 412}}, Err: errors.New("x")}); got != 412 {
		t.Errorf("status of a 412: %d", got)
	}
}
