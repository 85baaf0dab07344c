package refresh

import (
	"errors"
	"fmt"
	"testing"

	"github.com/pgaccel/pgaccel/snapshot"
)

// Failure reasons come from the errors' kinds, however they are wrapped.
func TestSnapshotReason(t *testing.T) {
	for err, want := range map[error]string{
		fmt.Errorf("refresh dataset x: %w", fmt.Errorf("%w: no column id", errSnapshotSchema)):        "schema",
		fmt.Errorf("download: %w", snapshot.ErrCorrupt):                                               "checksum",
		fmt.Errorf("download: %w", snapshot.ErrNotFound):                                              "not_found",
		fmt.Errorf("metadata: %w", snapshot.ErrConflict):                                              "conflict",
		fmt.Errorf("write metadata.json: %w: %w", snapshot.ErrStore, snapshot.ErrOutcomeUnknown):      "unknown_outcome",
		fmt.Errorf("read metadata.json: %w: %w", snapshot.ErrStore, errors.New("connection refused")): "store",
		errors.New("attach the incoming file: disk full"):                                             "other",
	} {
		if got := snapshotReason(err); got != want {
			t.Errorf("%v: %s, want %s", err, got, want)
		}
	}
}
