// Package snapshot is the acceleration snapshot store: where a writer
// publishes its file-mode datasets' DuckDB files and replicas find them
// (the spec's "Snapshot" and "Fast Cold Starts with Snapshots"). app opens
// the store of snapshots.location (Open); refresh bootstraps, publishes and
// follows snapshots through it (refresh/snapshots.go).
//
// snapshot may import catalog, accelerator and pgdef only; it must never
// import refresh, proxy or planner.
//
// # Locations (store.go, file.go, s3.go)
//
// A location is a file:// directory or an s3://bucket/prefix/ (ParseLocation;
// a relative file://dir is taken from the working directory). Each is a
// Store: PutFile and GetFile move a whole object and return its bytes and
// their SHA-256, computed as they stream; ReadMeta reads the metadata object
// and its ETag (ErrNotModified when it still has the ETag given); WriteMeta
// replaces it only if its ETag is still the one it was read with, or
// creates it only if there is none (ErrConflict otherwise); Delete removes
// an object.
//
//   - file:// (NewFile): objects are files under the directory, written as
//     <key>.part, synced and renamed into place. The metadata's ETag is a
//     hash of its content. A conditional write holds an exclusive flock on
//     .metadata.lock in the directory, so writers in other processes on the
//     same file system are serialised too.
//   - s3:// (NewS3): the AWS SDK for Go v2, set up from snapshots.params
//     (s3_endpoint, s3_region, s3_auth: key, iam_role or public, s3_key,
//     s3_secret, s3_session_token, s3_path_style), with request and response
//     checksums only when required, as S3-compatible servers need. Files
//     above 64 MiB are uploaded in 64 MiB parts, and a failed multipart
//     upload is aborted. The metadata's writes carry If-Match, or
//     If-None-Match: * for the first; 412 and 409 are conflicts. A transfer
//     that moves no byte for 60 s is abandoned (stall.go); other requests
//     get 60 s in all.
//
// A failure of the location is ErrStore. A metadata write that may have
// been applied nevertheless (no answer came, or a 5xx; on a file system,
// the rename or the directory sync after it failed) is also
// ErrOutcomeUnknown.
//
// # Layout (metadata.go)
//
// Under a location:
//
//	metadata.json
//	month=YYYY-MM/day=YYYY-MM-DD/dataset=<name>/<name>_<id>.duckdb
//
// The id is the snapshot's UTC creation time (20060102T150405.000000000Z),
// so ids sort as the times do. Snapshot objects never change once written.
// metadata.json (Metadata, version 1) lists each dataset's last 16
// snapshots, oldest first (id, creation time, object, size, SHA-256, the
// table's columns with the origin's types, the last refresh its data comes
// from and, for a changes dataset, the applied LSN), and names its current
// one.
//
// # Metadata updates
//
// The metadata changes last, by Update: read it, change it, write it back
// conditionally; on a conflict, read again and retry after a short random
// backoff, up to 20 times. So two writers never lose each other's update,
// and a reader never sees a snapshot before its object is whole.
//
// A write whose outcome is unknown is not taken for failed: Update reads the
// metadata again, and the change returns ErrApplied if its update is there.
// Nothing is undone until the metadata says what happened: an object is
// deleted only when no metadata names it, or can come to name it.
//
// Publish uploads a file (refusing an empty one, or one whose size changed
// during the upload), then makes it the dataset's current snapshot; it
// refuses when the current one is not older. The objects of the snapshots that
// drop off the list of 16 are deleted once no metadata names them. A failed
// publish deletes its object, unless the metadata may name it
// (ErrOutcomeUnknown).
//
// Read returns the metadata and its ETag (a location without metadata reads
// as empty). Fetch downloads a snapshot to <dst>.download-<n> beside its
// destination, checks its size and SHA-256 against the metadata's
// (ErrCorrupt), and only then renames it into place and syncs the directory.
//
// # With the engine (create.go)
//
//   - Create copies a file-mode dataset consistently
//     (accelerator.Engine.SnapshotTo), publishes the copy and removes it.
//     When the dataset holds what the current snapshot holds (the same last
//     refresh and LSN) it returns ErrUnchanged and publishes nothing.
//   - Bootstrap puts the dataset's current snapshot where the engine keeps
//     its file (accelerator.Engine.FilePath), before the dataset is
//     attached, when no file is there yet. A check of the snapshot's
//     metadata runs before any download; with older, a current snapshot
//     that fails gives way to the ones before it, newest first.
//
// A replica that follows a writer swaps newer snapshots in with Read, Fetch
// and accelerator.Engine.ReplaceFrom (refresh/snapshots.go).
package snapshot
