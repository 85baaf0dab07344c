package accelerator

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
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

// checkpointFormat versions the checkpoint row's layout.
const checkpointFormat = 1

// checkpoint is the row of checkpointTable.
type checkpoint struct {
	dataset     string
	lastRefresh time.Time
	rows        int64
	columns     []storedColumn
	refreshSQL  string
}

// storedColumn is one column in the checkpoint's JSON.
type storedColumn struct {
	ColumnSpec
	Accelerated bool
}

// swap replaces the dataset's table by the loaded one and writes the
// checkpoint, in one DuckDB transaction: readers see the old table until the
// commit and the new one after it, never neither.
func (e *Engine) swap(ctx context.Context, conn *sql.Conn, name string, cp checkpoint) (err error) {
	cols, err := json.Marshal(cp.columns)
	if err != nil {
		return fmt.Errorf("encode checkpoint columns: %w", err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin swap: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	target := tableRef(name, name)
	cpRef := tableRef(name, checkpointTable)
	stmts := []struct {
		sql  string
		args []any
	}{
		{"DROP TABLE IF EXISTS " + target, nil},
		{"ALTER TABLE " + tableRef(name, loadTable) + " RENAME TO " + quoteIdent(name), nil},
		{"CREATE TABLE IF NOT EXISTS " + cpRef + ` (
			format INTEGER NOT NULL,
			dataset VARCHAR NOT NULL,
			last_refresh TIMESTAMPTZ NOT NULL,
			row_count BIGINT NOT NULL,
			columns VARCHAR NOT NULL,
			refresh_sql VARCHAR NOT NULL)`, nil},
		{"DELETE FROM " + cpRef, nil},
		{"INSERT INTO " + cpRef + " VALUES (?, ?, ?, ?, ?, ?)",
			[]any{checkpointFormat, cp.dataset, cp.lastRefresh, cp.rows, string(cols), cp.refreshSQL}},
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s.sql, s.args...); err != nil {
			return fmt.Errorf("swap: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit swap: %w", err)
	}
	return nil
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
		info       TableInfo
		lastUpdate time.Time
	)
	err = e.db.QueryRowContext(ctx, "SELECT format, last_refresh, row_count, columns, refresh_sql FROM "+
		tableRef(name, checkpointTable)+" LIMIT 1").Scan(&format, &lastUpdate, &info.Rows, &cols, &info.RefreshSQL)
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
	info.LastRefresh = lastUpdate
	for _, c := range stored {
		info.Specs = append(info.Specs, c.ColumnSpec)
		info.Columns = append(info.Columns, columnInfo(c.ColumnSpec, c.Accelerated))
	}
	return &info, nil
}

// columnInfo is the registry's view of a column.
func columnInfo(c ColumnSpec, accelerated bool) catalog.ColumnInfo {
	return catalog.ColumnInfo{
		Name:        c.Name,
		TypeOID:     c.TypeOID,
		TypeMod:     c.TypeMod,
		TypeName:    c.TypeName,
		Accelerated: accelerated,

		BinaryCollation: c.BinaryCollation,
	}
}
