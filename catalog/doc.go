// Package catalog owns pgaccel's configuration and the dataset registry.
//
// It parses pgaccel.yaml (origin, server, admin, runtime, snapshots and the
// datasets with the key names of the data-refresh spec), expands ${env:NAME}
// references, validates every field and reports all problems at once with the
// dataset, the key, the line and a fix. It also holds each dataset's live
// state (status, last and next refresh, error, row count) shared by the
// refresh scheduler, the proxy and the admin port.
//
// catalog must never import another pgaccel package.
package catalog
