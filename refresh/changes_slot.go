package refresh

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
)

// The origin side of refresh_mode: changes: the instance id that keeps two
// pgaccel instances off each other's slots, the names of a dataset's
// publication and slot, and the checks before a table is published.

// instanceIDFile holds the instance id in runtime.data_dir.
const instanceIDFile = "instance_id"

// SlotPrefix starts the name of every replication slot and publication
// pgaccel creates: pgaccel_<instance id>_<dataset>.
const SlotPrefix = "pgaccel_"

// InstanceID returns the instance id kept in dataDir, creating it (8
// random hex digits, mode 0600) on first use. Slots and publications are
// named with it, so two pgaccel instances never share a slot by accident;
// one that moves to another machine with its data dir keeps its slots.
func InstanceID(dataDir string) (string, error) {
	// Every changes dataset asks at its start, at once: one of them
	// creates the id, the others read it (a read between another's create
	// and write saw an empty file, and two creators two ids).
	instanceIDMu.Lock()
	defer instanceIDMu.Unlock()
	path := filepath.Join(dataDir, instanceIDFile)
	if id, found, err := readInstanceID(dataDir); err != nil || found {
		return id, err
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	id := hex.EncodeToString(b[:])
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return "", fmt.Errorf("create data_dir for the instance id: %w", err)
	}
	// Written whole or not at all: another process never reads it half
	// written, and the first to link it in wins.
	tmp, err := os.CreateTemp(dataDir, ".instance_id-*")
	if err != nil {
		return "", fmt.Errorf("write the instance id: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(id + "\n"); err != nil {
		tmp.Close()
		return "", fmt.Errorf("write the instance id: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("write the instance id: %w", err)
	}
	if err := os.Link(tmp.Name(), path); errors.Is(err, os.ErrExist) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("read the instance id: %w", err)
		}
		if id = strings.TrimSpace(string(b)); !validInstanceID(id) {
			return "", fmt.Errorf("%s holds %q, not an instance id (8 hex digits): remove the file to get a new one, which names new replication slots", path, id)
		}
	} else if err != nil {
		return "", fmt.Errorf("write the instance id: %w", err)
	}
	return id, nil
}

var instanceIDMu sync.Mutex

// readInstanceID returns the instance id kept in dataDir, without creating
// it: found is false when there is none yet.
func readInstanceID(dataDir string) (id string, found bool, err error) {
	path := filepath.Join(dataDir, instanceIDFile)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("read the instance id: %w", err)
	}
	if id = strings.TrimSpace(string(b)); !validInstanceID(id) {
		return "", false, fmt.Errorf("%s holds %q, not an instance id (8 hex digits): remove the file to get a new one, which names new replication slots", path, id)
	}
	return id, true, nil
}

func validInstanceID(s string) bool {
	if len(s) != 8 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// streamNames are a changes dataset's slot and publication, and whether
// pgaccel owns them (creates, and may drop or alter them) or the config
// names existing ones.
type streamNames struct {
	slot, publication string
	ownPublication    bool
}

// namesFor returns the dataset's slot and publication: the params'
// pg_replication_slot and pg_publication, else pgaccel_<instance>_<name>.
func namesFor(ds *catalog.Dataset, instance string) streamNames {
	base := SlotPrefix + instance + "_" + sanitizeName(ds.Name)
	if len(base) > 63 {
		base = base[:63]
	}
	n := streamNames{slot: base, publication: base, ownPublication: true}
	if v := ds.Params[catalog.ParamReplicationSlot]; v != "" {
		n.slot = v
	}
	if v := ds.Params[catalog.ParamPublication]; v != "" {
		n.publication, n.ownPublication = v, false
	}
	return n
}

// sanitizeName turns a dataset name into slot-name characters.
func sanitizeName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// replicaIdentity describes how the origin identifies a table's rows in
// its change stream.
type replicaIdentity struct {
	mode byte     // pg_class.relreplident: d(efault), n(othing), f(ull), i(ndex)
	keys []string // the primary key's columns (default) or the identity index's
}

const replicaIdentitySQL = `
SELECT c.relreplident,
       COALESCE((SELECT array_to_json(array_agg(a.attname ORDER BY k.ord))::text
                 FROM pg_catalog.pg_index i,
                      unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                      JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
                 WHERE i.indrelid = c.oid
                   AND CASE WHEN c.relreplident = 'i' THEN i.indisreplident ELSE i.indisprimary END), '[]')
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = $2`

// checkReplicaIdentity makes sure the origin sends what applying updates
// and deletes needs: a primary key (or replica identity index) that is the
// config's primary_key, or REPLICA IDENTITY FULL. A table with neither
// must never be added to a publication that publishes updates and
// deletes: the origin's own UPDATEs and DELETEs of it would fail.
func checkReplicaIdentity(ctx context.Context, conn *pgconn.PgConn, ds *catalog.Dataset) (replicaIdentity, error) {
	res := conn.ExecParams(ctx, replicaIdentitySQL, [][]byte{[]byte(ds.Schema), []byte(ds.Table)}, nil, nil, nil).Read()
	if res.Err != nil {
		return replicaIdentity{}, fmt.Errorf("read the replica identity of %s: %w", ds.QualifiedTable(), res.Err)
	}
	if len(res.Rows) != 1 {
		return replicaIdentity{}, fmt.Errorf("%s: %w", ds.QualifiedTable(), errTableNotFound)
	}
	ri := replicaIdentity{mode: res.Rows[0][0][0]}
	if err := jsonStrings(res.Rows[0][1], &ri.keys); err != nil {
		return replicaIdentity{}, err
	}
	pk := ds.Acceleration.PrimaryKey
	same := func(a, b []string) bool {
		a, b = slices.Clone(a), slices.Clone(b)
		slices.Sort(a)
		slices.Sort(b)
		return slices.Equal(a, b)
	}
	switch {
	case ri.mode == 'f':
		if len(ri.keys) > 0 && !same(ri.keys, pk) {
			return ri, fmt.Errorf("acceleration.primary_key %v is not the primary key of %s (%v): set primary_key to it: %w", pk, ds.QualifiedTable(), ri.keys, errConfig)
		}
	case (ri.mode == 'd' || ri.mode == 'i') && len(ri.keys) > 0:
		if !same(ri.keys, pk) {
			return ri, fmt.Errorf("acceleration.primary_key %v is not the replica identity of %s (%v): set primary_key to it: %w", pk, ds.QualifiedTable(), ri.keys, errConfig)
		}
	default:
		return ri, fmt.Errorf("%s has no primary key and no REPLICA IDENTITY FULL, so its change stream cannot say which row an UPDATE or DELETE changes (and adding it to a publication would make the origin's own UPDATEs and DELETEs of it fail): add a primary key, or run ALTER TABLE %s REPLICA IDENTITY FULL: %w",
			ds.QualifiedTable(), ds.QualifiedTable(), errConfig)
	}
	return ri, nil
}

// ensurePublication makes sure the publication exists and publishes the
// table: created FOR TABLE when pgaccel owns it (before the slot, which
// then sees it from its start), the table added when missing. A
// publication the config names must exist and hold the table.
func ensurePublication(ctx context.Context, conn *pgconn.PgConn, ds *catalog.Dataset, n streamNames) error {
	res := conn.ExecParams(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_publication WHERE pubname = $1),
		EXISTS (SELECT 1 FROM pg_catalog.pg_publication_tables WHERE pubname = $1 AND schemaname = $2 AND tablename = $3)`,
		[][]byte{[]byte(n.publication), []byte(ds.Schema), []byte(ds.Table)}, nil, nil, nil).Read()
	if res.Err != nil {
		return fmt.Errorf("look up publication %s: %w", n.publication, res.Err)
	}
	var err error
	exists, has := string(res.Rows[0][0]) == "t", string(res.Rows[0][1]) == "t"
	switch {
	case has:
		return nil
	case !n.ownPublication && !exists:
		return fmt.Errorf("params.%s names publication %s, which the origin does not have: create it (CREATE PUBLICATION %s FOR TABLE %s) or remove the param: %w",
			catalog.ParamPublication, n.publication, n.publication, ds.QualifiedTable(), errConfig)
	case !n.ownPublication:
		return fmt.Errorf("publication %s (params.%s) does not publish %s: ALTER PUBLICATION %s ADD TABLE %s: %w",
			n.publication, catalog.ParamPublication, ds.QualifiedTable(), n.publication, ds.QualifiedTable(), errConfig)
	case exists:
		_, err = conn.Exec(ctx, "ALTER PUBLICATION "+quoteIdent(n.publication)+" ADD TABLE "+ds.QualifiedTable()).ReadAll()
	default:
		_, err = conn.Exec(ctx, "CREATE PUBLICATION "+quoteIdent(n.publication)+" FOR TABLE "+ds.QualifiedTable()+
			" WITH (publish = 'insert, update, delete, truncate', publish_via_partition_root = true)").ReadAll()
	}
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && (pgErr.Code == pgdef.InsufficientPrivilege || pgErr.Code == pgdef.DuplicateObject) {
			return fmt.Errorf("create publication %s for %s: %w; the refresh account needs CREATE on the database and to own the table, or create it yourself and name it with params.%s: %w",
				n.publication, ds.QualifiedTable(), err, catalog.ParamPublication, errConfig)
		}
		return fmt.Errorf("create publication %s: %w", n.publication, err)
	}
	return nil
}

// slotInfo is what pg_replication_slots says of a slot.
type slotInfo struct {
	exists    bool
	plugin    string
	database  string
	active    bool
	walStatus string // reserved, extended, unreserved, lost ("" before Postgres 13)
	confirmed pglogrepl.LSN
}

const slotSQL = `SELECT plugin, database, active, COALESCE(wal_status, ''), COALESCE(confirmed_flush_lsn::text, '0/0')
FROM pg_catalog.pg_replication_slots WHERE slot_name = $1`

func readSlot(ctx context.Context, conn *pgconn.PgConn, name string) (slotInfo, error) {
	res := conn.ExecParams(ctx, slotSQL, [][]byte{[]byte(name)}, nil, nil, nil).Read()
	if res.Err != nil {
		return slotInfo{}, fmt.Errorf("look up replication slot %s: %w", name, res.Err)
	}
	if len(res.Rows) == 0 {
		return slotInfo{}, nil
	}
	r := res.Rows[0]
	si := slotInfo{exists: true, plugin: string(r[0]), database: string(r[1]), active: string(r[2]) == "t", walStatus: string(r[3])}
	lsn, err := pglogrepl.ParseLSN(string(r[4]))
	if err != nil {
		return slotInfo{}, err
	}
	si.confirmed = lsn
	return si, nil
}

// resumeProblem says why the stream cannot resume from the stored
// position, "" when it can: the history since then is lost and the
// dataset is rebuilt.
func resumeProblem(stored *accelerator.TableInfo, n streamNames, systemID, database string, slot slotInfo) string {
	switch {
	case stored == nil:
		return "the acceleration holds nothing yet"
	case stored.Replication == nil:
		return "the stored acceleration was not loaded by refresh_mode: changes"
	case stored.Replication.Slot != n.slot:
		return fmt.Sprintf("the stored acceleration follows slot %s, the config %s", stored.Replication.Slot, n.slot)
	case stored.Replication.SystemID != systemID:
		return fmt.Sprintf("the origin is another system (id %s, the stored acceleration's %s)", systemID, stored.Replication.SystemID)
	case !slot.exists:
		return "replication slot " + n.slot + " is gone"
	case slot.plugin != "pgoutput" || slot.database != database:
		return fmt.Sprintf("replication slot %s is not a pgoutput slot of database %s", n.slot, database)
	case slot.walStatus == "lost":
		return "replication slot " + n.slot + " was invalidated (wal_status lost): the origin removed WAL it needed"
	case uint64(slot.confirmed) > stored.Replication.LSN:
		return fmt.Sprintf("replication slot %s confirmed %s, past the stored position %s: the changes between are gone",
			n.slot, slot.confirmed, pglogrepl.LSN(stored.Replication.LSN))
	}
	return ""
}
