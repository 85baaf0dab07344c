package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/pgaccel/pgaccel/admin"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/integration/s3test"
	"github.com/pgaccel/pgaccel/snapshot"
)

// Acceleration snapshots in object storage (issue 18): a writer pgaccel
// publishes its dataset after each refresh to a real S3-compatible server
// (versitygw), and a replica with no file of its own starts from the
// current snapshot: it serves the rows the snapshot holds (not the
// origin's newer ones) at once. Credentials come through ${env:…}.
func TestSnapshots_WriterPublishesReplicaBootstraps(t *testing.T) {
	// Its own deadline: the first use builds versitygw (minutes).
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	srv, err := s3test.Start(sctx)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	t.Cleanup(func() { _ = srv.Stop() })
	raw := s3.New(s3.Options{Region: srv.Region, BaseEndpoint: aws.String(srv.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, "")})
	if _, err := raw.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("fleet")}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGACCEL_TEST_S3_KEY", srv.AccessKey)
	t.Setenv("PGACCEL_TEST_S3_SECRET", srv.SecretKey)
	params := map[string]string{snapshot.ParamEndpoint: srv.Endpoint, snapshot.ParamRegion: srv.Region,
		snapshot.ParamKey: srv.AccessKey, snapshot.ParamSecret: srv.SecretKey}
	store, err := snapshot.Open(ctx, "s3://fleet/snaps/", params)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, `DROP TABLE IF EXISTS snap_items;
		CREATE TABLE snap_items (id int PRIMARY KEY, v text, amount numeric(10,2));
		INSERT INTO snap_items SELECT g, 'item ' || g, g * 0.5 FROM generate_series(1, 300) g;
		GRANT SELECT ON snap_items TO `+appUser)
	start := func(opt string) *app.App {
		t.Helper()
		var a *app.App
		cfg := fmt.Sprintf(`origin:
  dsn: %q
server:
  listen: 127.0.0.1:0
admin:
  listen: 127.0.0.1:0
runtime:
  data_dir: %q
snapshots:
  enabled: true
  location: s3://fleet/snaps/
  params:
    s3_endpoint: %s
    s3_region: %s
    s3_key: ${env:PGACCEL_TEST_S3_KEY}
    s3_secret: ${env:PGACCEL_TEST_S3_SECRET}
datasets:
  - from: postgres:public.snap_items
    acceleration:
      mode: file
      primary_key: id
      snapshots: %s
`, origin.SuperDSN(), t.TempDir(), srv.Endpoint, srv.Region, opt)

		a = startAppText(t, cfg)
		t.Cleanup(func() {
			c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = a.Shutdown(c)
		})
		c, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if err := a.WaitReady(c); err != nil {
			t.Fatal(err)
		}
		return a
	}
	// current waits for a current snapshot of snap_items other than not.
	current := func(not string) snapshot.Snapshot {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			m, _, err := snapshot.Read(ctx, store, "")
			if err != nil {
				t.Fatal(err)
			}
			if s, ok := m.Current("snap_items"); ok && s.ID != not {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatal("no snapshot was published")
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	writer := start("create_only")
	s1 := current("")
	if len(s1.Schema) != 3 || s1.Size == 0 {
		t.Fatalf("snapshot %+v", s1)
	}

	// The origin moves on; a replica started now serves the snapshot.
	mustExec(t, "INSERT INTO snap_items SELECT g, 'late ' || g, 1 FROM generate_series(301, 350) g")
	replica := start("bootstrap_only")
	c := connect(t, appDSN(replica, appUser, appPass))
	before := routeCounts(t, replica)[acc]
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM snap_items").Scan(&n); err != nil || n != 300 {
		t.Fatalf("replica count: %v, %d, want the snapshot's 300", err, n)
	}
	if routeCounts(t, replica)[acc] != before+1 {
		t.Fatal("the replica's read was not accelerated")
	}
	var max int
	before = routeCounts(t, replica)[acc]
	if err := c.QueryRow(ctx, "SELECT max(id) FROM snap_items").Scan(&max); err != nil || max != 300 || routeCounts(t, replica)[acc] != before+1 {
		t.Fatalf("replica max(id): %v, %d (accelerated %v)", err, max, routeCounts(t, replica)[acc]-before)
	}

	// A follower (refresh_mode: snapshot) starts from the same snapshot
	// and then follows the writer's, never reading the source.
	follower := start("enabled\n      refresh_mode: snapshot\n      refresh_check_interval: 1s")
	fc := connect(t, appDSN(follower, appUser, appPass))
	followerCount := func() int64 {
		t.Helper()
		var n int64
		if err := fc.QueryRow(ctx, "SELECT count(*) FROM snap_items").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := followerCount(); n != 300 {
		t.Fatalf("follower count %d, want the snapshot's 300", n)
	}

	// A refresh at the writer publishes a newer snapshot, which the
	// follower loads and a new replica starts from.
	if err := writer.Runner.Refresh(ctx, "snap_items"); err != nil {
		t.Fatal(err)
	}
	s2 := current(s1.ID)
	if s2.ID <= s1.ID || !s2.LastRefresh.After(s1.LastRefresh) {
		t.Fatalf("after a refresh: %+v, before %+v", s2, s1)
	}
	deadline := time.Now().Add(30 * time.Second)
	for followerCount() != 350 {
		if time.Now().After(deadline) {
			t.Fatalf("the follower did not load the newer snapshot: %d rows", followerCount())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Status and metrics say which snapshot each serves and published.
	code, body := adminGet(t, follower.AdminAddr(), "/v1/datasets?status=true", "")
	var list []admin.DatasetStatus
	if err := json.Unmarshal([]byte(body), &list); code != 200 || err != nil || len(list) != 1 || list[0].Snapshots == nil ||
		list[0].Snapshots.Served == nil || list[0].Snapshots.Served.ID != s2.ID || list[0].Snapshots.Served.Bytes != s2.Size {
		t.Fatalf("follower /v1/datasets: %d %v %s", code, err, body)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		if st, _ := writer.Registry.State("snap_items"); st.SnapshotPublished.ID == s2.ID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the writer's status does not name the snapshot it published")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := metricSums(t, follower.Metrics, "dataset_acceleration_snapshot_bytes_total", "direction")["download"]; got != float64(s1.Size+s2.Size) {
		t.Errorf("follower downloaded %v bytes, want %d", got, s1.Size+s2.Size)
	}
	if got := metricSums(t, writer.Metrics, "dataset_acceleration_snapshot_bytes_total", "direction")["upload"]; got != float64(s1.Size+s2.Size) {
		t.Errorf("writer uploaded %v bytes, want %d", got, s1.Size+s2.Size)
	}

	// The source moves on without a snapshot: the follower stays.
	mustExec(t, "INSERT INTO snap_items VALUES (351, 'unpublished', 1)")
	time.Sleep(2500 * time.Millisecond)
	if n := followerCount(); n != 350 {
		t.Fatalf("the follower read the source: %d rows", n)
	}
	c2 := connect(t, appDSN(start("enabled"), appUser, appPass))
	if err := c2.QueryRow(ctx, "SELECT count(*) FROM snap_items").Scan(&n); err != nil || n != 350 {
		t.Fatalf("second replica count: %v, %d, want the snapshot's 350", err, n)
	}

	// A schema change at the writer: the follower refuses the snapshot,
	// says why, and keeps serving the one it has.
	mustExec(t, "ALTER TABLE snap_items ADD COLUMN extra int")
	if err := writer.Runner.Refresh(ctx, "snap_items"); err != nil {
		t.Fatal(err)
	}
	s3 := current(s2.ID)
	if len(s3.Schema) != 4 {
		t.Fatalf("snapshot after the schema change: %+v", s3)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		st, _ := follower.Registry.State("snap_items")
		if strings.Contains(st.Error, "is not loaded") && strings.Contains(st.Error, "columns") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the follower did not refuse the incompatible snapshot: %+v", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := followerCount(); n != 350 {
		t.Fatalf("after refusing a snapshot the follower serves %d rows", n)
	}
	if got := metricSums(t, follower.Metrics, "dataset_acceleration_snapshot_failures_total", "reason")["schema"]; got < 1 {
		t.Errorf("schema refusals counted: %v", got)
	}
}
