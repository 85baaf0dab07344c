package benchutil

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ConnectSimple opens a pgx connection with the simple protocol.
func ConnectSimple(ctx context.Context, dsn string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	return pgx.ConnectConfig(ctx, cfg)
}

// TextRows runs sql with the simple protocol and returns every row as
// text, its fields joined by "|" and NULL written as "NULL".
func TextRows(ctx context.Context, conn *pgconn.PgConn, sql string) ([]string, error) {
	results, err := conn.Exec(ctx, sql).ReadAll()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range results {
		if r.Err != nil {
			return nil, r.Err
		}
		for _, row := range r.Rows {
			fields := make([]string, len(row))
			for i, v := range row {
				if v == nil {
					fields[i] = "NULL"
				} else {
					fields[i] = string(v)
				}
			}
			out = append(out, strings.Join(fields, "|"))
		}
	}
	return out, nil
}
