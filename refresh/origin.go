package refresh

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
)

// This file reads the origin: its connection, the columns of a dataset's
// table, and the binary COPY of its rows.

// applicationName names refresh connections in pg_stat_activity.
const applicationName = "pgaccel refresh"

// connectOrigin connects to the origin for one refresh.
func connectOrigin(ctx context.Context, dsn string) (*pgconn.PgConn, error) {
	return connectOriginWith(ctx, dsn, nil)
}

// connectOriginWith is connectOrigin with startup parameters set over the
// DSN's (a replication connection's replication=database).
func connectOriginWith(ctx context.Context, dsn string, params map[string]string) (*pgconn.PgConn, error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		// The parse error may quote the DSN, password included.
		return nil, errors.New("connect to origin: origin.dsn is not a valid connection string")
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = applicationName
	}
	for k, v := range params {
		cfg.RuntimeParams[k] = v
	}
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to origin: %w", err)
	}
	return conn, nil
}

// columnsSQL lists a table's columns in attnum order. Domains are described
// by their base type (what binary COPY sends); array columns carry their
// element type; the last fields say whether the column alone is the key of
// a unique index, its position in the primary key (0: none), and whether
// its case maps under the C or POSIX LC_CTYPE, then the table's oid, the
// column's attnum and its (base) type's typlen, as a RowDescription gives
// them. Then the collation's facts (collationFacts) and, for an enum
// (or a domain over one), its labels in their sort order as a JSON array.
const columnsSQL = `
SELECT a.attname,
       COALESCE(NULLIF(t.typbasetype, 0), a.atttypid),
       CASE WHEN t.typbasetype <> 0 THEN t.typtypmod ELSE a.atttypmod END,
       format_type(a.atttypid, a.atttypmod),
       CASE WHEN bt.typcategory = 'A' THEN bt.typelem ELSE 0 END,
       CASE WHEN a.attcollation = 0 THEN true
            ELSE COALESCE((SELECT CASE WHEN co.collprovider = 'd'
                                       THEN (SELECT d.datlocprovider = 'c' AND d.datcollate IN ('C', 'POSIX') OR d.datlocprovider = 'b'
                                             FROM pg_catalog.pg_database d WHERE d.datname = current_database())
                                       ELSE co.collprovider = 'c' AND co.collcollate IN ('C', 'POSIX') OR co.collprovider = 'b' END
                           FROM pg_catalog.pg_collation co WHERE co.oid = a.attcollation), false) END,
       EXISTS (SELECT 1 FROM pg_catalog.pg_index i
               WHERE i.indrelid = a.attrelid AND i.indisunique AND i.indisvalid AND i.indnkeyatts = 1
                 AND i.indkey[0] = a.attnum AND i.indpred IS NULL AND i.indexprs IS NULL),
       COALESCE((SELECT k.ord FROM pg_catalog.pg_index i,
                        unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
                 WHERE i.indrelid = a.attrelid AND i.indisprimary AND k.attnum = a.attnum AND k.ord <= i.indnkeyatts), 0),
       CASE WHEN a.attcollation = 0 THEN false
            ELSE COALESCE((SELECT CASE WHEN co.collprovider = 'd'
                                       THEN (SELECT d.datlocprovider = 'c' AND d.datctype IN ('C', 'POSIX')
                                             FROM pg_catalog.pg_database d WHERE d.datname = current_database())
                                       ELSE co.collprovider = 'c' AND co.collctype IN ('C', 'POSIX') END
                           FROM pg_catalog.pg_collation co WHERE co.oid = a.attcollation), false) END,
       a.attrelid, a.attnum, bt.typlen,
       CASE WHEN a.attcollation = 0 THEN NULL
            ELSE (SELECT CASE WHEN co.collprovider = 'd'
                              THEN (SELECT d.datlocprovider::text || '|' || ` + accelerator.DatabaseLocaleSQL + ` || '|' || coalesce(d.datcollversion, '') || '|pg_catalog."default"|t|' ||
                                           CASE WHEN d.datlocprovider = 'i' THEN ` + accelerator.DatabaseLocaleSQL + ` ELSE d.datctype END
                                    FROM pg_catalog.pg_database d WHERE d.datname = current_database())
                              ELSE co.collprovider::text || '|' || ` + accelerator.CollationLocaleSQL + ` || '|' || coalesce(co.collversion, '') || '|' ||
                                   quote_ident(cn.nspname) || '.' || quote_ident(co.collname) || '|' ||
                                   CASE WHEN co.collisdeterministic THEN 't' ELSE 'f' END || '|' ||
                                   CASE WHEN co.collprovider = 'i' THEN ` + accelerator.CollationLocaleSQL + ` ELSE coalesce(co.collctype, '') END END
                  FROM pg_catalog.pg_collation co JOIN pg_catalog.pg_namespace cn ON cn.oid = co.collnamespace
                  WHERE co.oid = a.attcollation) END,
       CASE WHEN bt.typtype = 'e' THEN ` + enumLabelsOf + `bt.oid) END
FROM pg_catalog.pg_attribute a
JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
JOIN pg_catalog.pg_type bt ON bt.oid = COALESCE(NULLIF(t.typbasetype, 0), a.atttypid)
WHERE a.attrelid = (SELECT c.oid FROM pg_catalog.pg_class c
                    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = $1 AND c.relname = $2)
  AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum`

// enumLabelsOf, followed by an enum's type OID and ")", is the SQL of its
// labels in their sort order (pg_enum.enumsortorder), a JSON array
// (parseEnumLabels reads it).
const enumLabelsOf = `(SELECT json_agg(e.enumlabel ORDER BY e.enumsortorder)::text FROM pg_catalog.pg_enum e WHERE e.enumtypid = `

// parseEnumLabels reads enumLabelsOf's array.
func parseEnumLabels(b []byte) ([]string, error) {
	var labels []string
	if err := json.Unmarshal(b, &labels); err != nil {
		return nil, err
	}
	if len(labels) == 0 {
		return nil, errors.New("an enum without labels")
	}
	return labels, nil
}

// errTableNotFound is returned when the dataset's table does not exist (or
// the refresh role cannot see it).
var errTableNotFound = errors.New("table not found at the origin")

// originColumns reads the columns of schema.table.
func originColumns(ctx context.Context, conn *pgconn.PgConn, schema, table string) ([]accelerator.ColumnSpec, error) {
	res := conn.ExecParams(ctx, columnsSQL, [][]byte{[]byte(schema), []byte(table)}, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, fmt.Errorf("read columns of %s.%s: %w", schema, table, res.Err)
	}
	if len(res.Rows) == 0 {
		return nil, fmt.Errorf("read columns of %s.%s: %w", schema, table, errTableNotFound)
	}
	cols := make([]accelerator.ColumnSpec, 0, len(res.Rows))
	for _, r := range res.Rows {
		oid, err1 := strconv.ParseUint(string(r[1]), 10, 32)
		mod, err2 := strconv.ParseInt(string(r[2]), 10, 32)
		elem, err3 := strconv.ParseUint(string(r[4]), 10, 32)
		part, err4 := strconv.Atoi(string(r[7]))
		rel, err5 := strconv.ParseUint(string(r[9]), 10, 32)
		attnum, err6 := strconv.ParseInt(string(r[10]), 10, 16)
		typlen, err7 := strconv.ParseInt(string(r[11]), 10, 16)
		if err := errors.Join(err1, err2, err3, err4, err5, err6, err7); err != nil {
			return nil, fmt.Errorf("read columns of %s.%s: %w", schema, table, err)
		}
		cols = append(cols, accelerator.ColumnSpec{
			Name: string(r[0]), TypeOID: uint32(oid), TypeMod: int32(mod), TypeName: string(r[3]), ElemOID: uint32(elem),
			BinaryCollation: string(r[5]) == "t", Unique: string(r[6]) == "t", KeyPart: part, ASCIICase: string(r[8]) == "t",
			RelOID: uint32(rel), AttNum: int16(attnum), TypLen: int16(typlen),
		})
		if r[13] != nil {
			c := &cols[len(cols)-1]
			var err error
			if c.EnumLabels, err = parseEnumLabels(r[13]); err != nil {
				return nil, fmt.Errorf("read the labels of enum column %s of %s.%s: %w", c.Name, schema, table, err)
			}
		}
		if c := &cols[len(cols)-1]; (!c.BinaryCollation || !c.ASCIICase) && r[12] != nil {
			if err := establishCollation(ctx, conn, c, string(r[12])); err != nil {
				return nil, fmt.Errorf("read columns of %s.%s: %w", schema, table, err)
			}
		}
	}
	if err := establishDefaultCollation(ctx, conn); err != nil {
		return nil, fmt.Errorf("read columns of %s.%s: %w", schema, table, err)
	}
	// Key: the primary key is one column.
	keyCols := 0
	for _, c := range cols {
		if c.KeyPart > 0 {
			keyCols++
		}
	}
	for i := range cols {
		cols[i].Key = keyCols == 1 && cols[i].KeyPart == 1
	}
	return cols, nil
}

// establishHeldScales sets the scale each numeric column of cols without
// a declared scale (nor one already held: keepStoredTypes) is held at: the
// display scale of one of its values (Postgres keeps each value's own), in
// one query on conn. The load checks every value against it: a column
// whose values do not share it is left out, saying so, and so is one
// without a finite value (nothing to take the scale from). It runs where
// an acceleration's table is built, not where columns are only read
// (pings, checks): a mostly NULL column costs the query a scan.
func establishHeldScales(ctx context.Context, conn *pgconn.PgConn, ds *catalog.Dataset, cols []accelerator.ColumnSpec) error {
	var which []int
	var sel []string
	for i, c := range cols {
		if accelerator.NeedsHeldScale(c) && c.HeldScale == nil && !c.NumericText {
			col := pgx.Identifier{c.Name}.Sanitize()
			which = append(which, i)
			sel = append(sel, "(SELECT scale("+col+") FROM "+ds.QualifiedTable()+" WHERE scale("+col+") IS NOT NULL LIMIT 1)")
		}
	}
	if len(sel) == 0 {
		return nil
	}
	res := conn.ExecParams(ctx, "SELECT "+strings.Join(sel, ", "), nil, nil, nil, nil).Read()
	if res.Err != nil || len(res.Rows) != 1 {
		return fmt.Errorf("read the scales of the numeric columns of %s: %v", ds.QualifiedTable(), res.Err)
	}
	for j, i := range which {
		if s, err := strconv.Atoi(string(res.Rows[0][j])); err == nil && res.Rows[0][j] != nil {
			cols[i].HeldScale = &s
		}
	}
	return nil
}

// scrubber removes a password from error text.
type scrubber struct{ secrets []string }

// newScrubber scrubs the password of dsn (and the DSN itself).
func newScrubber(dsn string) scrubber {
	var sc scrubber
	if cfg, err := pgconn.ParseConfig(dsn); err == nil && cfg.Password != "" {
		sc.secrets = append(sc.secrets, dsn, cfg.Password)
	}
	return sc
}

// text returns err's message without the secrets.
func (sc scrubber) text(err error) string {
	s := err.Error()
	for _, secret := range sc.secrets {
		s = strings.ReplaceAll(s, secret, "********")
	}
	return s
}
