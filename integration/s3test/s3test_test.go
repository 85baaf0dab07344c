package s3test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// client is an aws-sdk-go-v2 S3 client for s, set up as S3-compatible
// servers need: path-style addressing, checksums only when required.
func client(s *Server) *s3.Client {
	return s3.New(s3.Options{
		Region:                     s.Region,
		BaseEndpoint:               aws.String(s.Endpoint),
		UsePathStyle:               true,
		Credentials:                credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// statusOf is the HTTP status of an S3 error, 0 for none.
func statusOf(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// The harness's versitygw serves the S3 calls snapshots need: buckets,
// objects in the posix directory, listing, and conditional writes
// (If-Match, If-None-Match) that refuse a stale writer with 412.
func TestStart_ServesS3(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	s, err := Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	}()
	c := client(s)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("snaps")}); err != nil {
		t.Fatalf("create bucket: %v\n%s", err, s.LogTail(2000))
	}
	body := bytes.Repeat([]byte("pgaccel "), 1000)
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("snaps"), Key: aws.String("a/b.duckdb"), Body: bytes.NewReader(body)})
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "snaps", "a", "b.duckdb")); err != nil {
		t.Errorf("the object is not a file in the posix directory: %v", err)
	}
	got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("snaps"), Key: aws.String("a/b.duckdb")})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	b, err := io.ReadAll(got.Body)
	got.Body.Close()
	if err != nil || !bytes.Equal(b, body) {
		t.Fatalf("get: %d bytes (%v), want %d", len(b), err, len(body))
	}
	list, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("snaps"), Prefix: aws.String("a/")})
	if err != nil || len(list.Contents) != 1 {
		t.Fatalf("list: %v, %d objects", err, len(list.Contents))
	}

	// Conditional writes, as a metadata object's writers use them.
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("snaps"), Key: aws.String("a/b.duckdb"),
		Body: bytes.NewReader([]byte("x")), IfNoneMatch: aws.String("*")})
	if statusOf(err) != http.StatusPreconditionFailed {
		t.Errorf("If-None-Match * on an existing object: %v (status %d), want 412", err, statusOf(err))
	}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("snaps"), Key: aws.String("a/b.duckdb"),
		Body: bytes.NewReader([]byte("x")), IfMatch: aws.String(`"0123456789abcdef0123456789abcdef"`)})
	if statusOf(err) != http.StatusPreconditionFailed {
		t.Errorf("If-Match a stale ETag: %v (status %d), want 412", err, statusOf(err))
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("snaps"), Key: aws.String("a/b.duckdb"),
		Body: bytes.NewReader([]byte("x")), IfMatch: put.ETag}); err != nil {
		t.Errorf("If-Match the current ETag: %v", err)
	}
	var apiErr smithy.APIError
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("snaps"), Key: aws.String("missing")}); !errors.As(err, &apiErr) || apiErr.ErrorCode() != "NoSuchKey" {
		t.Errorf("get of a missing key: %v, want NoSuchKey", err)
	}
}
