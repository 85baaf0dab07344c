package snapshot

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"
)

// Errors of a Store.
var (
	// ErrNotFound: the object does not exist.
	ErrNotFound = errors.New("snapshot store: object not found")
	// ErrNotModified: the metadata still has the ETag given.
	ErrNotModified = errors.New("snapshot store: metadata not modified")
	// ErrConflict: a conditional write found another ETag (another
	// writer's update came first).
	ErrConflict = errors.New("snapshot store: metadata changed by another writer")
	// ErrCorrupt: a download's size or SHA-256 is not the metadata's.
	ErrCorrupt = errors.New("snapshot: the downloaded object is not the one published")
	// ErrStore: any other failure of the location (its server, its file
	// system, the network on the way), as Stores report them (storeErr).
	ErrStore = errors.New("snapshot store")
	// ErrOutcomeUnknown marks a failed write (with ErrStore) that the
	// store may nevertheless have applied: the request was sent and no
	// answer came (a timeout, a cancellation, a lost connection) or the
	// answer was a server error; on a file system, the rename or the
	// directory sync after it failed.
	ErrOutcomeUnknown = errors.New("the write may have been applied")
)

// storeErr is err of a Store's op on key: the errors above as they are,
// any other marked ErrStore.
func storeErr(op, key string, err error) error {
	if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotModified) || errors.Is(err, ErrConflict) {
		return err
	}
	return fmt.Errorf("%s %s: %w: %w", op, key, ErrStore, err)
}

// unknownOutcome marks err, a write's failure, ErrOutcomeUnknown.
func unknownOutcome(err error) error {
	return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
}

// Store is where snapshots are kept: immutable objects, and the one
// metadata object, written conditionally.
type Store interface {
	// PutFile uploads the file at path as the object key. It returns the
	// bytes sent and their SHA-256 (hex), computed as they streamed. A
	// failed upload leaves no object (nor, on S3, multipart parts).
	PutFile(ctx context.Context, key, path string) (size int64, sum string, err error)
	// GetFile downloads the object key into w's file at path (created or
	// truncated), returning the bytes received and their SHA-256.
	GetFile(ctx context.Context, key, path string) (size int64, sum string, err error)
	// ReadMeta reads the metadata object and its ETag. With ifNoneMatch
	// set, it returns ErrNotModified when the ETag is still that one.
	// ErrNotFound when there is none.
	ReadMeta(ctx context.Context, ifNoneMatch string) (data []byte, etag string, err error)
	// WriteMeta replaces the metadata object if its ETag is still
	// ifMatch, or creates it if ifMatch is "" and there is none; else
	// ErrConflict. It returns the new ETag. A failure after which the
	// write may still have been applied is ErrOutcomeUnknown.
	WriteMeta(ctx context.Context, data []byte, ifMatch string) (etag string, err error)
	// Delete removes the object key (a snapshot no metadata names).
	Delete(ctx context.Context, key string) error
	// String names the location, for logs (no credentials).
	String() string
}

// MetadataKey is the metadata object's key under a location.
const MetadataKey = "metadata.json"

// Location is a parsed snapshots.location.
type Location struct {
	// Scheme is "file" or "s3".
	Scheme string
	// Dir is a file location's directory (absolute).
	Dir string
	// Bucket and Prefix place an s3 location (Prefix without leading or
	// trailing slash, "" for the bucket's root).
	Bucket, Prefix string
}

// ParseLocation reads a snapshots.location: file:///abs/dir (or a
// relative file://dir, taken from the working directory) or
// s3://bucket/prefix/.
func ParseLocation(s string) (Location, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Location{}, fmt.Errorf("snapshots.location %q: %v", s, err)
	}
	switch u.Scheme {
	case "file":
		dir := u.Host + u.Path
		if dir == "" {
			return Location{}, fmt.Errorf("snapshots.location %q: no directory (write file:///path/to/dir)", s)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return Location{}, fmt.Errorf("snapshots.location %q: %v", s, err)
		}
		return Location{Scheme: "file", Dir: abs}, nil
	case "s3":
		if u.Host == "" {
			return Location{}, fmt.Errorf("snapshots.location %q: no bucket (write s3://bucket/prefix/)", s)
		}
		return Location{Scheme: "s3", Bucket: u.Host, Prefix: strings.Trim(u.Path, "/")}, nil
	}
	return Location{}, fmt.Errorf("snapshots.location %q: the scheme must be file:// or s3://", s)
}

// key is name under an s3 location's prefix.
func (l Location) key(name string) string {
	if l.Prefix == "" {
		return name
	}
	return path.Join(l.Prefix, name)
}

// Open returns the store of a location; params are snapshots.params
// (S3 endpoint, region, credentials: see NewS3).
func Open(ctx context.Context, location string, params map[string]string) (Store, error) {
	l, err := ParseLocation(location)
	if err != nil {
		return nil, err
	}
	if l.Scheme == "file" {
		return NewFile(l.Dir)
	}
	return NewS3(ctx, l, params)
}
