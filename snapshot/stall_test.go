package snapshot

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/integration/tcprelay"
)

// A transfer that stops moving (the server or the network stops
// answering part-way) is abandoned after stallTimeout, upload and
// download alike, with the reason; a multipart upload that stalls is
// aborted; the metadata is left as it was.
func TestS3_StalledTransfersAreAbandoned(t *testing.T) {
	old, oldPart := stallTimeout, multipartPart
	stallTimeout = time.Second
	defer func() { stallTimeout, multipartPart = old, oldPart }()
	ctx := context.Background()
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
	st, err := Open(ctx, "s3://"+direct.loc.Bucket+"/"+direct.loc.Prefix, map[string]string{
		ParamEndpoint: "http://" + relay.Addr(), ParamRegion: s3Server.Region, ParamKey: s3Server.AccessKey, ParamSecret: s3Server.SecretKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "s.duckdb")
	writeRandom(t, src, 6<<20)
	first, err := Publish(ctx, st, src, Snapshot{Dataset: "stall"})
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		part int64
	}{{"single", 64 << 20}, {"multipart", 5 << 20}} {
		multipartPart = tc.part
		relay.StallUpAfter(1 << 20)
		start := time.Now()
		_, err := Publish(ctx, st, src, Snapshot{Dataset: "stall"})
		if err == nil || !strings.Contains(err.Error(), "no byte moved") {
			t.Fatalf("%s upload through a stalled link: %v", tc.name, err)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("%s upload gave up after %s", tc.name, d)
		}
		relay.Release()
		if m, _, err := Read(ctx, direct, ""); err != nil || len(m.Datasets["stall"].Snapshots) != 1 {
			t.Fatalf("%s: the metadata changed: %v %+v", tc.name, err, m.Datasets["stall"])
		}
	}

	relay.StallDownAfter(1 << 20)
	dst := filepath.Join(dir, "back.duckdb")
	if err := Fetch(ctx, st, first, dst); err == nil || !strings.Contains(err.Error(), "no byte moved") {
		t.Fatalf("download through a stalled link: %v", err)
	}
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Fatalf("a stalled download left %s (%v)", dst, err)
	}
	if left, _ := filepath.Glob(dst + ".download-*"); len(left) != 0 {
		t.Fatalf("a stalled download left %v", left)
	}
	relay.Release()
	if err := Fetch(ctx, st, first, dst); err != nil {
		t.Fatalf("after the link is back: %v", err)
	}
}
