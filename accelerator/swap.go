package accelerator

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
)

// Table names inside a dataset's database, next to main."<name>".
const (
	// loadTable receives a load before it is swapped in.
	loadTable = "_pgaccel_load"
	// checkpointTable holds one row: what the current table holds and when
	// it was loaded. It is written in the swap's transaction, so it always
	// describes the table beside it.
	checkpointTable = "_pgaccel_checkpoint"
)

// checkpointFormat versions the checkpoint row's layout. Format 2 added
// primary_key, format 3 replication; a file of format 2 is read as one
// without replication, a file with another format is not served until a
// refresh rewrites it.
const checkpointFormat = 3

// checkpointFormatNoReplication is the format before replication.
const checkpointFormatNoReplication = 2

// checkpoint is the row of checkpointTable.
type checkpoint struct {
	dataset     string
	lastRefresh time.Time
	rows        int64
	columns     []storedColumn
	refreshSQL  string
	primaryKey  []string
	// replication is where a changes dataset's stream stands, nil for the
	// other refresh modes.
	replication *Replication
}

// storedColumn is one column in the checkpoint's JSON.
type storedColumn struct {
	ColumnSpec
	Accelerated bool
	// NotAccelerated is catalog.ColumnInfo's: why the column is left out.
	NotAccelerated string `json:",omitempty"`
}

// swap replaces the dataset's table by the loaded one and writes the
// checkpoint, in one DuckDB transaction: readers see the old table until the
// commit and the new one after it, never neither.
func (e *Engine) swap(ctx context.Context, conn *sql.Conn, name string, cp checkpoint, inPlace bool) (err error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin swap: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	stmts := []string{
		"DROP TABLE IF EXISTS " + tableRef(name, name),
		"ALTER TABLE " + tableRef(name, loadTable) + " RENAME TO " + quoteIdent(name),
	}
	if q := keyIndexSQL(tableRef(name, name), cp.columns, inPlace); q != "" {
		stmts = append(stmts, q)
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("swap: %w", err)
		}
	}
	if err := writeCheckpoint(ctx, tx, tableRef(name, checkpointTable), cp); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit swap: %w", err)
	}
	e.catalogChanged()
	return nil
}

// keyIndexName names the index on a dataset's primary-key column.
const keyIndexName = "_pgaccel_key"

// keyIndexSQL is the statement that creates the key index on table (a
// quoted reference) holding cols, "" when it gets none: no indexable key
// (keyIndex), or rows that change in place. DuckDB cannot rename a table
// that has an index: it runs after any rename.
func keyIndexSQL(table string, cols []storedColumn, inPlace bool) string {
	col, ok := keyIndex(cols)
	if !ok || inPlace {
		return ""
	}
	return "CREATE INDEX " + quoteIdent(keyIndexName) + " ON " + table + " (" + quoteIdent(col) + ")"
}

// storedColumns are the checkpoint's view of a stored table's columns.
func (t *TableInfo) storedColumns() []storedColumn {
	cols := make([]storedColumn, len(t.Specs))
	for i, s := range t.Specs {
		cols[i] = storedColumn{ColumnSpec: s, Accelerated: t.Columns[i].Accelerated}
	}
	return cols
}

// keyIndex returns the column to index: the origin table's primary key when
// it is one column of a type DuckDB indexes, loaded as is. A query that
// fetches rows by that key (WHERE id = $1) then reads the index (an ART)
// instead of scanning the table: on a million rows in random order, about
// 0.2 ms instead of 0.6 ms, and the gap grows with the table. Composite keys
// are left unindexed: building an index takes about 0.1 s per million
// rows, paid by every full refresh.
//
// Only tables replaced whole are indexed. The rows of a dataset that
// changes in place (a change stream, append merges, retention) are not:
// with an ART index on the table DuckDB neither reclaims deleted rows
// (duckdb issue 19468) nor checkpoints only what changed. Measured with
// DuckDB 1.5.6 on 50,000 rows of 1.3 KB, 2,000 random keys deleted and
// inserted per batch, a checkpoint after every 5,000 changes doubled the
// file with the index (44 → 93 MiB) and grew it by about 7 % without.
// Point reads of such datasets are served by the point index, which
// follows the changes (pointdelta.go), and the rewrites order the rows by
// key, so that DuckDB's zone maps keep a scan by key short.
func keyIndex(cols []storedColumn) (string, bool) {
	for _, c := range cols {
		if !c.Key || !c.Accelerated {
			continue
		}
		t, ok := resolveType(c.ColumnSpec)
		if !ok {
			return "", false
		}
		switch t.kind {
		case kindInt2, kindInt4, kindInt8, kindText, kindBpchar, kindUUID, kindDate, kindTimestamp, kindTimestamptz:
			return c.Name, true
		}
		return "", false
	}
	return "", false
}

// writeCheckpoint replaces the checkpoint row of a dataset's database,
// the table cpRef, inside tx.
func writeCheckpoint(ctx context.Context, tx execer, cpRef string, cp checkpoint) error {
	cols, err := json.Marshal(cp.columns)
	if err != nil {
		return fmt.Errorf("encode checkpoint columns: %w", err)
	}
	pk, err := json.Marshal(cp.primaryKey)
	if err != nil {
		return fmt.Errorf("encode checkpoint primary key: %w", err)
	}
	repl := ""
	if cp.replication != nil {
		b, err := json.Marshal(cp.replication)
		if err != nil {
			return fmt.Errorf("encode checkpoint replication: %w", err)
		}
		repl = string(b)
	}
	stmts := []struct {
		sql  string
		args []any
	}{
		{"DROP TABLE IF EXISTS " + cpRef, nil},
		{"CREATE TABLE " + cpRef + ` (
			format INTEGER NOT NULL,
			dataset VARCHAR NOT NULL,
			last_refresh TIMESTAMPTZ NOT NULL,
			row_count BIGINT NOT NULL,
			columns VARCHAR NOT NULL,
			refresh_sql VARCHAR NOT NULL,
			primary_key VARCHAR NOT NULL,
			replication VARCHAR NOT NULL)`, nil},
		{"INSERT INTO " + cpRef + " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			[]any{checkpointFormat, cp.dataset, cp.lastRefresh, cp.rows, string(cols), cp.refreshSQL, string(pk), repl}},
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s.sql, s.args...); err != nil {
			return fmt.Errorf("write checkpoint: %w", err)
		}
	}
	return nil
}

// canMerge reports whether an append load can merge into the current
// table: there is one, and its columns are the loaded ones. It returns the
// current table's columns: one that an earlier load left out for a value it
// met stays left out (NULL stands in that value) until a load replaces the
// table.
func (e *Engine) canMerge(ctx context.Context, conn *sql.Conn, name string, specs []ColumnSpec) ([]catalog.ColumnInfo, bool, error) {
	info, err := e.storedInfo(ctx, name)
	if err != nil || info == nil {
		return nil, false, err
	}
	if !SpecsMergeable(info.Specs, specs) {
		return nil, false, nil
	}
	return info.Columns, true, nil
}

// SpecsMergeable reports whether rows loaded as columns now can join rows
// stored as columns was (mergeable, column by column).
func SpecsMergeable(was, now []ColumnSpec) bool {
	if len(was) != len(now) {
		return false
	}
	for i := range was {
		if !mergeable(was[i], now[i]) {
			return false
		}
	}
	return true
}

// mergeable reports whether rows loaded as column now can join rows
// stored as column was: the same column, whose enum (if it is one) lost
// no label (ALTER TYPE ... ADD VALUE leaves the stored labels valid; a
// renamed label leaves stored rows holding the old name).
func mergeable(was, now ColumnSpec) bool {
	wl, nl := was.EnumLabels, now.EnumLabels
	was.EnumLabels, now.EnumLabels = nil, nil
	if !reflect.DeepEqual(was, now) || (len(wl) == 0) != (len(nl) == 0) {
		return false
	}
	return EnumLabelsKept(wl, nl)
}

// EnumLabelsKept reports whether every label of was is still in now.
func EnumLabelsKept(was, now []string) bool {
	have := make(map[string]bool, len(now))
	for _, l := range now {
		have[l] = true
	}
	for _, l := range was {
		if !have[l] {
			return false
		}
	}
	return true
}

// merge adds the load table's rows to the dataset's table, deletes the rows
// matching any of the del predicates, and rewrites the checkpoint, in one
// transaction; it returns the table's row count, the rows deleted and the
// commit time. See AppendMerge. The keys it put and deleted go to the
// point index (pointdelta.go), which the load's new data generation then
// finds current.
func (e *Engine) merge(ctx context.Context, conn *sql.Conn, name string, cp checkpoint, m *AppendMerge, del []string) (total, deleted int64, completed time.Time, err error) {
	var delta pointDelta
	keyCol, keySpec := "", ColumnSpec{}
	if info, err := e.storedInfo(ctx, name); err != nil {
		return 0, 0, time.Time{}, err
	} else if info != nil {
		keyCol, keySpec = pointKeyColumn(info)
	}
	if keyCol == "" {
		delta.lost = true
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("begin merge: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	target, load := tableRef(name, name), tableRef(name, loadTable)
	var stmts []string
	if len(m.PrimaryKey) > 0 {
		keys := make([]string, len(m.PrimaryKey))
		on := make([]string, len(m.PrimaryKey))
		for i, k := range m.PrimaryKey {
			keys[i] = quoteIdent(k)
			on[i] = "t." + keys[i] + " = l." + keys[i]
		}
		tc := quoteIdent(m.TimeColumn)
		stmts = []string{
			// The newest loaded version of each key ...
			"DELETE FROM " + load + " WHERE rowid IN (SELECT rowid FROM (SELECT rowid, row_number() OVER (PARTITION BY " +
				strings.Join(keys, ", ") + " ORDER BY " + tc + " DESC NULLS LAST) AS n FROM " + load + ") WHERE n > 1)",
			// ... replaces the stored one unless that is newer.
			"DELETE FROM " + target + " AS t USING " + load + " AS l WHERE " + strings.Join(on, " AND ") +
				" AND NOT coalesce(t." + tc + " > l." + tc + ", false)",
			"DELETE FROM " + load + " AS l USING " + target + " AS t WHERE " + strings.Join(on, " AND "),
		}
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return 0, 0, time.Time{}, fmt.Errorf("merge appended rows: %w", err)
		}
	}
	// The inserted rows' keys are the merge's puts: with a primary_key they
	// replace their keys' rows, without one they are added beside them.
	insert := "INSERT INTO " + target + " SELECT * FROM " + load
	if len(m.PrimaryKey) == 0 {
		overlap := "false"
		if m.Overlap != "" {
			overlap = m.Overlap
		}
		insert += " EXCEPT ALL SELECT * FROM " + target + " WHERE " + overlap
		delta.added = true
	}
	if _, err := delta.exec(ctx, tx, insert, keyCol, keySpec, false); err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("merge appended rows: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "DROP TABLE "+load); err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("merge appended rows: %w", err)
	}
	if len(del) > 0 {
		deleted, err = delta.exec(ctx, tx, "DELETE FROM "+target+" AS "+quoteIdent(name)+" WHERE "+orPredicates(del), keyCol, keySpec, true)
		if err != nil {
			return 0, 0, time.Time{}, fmt.Errorf("apply retention after the merge: %w", err)
		}
	}
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+target).Scan(&total); err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("count merged rows: %w", err)
	}
	cp.rows, cp.lastRefresh = total, time.Now()
	if err := writeCheckpoint(ctx, tx, tableRef(name, checkpointTable), cp); err != nil {
		return 0, 0, time.Time{}, err
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("commit merge: %w", err)
	}
	e.pointsFollow(name, &delta)
	e.catalogChanged()
	return total, deleted, cp.lastRefresh, nil
}

// DeleteWhere removes the rows of the dataset's table for which any of the
// DuckDB predicates holds (a retention pass), and updates the checkpoint's
// row count in the same transaction. It waits for a load in progress.
func (e *Engine) DeleteWhere(ctx context.Context, dataset string, predicates []string) (deleted, total int64, err error) {
	h, err := e.handle(dataset)
	if err != nil {
		return 0, 0, err
	}
	e.markInPlace(h)
	h.lockLoad()
	defer h.loadMu.Unlock()
	info, err := e.storedInfo(ctx, dataset)
	if err != nil || info == nil {
		return 0, 0, err
	}
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	target := tableRef(dataset, dataset)
	q := "DELETE FROM " + target + " AS " + quoteIdent(dataset) + " WHERE " + orPredicates(predicates)
	// The deleted keys go to the point index.
	var delta pointDelta
	keyCol, keySpec := pointKeyColumn(info)
	if keyCol == "" {
		delta.lost = true
	}
	if deleted, err = delta.exec(ctx, tx, q, keyCol, keySpec, true); err != nil {
		return 0, 0, fmt.Errorf("retention delete: %w", err)
	}
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+target).Scan(&total); err != nil {
		return 0, 0, err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE "+tableRef(dataset, checkpointTable)+" SET row_count = ?", total); err != nil {
		return 0, 0, fmt.Errorf("update checkpoint: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, fmt.Errorf("commit retention delete: %w", err)
	}
	if deleted > 0 {
		// Refresh publishes a new data generation when rows were deleted.
		e.pointsFollow(dataset, &delta)
		e.compactLater(h, dataset)
	}
	return deleted, total, nil
}

// orPredicates joins predicates with OR, each parenthesized.
func orPredicates(preds []string) string {
	parts := make([]string, len(preds))
	for i, p := range preds {
		parts[i] = "(" + p + ")"
	}
	return strings.Join(parts, " OR ")
}

// Stored describes what the dataset's acceleration holds now, from its
// checkpoint; nil when it holds nothing (or is not attached).
func (e *Engine) Stored(ctx context.Context, dataset string) (*TableInfo, error) {
	return e.storedInfo(ctx, dataset)
}

// storedInfo reads the checkpoint of the dataset's database; nil when there
// is no table or no checkpoint describing it.
func (e *Engine) storedInfo(ctx context.Context, name string) (*TableInfo, error) {
	var n int
	err := e.db.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_tables()
		WHERE database_name = ? AND schema_name = 'main' AND table_name IN (?, ?)`,
		DatabaseName(name), name, checkpointTable).Scan(&n)
	if err != nil {
		return nil, fmt.Errorf("look up stored table: %w", err)
	}
	if n != 2 {
		return nil, nil
	}
	var (
		format     int
		cols       string
		pk         string
		info       TableInfo
		lastUpdate time.Time
	)
	var repl string
	err = e.db.QueryRowContext(ctx, "SELECT format FROM "+tableRef(name, checkpointTable)+" LIMIT 1").Scan(&format)
	switch {
	case err == nil && format == checkpointFormat:
		err = e.db.QueryRowContext(ctx, "SELECT last_refresh, row_count, columns, refresh_sql, primary_key, replication FROM "+
			tableRef(name, checkpointTable)+" LIMIT 1").Scan(&lastUpdate, &info.Rows, &cols, &info.RefreshSQL, &pk, &repl)
	case err == nil && format == checkpointFormatNoReplication:
		err = e.db.QueryRowContext(ctx, "SELECT last_refresh, row_count, columns, refresh_sql, primary_key FROM "+
			tableRef(name, checkpointTable)+" LIMIT 1").Scan(&lastUpdate, &info.Rows, &cols, &info.RefreshSQL, &pk)
		format = checkpointFormat
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	if format != checkpointFormat {
		e.log.Warn().Str("dataset", name).Int("format", format).
			Msg("acceleration checkpoint has an unknown format; the stored data is not served until a refresh")
		return nil, nil
	}
	var stored []storedColumn
	if err := json.Unmarshal([]byte(cols), &stored); err != nil {
		return nil, fmt.Errorf("decode checkpoint columns: %w", err)
	}
	if err := json.Unmarshal([]byte(pk), &info.PrimaryKey); err != nil {
		return nil, fmt.Errorf("decode checkpoint primary key: %w", err)
	}
	if repl != "" {
		info.Replication = &Replication{}
		if err := json.Unmarshal([]byte(repl), info.Replication); err != nil {
			return nil, fmt.Errorf("decode checkpoint replication: %w", err)
		}
	}
	info.LastRefresh = lastUpdate
	for _, c := range stored {
		info.Specs = append(info.Specs, c.ColumnSpec)
		ci := columnInfo(c.ColumnSpec, c.Accelerated)
		if c.NotAccelerated != "" {
			ci.NotAccelerated = c.NotAccelerated
		}
		info.Columns = append(info.Columns, ci)
	}
	return &info, nil
}

// ColumnInfos are the registry's view of cols as a load records them: a
// column whose type DuckDBType cannot hold is not accelerated.
func ColumnInfos(cols []ColumnSpec) []catalog.ColumnInfo {
	out := make([]catalog.ColumnInfo, len(cols))
	for i, c := range cols {
		_, ok := resolveType(c)
		out[i] = columnInfo(c, ok)
	}
	return out
}

// leftOutWhy says why a column of c's type is not held.
func leftOutWhy(c ColumnSpec) string {
	switch {
	case c.TypeOID == pgdef.OIDNumeric && c.TypeMod < 4:
		return "numeric without a declared scale and no value to take the scale from (the acceleration holds such a column at the one display scale its values share)"
	case c.TypeOID == pgdef.OIDNumeric:
		return "type " + c.TypeName + " is wider than 38 digits or has a scale outside 0..precision, which DuckDB's DECIMAL cannot hold"
	case c.ElemOID != 0:
		return "type " + c.TypeName + ": arrays of this element type are not held by the acceleration"
	}
	switch c.TypeOID {
	case pgdef.OIDMacaddr, pgdef.OIDMacaddr8: // macaddr, macaddr8
		return "type " + c.TypeName + " is not held by the acceleration (inet and cidr are, as their text)"
	case pgdef.OIDTimetz:
		return "type " + c.TypeName + " (time with time zone) is not held by the acceleration"
	case pgdef.OIDMoney:
		return "type money prints by lc_monetary; the acceleration does not hold it"
	}
	return "type " + c.TypeName + " is not held by the acceleration (README: Types and values)"
}

// staleCollation says why the collation or case locale a stored column
// was established with does not hold in this process (another C library
// or ICU release, or the locale missing), "" when it holds or there is
// none.
func staleCollation(c ColumnSpec) string {
	locale := c.CollationLocale
	if locale == "" {
		locale = c.CaseLocale
	}
	if locale == "" {
		return ""
	}
	lib := "glibc"
	if IsICULocale(locale) {
		lib = "the ICU collator"
	}
	here, err := LocaleVersion(locale)
	switch {
	case err != nil:
		return "its collation was established for " + lib + " " + c.CollationVersion + " and this process cannot load it (" + err.Error() + "); the next load establishes it again"
	case here != c.CollationVersion:
		return "its collation was established for " + lib + " " + c.CollationVersion + " and this process runs on " + lib + " " + here + "; the next load establishes it again"
	case c.CollationLocale != "" && LocaleAvailable(c.CollationLocale) != nil,
		c.CaseLocale != "" && CaseLocaleAvailable(c.CaseLocale) != nil:
		return "its collation was established for " + lib + " " + c.CollationVersion + " and this process lacks its locale; the next load establishes it again"
	}
	return ""
}

// columnInfo is the registry's view of a column, accelerated or left out
// for its type.
func columnInfo(c ColumnSpec, accelerated bool) catalog.ColumnInfo {
	why := ""
	if !accelerated {
		why = leftOutWhy(c)
	}
	locale, note := c.CollationLocale, c.CollationNote
	caseLocale, caseNote := c.CaseLocale, c.CaseNote
	if stale := staleCollation(c); stale != "" {
		if locale != "" {
			locale, note = "", stale
		}
		if caseLocale != "" {
			caseLocale, caseNote = "", stale
		}
	}
	// Held as Postgres sends it: a numeric as text (which has no one
	// scale, whatever refresh measured), an array as its binary form.
	t, held := resolveType(c)
	numericText := accelerated && held && t.kind == kindNumericText
	heldScale := c.HeldScale
	if numericText {
		heldScale = nil
	}
	return catalog.ColumnInfo{
		NotAccelerated: why,
		Name:           c.Name,
		TypeOID:        c.TypeOID,
		TypeMod:        c.TypeMod,
		TypeName:       c.TypeName,
		Accelerated:    accelerated,

		BinaryCollation: c.BinaryCollation,
		CollationLocale: locale,
		CollationNote:   note,
		CaseLocale:      caseLocale,
		CaseNote:        caseNote,
		ASCIICase:       c.ASCIICase,
		Unique:          c.Unique,
		KeyPart:         c.KeyPart,
		RelOID:          c.RelOID,
		AttNum:          c.AttNum,
		TypLen:          c.TypLen,
		EnumLabels:      c.EnumLabels,
		HeldScale:       heldScale,
		NumericText:     numericText,
		ValueScale:      c.ValueScale,
		ValueWidth:      c.ValueWidth,
		ArrayBinary:     accelerated && held && t.kind == kindArrayBinary,
	}
}
