package catalog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

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
func TimeAtOrAfter(format, col, e string) string { return timeCompare(format, col, " >= ", e) }

// TimeAfter is the Postgres predicate "time column col (quoted) is after
// e", e a timestamptz expression, in the column's time format.
func TimeAfter(format, col, e string) string { return timeCompare(format, col, " > ", e) }

// timeCompare compares time column col, in its format, with the
// timestamptz expression e by op.
func timeCompare(format, col, op, e string) string {
	switch format {
	case TimeFormatUnixSeconds:
		return col + op + "extract(epoch from " + e + ")"
	case TimeFormatUnixMillis:
		return col + op + "extract(epoch from " + e + ") * 1000"
	case TimeFormatISO8601:
		return col + "::timestamptz" + op + e
	}
	return col + op + e
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
	parts, err := d.retentionInverse(cols)
	return strings.Join(parts, " AND "), err
}

// SubsetFilter returns the Postgres predicate of the origin rows that a
// freshly refreshed acceleration of the dataset holds: refresh_sql's
// condition, refresh_data_window's (time_column after now() less the
// window), and, when retention checks run, the inverse of the retention
// policy (see FallbackFilter). A point read that the proxy sends to the
// origin reads the table through it, so that it answers what the
// acceleration would. It is "" when the acceleration holds every row. cols
// are columns of the origin table, among them time_column when a window or
// retention_period needs it; an error says why the filter cannot be built.
func (d *Dataset) SubsetFilter(cols []ColumnInfo) (string, error) {
	var parts []string
	a := &d.Acceleration
	if a.RefreshSQL != "" {
		_, where, ok := d.RefreshSelect()
		if !ok {
			return "", errors.New("refresh_sql is not of the form SELECT <columns> FROM <table> [WHERE <condition>]")
		}
		if where != "" {
			parts = append(parts, "("+where+")")
		}
	}
	if a.RefreshDataWindow > 0 {
		format, err := d.timeFormat(cols, "refresh_data_window")
		if err != nil {
			return "", err
		}
		parts = append(parts, TimeAfter(format, quoteIdent(d.TimeColumn), since(a.RefreshDataWindow)))
	}
	if a.RetentionCheckEnabled {
		inv, err := d.retentionInverse(cols)
		if err != nil {
			return "", err
		}
		parts = append(parts, inv...)
	}
	return strings.Join(parts, " AND "), nil
}

// since is the Postgres timestamptz now() less d.
func since(d time.Duration) string {
	return "(now() - interval '" + strconv.FormatInt(d.Microseconds(), 10) + " microseconds')"
}

// timeFormat returns the time format of time_column among cols, which the
// setting key needs.
func (d *Dataset) timeFormat(cols []ColumnInfo, key string) (string, error) {
	if d.TimeColumn == "" {
		return "", fmt.Errorf("%s is set without time_column", key)
	}
	for _, c := range cols {
		if c.Name == d.TimeColumn {
			format, err := TimeFormatFor(d.TimeFormat, c.TypeOID, c.TypeName)
			if err != nil {
				return "", fmt.Errorf("time_column %q %w", d.TimeColumn, err)
			}
			return format, nil
		}
	}
	return "", fmt.Errorf("time_column %q is not a column of %s.%s", d.TimeColumn, d.Schema, d.Table)
}

// retentionInverse returns the predicates of the rows the retention policy
// keeps (see FallbackFilter), none without a policy.
func (d *Dataset) retentionInverse(cols []ColumnInfo) ([]string, error) {
	var parts []string
	a := &d.Acceleration
	if a.RetentionPeriod > 0 {
		if d.TimeColumn == "" {
			return nil, errors.New("retention_period is set without time_column, so the fallback cannot tell which source rows retention evicts")
		}
		format, err := d.timeFormat(cols, "retention_period")
		if err != nil {
			return nil, err
		}
		c := quoteIdent(d.TimeColumn)
		parts = append(parts, "("+TimeAtOrAfter(format, c, since(a.RetentionPeriod))+" OR "+c+" IS NULL)")
	}
	if a.RetentionSQL != "" {
		p := d.RetentionPredicate()
		if p == "" {
			return nil, errors.New("retention_sql is not of the form DELETE FROM <table> WHERE <condition>")
		}
		parts = append(parts, "(NOT ("+p+") OR ("+p+") IS NULL)")
	}
	return parts, nil
}
