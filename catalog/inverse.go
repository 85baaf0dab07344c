package catalog

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgtype"
)

// ErrNotATime is returned for a time column whose type implies no time
// format.
var ErrNotATime = errors.New("is not a time")

// TimeFormatFor returns the time format of a time column: the configured
// one (time_format), or the one its Postgres type implies: date,
// timestamp, timestamptz; numbers are Unix seconds; text is ISO 8601.
func TimeFormatFor(configured string, typeOID uint32, typeName string) (string, error) {
	if configured != "" {
		return configured, nil
	}
	switch typeOID {
	case pgtype.DateOID:
		return TimeFormatDate, nil
	case pgtype.TimestampOID:
		return TimeFormatTimestamp, nil
	case pgtype.TimestamptzOID:
		return TimeFormatTimestamptz, nil
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID, pgtype.Float4OID, pgtype.Float8OID, pgtype.NumericOID:
		return TimeFormatUnixSeconds, nil
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID:
		return TimeFormatISO8601, nil
	}
	return "", fmt.Errorf("has type %s, which %w: set time_format, or choose a date, timestamp or timestamptz column", typeName, ErrNotATime)
}

// TimeAtOrAfter is the Postgres predicate "time column col (quoted) is at
// or after e", e a timestamptz expression, in the column's time format.
func TimeAtOrAfter(format, col, e string) string {
	switch format {
	case TimeFormatUnixSeconds:
		return col + " >= extract(epoch from " + e + ")"
	case TimeFormatUnixMillis:
		return col + " >= extract(epoch from " + e + ") * 1000"
	case TimeFormatISO8601:
		return col + "::timestamptz >= " + e
	}
	return col + " >= " + e
}

// FallbackFilter returns the Postgres predicate that an
// on_zero_results: use_source fallback adds for this dataset, so that rows
// its retention policy evicts never come back from the origin: for
// retention_sql's condition p, NOT (p) OR (p) IS NULL; for
// retention_period, time_column at or after now() - retention_period, or
// NULL; both when both are set, whether or not retention checks run. It is
// "" when the dataset has no retention policy. cols are the origin table's
// columns (time_column's type gives its format); an error says why the
// inverse cannot be built.
func (d *Dataset) FallbackFilter(cols []ColumnInfo) (string, error) {
	var parts []string
	a := &d.Acceleration
	if a.RetentionPeriod > 0 {
		if d.TimeColumn == "" {
			return "", errors.New("retention_period is set without time_column, so the fallback cannot tell which source rows retention evicts")
		}
		var col *ColumnInfo
		for i := range cols {
			if cols[i].Name == d.TimeColumn {
				col = &cols[i]
			}
		}
		if col == nil {
			return "", fmt.Errorf("time_column %q is not a column of %s.%s", d.TimeColumn, d.Schema, d.Table)
		}
		format, err := TimeFormatFor(d.TimeFormat, col.TypeOID, col.TypeName)
		if err != nil {
			return "", fmt.Errorf("time_column %q %w", d.TimeColumn, err)
		}
		c := quoteIdent(d.TimeColumn)
		since := "(now() - interval '" + strconv.FormatInt(a.RetentionPeriod.Microseconds(), 10) + " microseconds')"
		parts = append(parts, "("+TimeAtOrAfter(format, c, since)+" OR "+c+" IS NULL)")
	}
	if a.RetentionSQL != "" {
		p := d.RetentionPredicate()
		if p == "" {
			return "", errors.New("retention_sql is not of the form DELETE FROM <table> WHERE <condition>")
		}
		parts = append(parts, "(NOT ("+p+") OR ("+p+") IS NULL)")
	}
	switch len(parts) {
	case 0:
		return "", nil
	case 1:
		return parts[0], nil
	}
	return parts[0] + " AND " + parts[1], nil
}
