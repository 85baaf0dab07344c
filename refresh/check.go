package refresh

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
)

// This file checks a config without refreshing anything, for pgaccel
// validate: what the runner would warn about at start (Warnings), and each
// dataset against the origin as its refresh would meet it (CheckOrigin).

// ModeImplemented reports whether the runner implements refresh_mode m;
// it refreshes a dataset of any other mode in full, and logs a warning.
func ModeImplemented(m string) bool {
	switch m {
	case catalog.RefreshFull, catalog.RefreshAppend, catalog.RefreshChanges, catalog.RefreshSnapshot, catalog.RefreshDisabled, catalog.RefreshCaching:
		return true
	}
	return false
}

// Warnings are what a Runner of cfg logs at start without failing: a
// refresh_mode not implemented yet (refreshed in full instead) and a
// retention policy missing a setting (no retention pass is scheduled). Each
// is a catalog.Problem at its dataset's line.
func Warnings(cfg *catalog.Config) []catalog.Problem {
	var out []catalog.Problem
	for _, ds := range cfg.Datasets {
		if !ds.Acceleration.Enabled {
			continue
		}
		if m := ds.Acceleration.RefreshMode; !ModeImplemented(m) {
			out = append(out, catalog.Problem{Line: ds.Line, Dataset: ds.Name, Key: "acceleration.refresh_mode",
				Message: m + " is not implemented yet: pgaccel run refreshes this dataset in full",
				Fix:     "set refresh_mode: full (what runs today) or append"})
		}
		if ds.Acceleration.RefreshMode == catalog.RefreshCaching && ds.Acceleration.OnZeroResults == catalog.ZeroResultsUseSource {
			out = append(out, catalog.Problem{Line: ds.Line, Dataset: ds.Name, Key: "acceleration.on_zero_results",
				Message: "on_zero_results is ignored with refresh_mode: caching: a miss always asks the source",
				Fix:     "remove on_zero_results from this dataset"})
		}
		if ds.Acceleration.RetentionCheckEnabled {
			for _, f := range retentionRefusals(ds) {
				out = append(out, catalog.Problem{Line: ds.Line, Dataset: ds.Name, Key: "acceleration.retention_check_enabled",
					Message: "no retention pass is scheduled: " + f.Error(), Fix: "set " + f.setting})
			}
		}
	}
	return out
}

// CheckOrigin connects to the origin with cfg's origin.dsn, as a refresh
// does, and checks each accelerated dataset there, reading nothing but the
// catalog and writing nothing (the session is read-only):
//
//   - the table exists;
//   - the columns the dataset names exist: time_column,
//     time_partition_column, primary_key and refresh_sql's column list;
//   - the refresh's query (refresh_sql's condition, the data window) and
//     retention_sql's condition run there, each as a SELECT ... LIMIT 0
//     (retention_sql's DELETE is never run), and so does the fallback
//     filter of on_zero_results: use_source;
//   - the refresh role may read the table, and row level security does
//     not hide rows from it;
//   - for refresh_mode: changes, what the change stream needs (changes).
//
// It returns every problem found, each naming its dataset and how to fix
// it. The error is for the origin itself: it cannot be reached, or the
// connection failed during the checks.
func CheckOrigin(ctx context.Context, cfg *catalog.Config) ([]catalog.Problem, error) {
	sc := newScrubber(cfg.Origin.DSN)
	conn, err := connectOrigin(ctx, cfg.Origin.DSN)
	if err != nil {
		return nil, errors.New(sc.text(err))
	}
	defer conn.Close(context.Background())
	res := conn.ExecParams(ctx, "SELECT current_user, current_database(), set_config('default_transaction_read_only', 'on', false), set_config('statement_timeout', '30s', false), set_config('application_name', 'pgaccel validate', false)",
		nil, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, fmt.Errorf("check the origin: %s", sc.text(res.Err))
	}
	c := &originCheck{conn: conn, user: string(res.Rows[0][0]), database: string(res.Rows[0][1]), cfg: cfg, sc: sc}
	for _, ds := range cfg.Datasets {
		if !ds.Acceleration.Enabled {
			continue
		}
		if err := c.dataset(ctx, ds); err != nil {
			return c.problems, fmt.Errorf("check dataset %s at the origin: %s", ds.Name, sc.text(err))
		}
	}
	return c.problems, nil
}

// originCheck collects the problems of the datasets checked on one
// origin connection.
type originCheck struct {
	conn           *pgconn.PgConn
	user, database string
	cfg            *catalog.Config
	sc             scrubber
	problems       []catalog.Problem
	// replication is the outcome of opening a logical replication
	// connection, tried once for the changes datasets: "" when it was
	// not tried, "ok", or the origin's refusal.
	replication string
}

func (c *originCheck) add(ds *catalog.Dataset, key, message, fix string) {
	c.problems = append(c.problems, catalog.Problem{Line: ds.Line, Dataset: ds.Name, Key: key, Message: message, Fix: fix})
}

// dataset checks one dataset; the error is a failure of the connection,
// not a problem of the dataset.
func (c *originCheck) dataset(ctx context.Context, ds *catalog.Dataset) error {
	table := ds.Schema + "." + ds.Table
	all, err := originColumns(ctx, c.conn, ds.Schema, ds.Table)
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, errTableNotFound):
		c.add(ds, "from", fmt.Sprintf("table %s does not exist in database %s at the origin", table, c.database),
			"create it, or correct from: (postgres:schema.table; unquoted names are folded to lower case, as Postgres does)")
		return nil
	case errors.As(err, &pgErr):
		c.add(ds, "from", fmt.Sprintf("cannot read the columns of %s: %v", table, err), "")
		return nil
	case err != nil:
		return err
	}

	// A missing column is reported once, by columns; copyQuery and
	// retentionPolicy then fail on it too.
	missing := c.columns(ds, all)
	_, query, err := copyQuery(ds, all)
	if err != nil && !errors.Is(err, errMissingColumn) {
		c.add(ds, "", err.Error(), "")
	}
	if _, err := retentionPolicy(ds, all); err != nil && !errors.Is(err, errNoRetention) && !errors.Is(err, errMissingColumn) {
		missing = true // time_column cannot hold a retention_period
		c.add(ds, "acceleration.retention_period", err.Error(), "")
	}

	privileged, rls, err := c.access(ctx, ds)
	if err != nil {
		return err
	}
	// Column privileges can allow the columns a query reads without SELECT
	// on the table: where a query runs, its own answer decides.
	denied, probed := false, false
	if query != "" {
		probe, ok := probeSelect(query)
		if !ok {
			return fmt.Errorf("unexpected refresh statement %q", query)
		}
		err := c.probe(ctx, probe)
		switch {
		case isInsufficientPrivilege(err):
			denied = true
		case isPgError(err):
			key, fix := "acceleration.refresh_sql", "correct refresh_sql's condition: it runs at the origin as written"
			if ds.Acceleration.RefreshSQL == "" {
				key, fix = "", ""
			}
			c.add(ds, key, fmt.Sprintf("the refresh's query fails at the origin: %v; the query: %s", err, probe), fix)
		case err != nil:
			return err
		}
		probed = err == nil || denied
	}
	retentionOK := true
	if pred := ds.RetentionPredicate(); pred != "" {
		probe := "SELECT 1 FROM " + ds.QualifiedTable() + " WHERE (" + pred + ") LIMIT 0"
		err := c.probe(ctx, probe)
		switch {
		case isInsufficientPrivilege(err):
			denied = true
		case isPgError(err):
			retentionOK = false
			c.add(ds, "acceleration.retention_sql", fmt.Sprintf("its condition fails at the origin: %v; the query: %s", err, probe),
				"write the condition over the table's columns in SQL that both Postgres and DuckDB accept: its inverse filters what pgaccel reads of the dataset at the origin")
		case err != nil:
			return err
		}
	}
	if denied || !privileged && !probed {
		c.add(ds, "from", fmt.Sprintf("the refresh role %s (the user of origin.dsn) may not read %s", c.user, table),
			fmt.Sprintf("run GRANT SELECT ON %s TO %s at the origin, or refresh as a role that may", ds.QualifiedTable(), quoteIdent(c.user)))
	}
	if rls {
		c.add(ds, "from", fmt.Sprintf("row level security applies to the refresh role %s on %s: the acceleration would hold only the rows its policies let that role see, and answer every client with them", c.user, table),
			"refresh as the table's owner or a role with BYPASSRLS, or disable row level security on the table")
	}
	if !missing && !denied && retentionOK {
		if _, err := checkFallbackFilter(ctx, c.conn, ds, all); err != nil {
			if !errors.Is(err, errConfig) {
				return err
			}
			c.add(ds, "acceleration.on_zero_results", err.Error(), "")
		}
	}
	if ds.Acceleration.RefreshMode == catalog.RefreshChanges {
		return c.changes(ctx, ds)
	}
	return nil
}

// changes checks what refresh_mode: changes needs of the origin, as a
// refresh meets it (changes.go), creating nothing:
//
//   - logical WAL and Postgres 14 or later;
//   - a refresh role with REPLICATION (or superuser) that the origin lets
//     open a logical replication connection (pg_hba.conf): one is opened
//     and identifies the system, as the stream does before anything else;
//   - a replica identity that is primary_key (or FULL), and a table that
//     can be published (not unlogged or temporary);
//   - the publication: a named one (params.pg_publication) must exist and
//     publish the table; pgaccel's own must publish it already, or the
//     role must be able to do what the refresh runs: CREATE PUBLICATION
//     ... FOR TABLE (CREATE on the database, and owning the table) or,
//     when it exists without the table, ALTER PUBLICATION ... ADD TABLE
//     (owning the publication and the table);
//   - a free replication slot (max_replication_slots), unless the slot
//     exists already.
//
// pgaccel's own publication and slot are named with the instance id of
// runtime.data_dir; before the first run there is none, and they do not
// exist yet.
func (c *originCheck) changes(ctx context.Context, ds *catalog.Dataset) error {
	res := c.conn.ExecParams(ctx, `SELECT current_setting('wal_level'), current_setting('server_version_num')::int,
		(SELECT rolreplication OR rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user),
		current_setting('max_replication_slots')::int, (SELECT count(*) FROM pg_catalog.pg_replication_slots)`, nil, nil, nil, nil).Read()
	if res.Err != nil {
		return res.Err
	}
	row := res.Rows[0]
	if string(row[0]) != "logical" {
		c.add(ds, "acceleration.refresh_mode", fmt.Sprintf("changes needs wal_level = logical at the origin, which has %s", row[0]),
			"set wal_level = logical in the origin's postgresql.conf and restart it")
	}
	if v, _ := strconv.Atoi(string(row[1])); v < 140000 {
		c.add(ds, "acceleration.refresh_mode", fmt.Sprintf("changes needs Postgres 14 or later (binary logical replication), the origin runs %d", v),
			"upgrade the origin, or use refresh_mode: full or append")
	}
	if string(row[2]) != "t" {
		c.add(ds, "acceleration.refresh_mode", fmt.Sprintf("changes needs the refresh role %s to have the REPLICATION attribute", c.user),
			fmt.Sprintf("run ALTER ROLE %s REPLICATION at the origin", quoteIdent(c.user)))
	} else if c.replicationConnection(ctx); c.replication != "ok" {
		c.add(ds, "acceleration.refresh_mode", fmt.Sprintf("the origin refuses the logical replication connection the change stream needs (the user of origin.dsn, replication=database): %s", c.replication),
			fmt.Sprintf("allow it in the origin's pg_hba.conf: a line for database %s and user %s (logical replication connections match the database's name, not the keyword replication)", c.database, c.user))
	}
	if _, err := checkReplicaIdentity(ctx, c.conn, ds); err != nil {
		if !errors.Is(err, errConfig) {
			return err
		}
		c.add(ds, "acceleration.primary_key", err.Error(), "")
	}
	inst, known, err := readInstanceID(c.cfg.Runtime.DataDir)
	if err != nil {
		c.add(ds, "", err.Error(), "")
	}
	n := namesFor(ds, inst)
	ownNamesKnown := known || !n.ownPublication
	if err := c.publication(ctx, ds, n, ownNamesKnown); err != nil {
		return err
	}
	slotKnown := known || ds.Params[catalog.ParamReplicationSlot] != ""
	slotExists := false
	if slotKnown {
		slot, err := readSlot(ctx, c.conn, n.slot)
		if err != nil {
			return err
		}
		slotExists = slot.exists
	}
	if maxSlots, _ := strconv.Atoi(string(row[3])); !slotExists {
		if used, _ := strconv.Atoi(string(row[4])); used >= maxSlots {
			c.add(ds, "acceleration.refresh_mode", fmt.Sprintf("changes needs a replication slot, and the origin's %d (max_replication_slots) are all taken", maxSlots),
				"raise max_replication_slots at the origin (a restart), or drop slots no longer used (SELECT slot_name, active FROM pg_replication_slots)")
		}
	}
	return nil
}

// replicationConnection opens a logical replication connection to the
// origin once, as the change stream does, and identifies the system; it
// records the outcome in c.replication: "ok", or why it failed (the
// origin answers the checks' own connection, so a failure is its refusal).
func (c *originCheck) replicationConnection(ctx context.Context) {
	if c.replication != "" {
		return
	}
	repl, err := connectReplication(ctx, c.cfg.Origin.DSN)
	if err == nil {
		_, err = pglogrepl.IdentifySystem(ctx, repl)
		repl.Close(context.Background())
	}
	c.replication = "ok"
	if err != nil {
		c.replication = c.sc.text(err)
	}
}

// publication checks that the dataset's publication publishes the table,
// or that the refresh role may make it do so as the refresh would
// (ensurePublication). known is false when pgaccel's own publication is
// not named yet (no instance id): it does not exist, and is created.
func (c *originCheck) publication(ctx context.Context, ds *catalog.Dataset, n streamNames, known bool) error {
	res := c.conn.ExecParams(ctx, `SELECT c.relpersistence, pg_catalog.pg_has_role(c.relowner, 'USAGE'),
		pg_catalog.has_database_privilege(current_database(), 'CREATE'),
		(SELECT pg_catalog.pg_has_role(p.pubowner, 'USAGE') FROM pg_catalog.pg_publication p WHERE p.pubname = $3),
		EXISTS (SELECT 1 FROM pg_catalog.pg_publication_tables WHERE pubname = $3 AND schemaname = $1 AND tablename = $2)
		FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace ns ON ns.oid = c.relnamespace
		WHERE ns.nspname = $1 AND c.relname = $2`,
		[][]byte{[]byte(ds.Schema), []byte(ds.Table), []byte(n.publication)}, nil, nil, nil).Read()
	if res.Err != nil {
		return res.Err
	}
	if len(res.Rows) != 1 {
		return fmt.Errorf("table %s.%s vanished during the checks", ds.Schema, ds.Table)
	}
	row := res.Rows[0]
	if p := string(row[0]); p != "p" {
		c.add(ds, "from", fmt.Sprintf("%s is an unlogged or temporary table, which logical replication cannot publish", ds.QualifiedTable()),
			fmt.Sprintf("run ALTER TABLE %s SET LOGGED at the origin, or use refresh_mode: full or append", ds.QualifiedTable()))
		return nil
	}
	ownsTable, mayCreate := string(row[1]) == "t", string(row[2]) == "t"
	exists, ownsPub, has := known && row[3] != nil, string(row[3]) == "t", known && string(row[4]) == "t"
	key := "params." + catalog.ParamPublication
	switch {
	case has:
	case !n.ownPublication && !exists:
		c.add(ds, key, fmt.Sprintf("publication %s does not exist at the origin", n.publication),
			fmt.Sprintf("run CREATE PUBLICATION %s FOR TABLE %s at the origin, or remove the param to let pgaccel create one", quoteIdent(n.publication), ds.QualifiedTable()))
	case !n.ownPublication:
		c.add(ds, key, fmt.Sprintf("publication %s does not publish %s at the origin", n.publication, ds.QualifiedTable()),
			fmt.Sprintf("run ALTER PUBLICATION %s ADD TABLE %s at the origin", quoteIdent(n.publication), ds.QualifiedTable()))
	case exists && (!ownsPub || !ownsTable):
		c.add(ds, "acceleration.refresh_mode", fmt.Sprintf("the refresh role %s may not add %s to publication %s, as the refresh would (ALTER PUBLICATION ... ADD TABLE needs the role to own both)", c.user, ds.QualifiedTable(), n.publication),
			fmt.Sprintf("run ALTER PUBLICATION %s ADD TABLE %s at the origin as their owner", quoteIdent(n.publication), ds.QualifiedTable()))
	case !exists && (!mayCreate || !ownsTable):
		var lacks []string
		if !mayCreate {
			lacks = append(lacks, "CREATE on database "+c.database)
		}
		if !ownsTable {
			lacks = append(lacks, "ownership of "+ds.QualifiedTable())
		}
		c.add(ds, "acceleration.refresh_mode", fmt.Sprintf("the refresh role %s may not create the publication the change stream reads (CREATE PUBLICATION ... FOR TABLE %s needs CREATE on the database and ownership of the table), and it lacks %s", c.user, ds.QualifiedTable(), strings.Join(lacks, " and ")),
			fmt.Sprintf("create one yourself (CREATE PUBLICATION %s_pub FOR TABLE %s) and name it with params.%s, or grant the role what it lacks", sanitizeName(ds.Table), ds.QualifiedTable(), catalog.ParamPublication))
	}
	return nil
}

// columns reports each column the dataset names that the table lacks
// (time_column, time_partition_column, primary_key, refresh_sql's list),
// and whether there was one.
func (c *originCheck) columns(ds *catalog.Dataset, all []accelerator.ColumnSpec) (missing bool) {
	has := make(map[string]bool, len(all))
	names := make([]string, len(all))
	for i, col := range all {
		has[col.Name] = true
		names[i] = col.Name
	}
	list := strings.Join(names, ", ")
	if len(list) > 200 {
		list = list[:197] + "..."
	}
	check := func(key, col string) {
		if col != "" && !has[col] {
			missing = true
			c.add(ds, key, fmt.Sprintf("%q is not a column of %s.%s", col, ds.Schema, ds.Table),
				"name one of its columns: "+list)
		}
	}
	check("time_column", ds.TimeColumn)
	check("time_partition_column", ds.TimePartitionColumn)
	for _, k := range ds.Acceleration.PrimaryKey {
		check("acceleration.primary_key", k)
	}
	if ds.Acceleration.RefreshSQL != "" {
		sel, _, ok := ds.RefreshSelect()
		for _, n := range sel {
			check("acceleration.refresh_sql", n)
		}
		if !ok {
			missing = true // the config check reports its form
		}
	}
	return missing
}

// access asks the origin whether the refresh role has SELECT on the table
// and whether row level security applies to it there.
func (c *originCheck) access(ctx context.Context, ds *catalog.Dataset) (privileged, rls bool, err error) {
	res := c.conn.ExecParams(ctx, `SELECT has_table_privilege(c.oid, 'SELECT'), row_security_active(c.oid)
		FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = $2`,
		[][]byte{[]byte(ds.Schema), []byte(ds.Table)}, nil, nil, nil).Read()
	if res.Err != nil {
		return false, false, res.Err
	}
	if len(res.Rows) != 1 {
		return false, false, fmt.Errorf("table %s.%s vanished during the checks", ds.Schema, ds.Table)
	}
	return string(res.Rows[0][0]) == "t", string(res.Rows[0][1]) == "t", nil
}

// probe runs a query that returns no rows; the error is the origin's.
func (c *originCheck) probe(ctx context.Context, sql string) error {
	return c.conn.ExecParams(ctx, sql, nil, nil, nil, nil).Read().Err
}

// probeSelect turns the refresh's COPY (copyQuery) into its SELECT with
// LIMIT 0, which plans the same query and reads no rows.
func probeSelect(copySQL string) (string, bool) {
	inner, ok := strings.CutPrefix(copySQL, "COPY (")
	if !ok {
		return "", false
	}
	inner, ok = strings.CutSuffix(inner, ") TO STDOUT (FORMAT binary)")
	if !ok {
		return "", false
	}
	return inner + " LIMIT 0", true
}

func isPgError(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr)
}

func isInsufficientPrivilege(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == pgdef.InsufficientPrivilege
}
