package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// fileStore is a file:// location: objects are files under dir, and the
// metadata's ETag is the SHA-256 of its content. Conditional writes take
// an exclusive lock (flock) on dir/.metadata.lock, so that writers in
// other processes on the same file system are serialised too.
type fileStore struct {
	dir string
}

// NewFile returns the store of a file:// location, creating its directory.
func NewFile(dir string) (Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("snapshot store %s: %w", dir, err)
	}
	return &fileStore{dir: dir}, nil
}

func (f *fileStore) String() string { return "file://" + f.dir }

func (f *fileStore) path(key string) (string, error) {
	p := filepath.Join(f.dir, filepath.FromSlash(key))
	if !strings.HasPrefix(p, f.dir+string(filepath.Separator)) {
		return "", fmt.Errorf("snapshot store: key %q leaves the location", key)
	}
	return p, nil
}

func (f *fileStore) putFile(ctx context.Context, key, src string) (int64, string, error) {
	dst, err := f.path(key)
	if err != nil {
		return 0, "", err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, "", err
	}
	tmp := dst + ".part"
	n, sum, err := copyFile(ctx, src, tmp)
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return 0, "", err
	}
	return n, sum, syncDir(filepath.Dir(dst))
}

func (f *fileStore) getFile(ctx context.Context, key, dst string) (int64, string, error) {
	src, err := f.path(key)
	if err != nil {
		return 0, "", err
	}
	n, sum, err := copyFile(ctx, src, dst)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, "", fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	return n, sum, err
}

func (f *fileStore) readMeta(ifNoneMatch string) ([]byte, string, error) {
	data, err := os.ReadFile(filepath.Join(f.dir, MetadataKey))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", ErrNotFound
	}
	if err != nil {
		return nil, "", err
	}
	etag := contentTag(data)
	if ifNoneMatch != "" && etag == ifNoneMatch {
		return nil, etag, ErrNotModified
	}
	return data, etag, nil
}

func (f *fileStore) writeMeta(data []byte, ifMatch string) (string, error) {
	lock, err := os.OpenFile(filepath.Join(f.dir, ".metadata.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	_, cur, err := f.readMeta("")
	switch {
	case errors.Is(err, ErrNotFound):
		if ifMatch != "" {
			return "", ErrConflict
		}
	case err != nil:
		return "", err
	case cur != ifMatch:
		return "", ErrConflict
	}
	p := filepath.Join(f.dir, MetadataKey)
	tmp := p + ".part"
	if err := writeSynced(tmp, data); err != nil {
		os.Remove(tmp)
		return "", err
	}
	// From the rename on, a failure may leave the new metadata in place
	// (a network file system may apply a rename it reports failed; a
	// failed directory sync follows one that was applied).
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return "", unknownOutcome(err)
	}
	if err := dirSync(f.dir); err != nil {
		return "", unknownOutcome(err)
	}
	return contentTag(data), nil
}

// dirSync is syncDir; tests make it fail.
var dirSync = syncDir

func (f *fileStore) delete(key string) error {
	p, err := f.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// The Store methods mark the file system's errors as ErrStore.

func (f *fileStore) PutFile(ctx context.Context, key, src string) (int64, string, error) {
	n, sum, err := f.putFile(ctx, key, src)
	return n, sum, storeErr("upload", key, err)
}

func (f *fileStore) GetFile(ctx context.Context, key, dst string) (int64, string, error) {
	n, sum, err := f.getFile(ctx, key, dst)
	return n, sum, storeErr("download", key, err)
}

func (f *fileStore) ReadMeta(ctx context.Context, ifNoneMatch string) ([]byte, string, error) {
	data, etag, err := f.readMeta(ifNoneMatch)
	return data, etag, storeErr("read", MetadataKey, err)
}

func (f *fileStore) WriteMeta(ctx context.Context, data []byte, ifMatch string) (string, error) {
	etag, err := f.writeMeta(data, ifMatch)
	return etag, storeErr("write", MetadataKey, err)
}

func (f *fileStore) Delete(ctx context.Context, key string) error {
	return storeErr("delete", key, f.delete(key))
}

// contentTag is a file store's ETag of data.
func contentTag(data []byte) string {
	s := sha256.Sum256(data)
	return `"` + hex.EncodeToString(s[:16]) + `"`
}

// copyFile copies src to dst (created, synced), returning the bytes and
// their SHA-256.
func copyFile(ctx context.Context, src, dst string) (int64, string, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, "", err
	}
	defer in.Close()
	return writeFrom(ctx, in, dst)
}

// writeFrom writes what r reads to the file dst (created or truncated,
// synced), returning the bytes and their SHA-256.
func writeFrom(ctx context.Context, r io.Reader, dst string) (int64, string, error) {
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, "", err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), ctxReader{ctx, r})
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

func writeSynced(p string, data []byte) error {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
