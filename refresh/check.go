package refresh

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
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
//     not hide rows from it.
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
	c := &originCheck{conn: conn, user: string(res.Rows[0][0]), database: string(res.Rows[0][1])}
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
	problems       []catalog.Problem
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

// changes checks what refresh_mode: changes needs of the origin: logical
// WAL, Postgres 14 or later, a refresh role with REPLICATION, a replica
// identity that is primary_key (or FULL), and a named publication that
// exists and publishes the table.
func (c *originCheck) changes(ctx context.Context, ds *catalog.Dataset) error {
	res := c.conn.ExecParams(ctx, `SELECT current_setting('wal_level'), current_setting('server_version_num')::int,
		(SELECT rolreplication OR rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user)`, nil, nil, nil, nil).Read()
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
	}
	if _, err := checkReplicaIdentity(ctx, c.conn, ds); err != nil {
		if !errors.Is(err, errConfig) {
			return err
		}
		c.add(ds, "acceleration.primary_key", err.Error(), "")
	}
	if pub := ds.Params[catalog.ParamPublication]; pub != "" {
		res := c.conn.ExecParams(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_publication_tables WHERE pubname = $1 AND schemaname = $2 AND tablename = $3)`,
			[][]byte{[]byte(pub), []byte(ds.Schema), []byte(ds.Table)}, nil, nil, nil).Read()
		if res.Err != nil {
			return res.Err
		}
		if string(res.Rows[0][0]) != "t" {
			c.add(ds, "params."+catalog.ParamPublication, fmt.Sprintf("publication %s does not publish %s at the origin", pub, ds.QualifiedTable()),
				fmt.Sprintf("run CREATE PUBLICATION %s FOR TABLE %s (or ALTER PUBLICATION ... ADD TABLE)", quoteIdent(pub), ds.QualifiedTable()))
		}
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
	return errors.As(err, &pgErr) && pgErr.Code == "42501"
}
