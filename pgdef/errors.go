package pgdef

import "github.com/jackc/pgx/v5/pgproto3"

// The severities of the ErrorResponses pgaccel sends itself, and the
// prefix of their messages. Errors of the origin are relayed as the origin
// sent them and never pass through here.
const (
	SeverityFatal = "FATAL"
	SeverityError = "ERROR"
	ErrorPrefix   = "pgaccel: "
)

// Error is an ErrorResponse of pgaccel's own (its message prefixed with
// ErrorPrefix), with both the localized and the non-localized severity
// set, as Postgres 9.6+ sends them.
func Error(severity string, code SQLState, message, hint string) *pgproto3.ErrorResponse {
	return &pgproto3.ErrorResponse{
		Severity:            severity,
		SeverityUnlocalized: severity,
		Code:                code,
		Message:             ErrorPrefix + message,
		Hint:                hint,
	}
}

// AbortedTx is Postgres's error for a statement in a failed transaction,
// word for word.
func AbortedTx() *pgproto3.ErrorResponse {
	e := Error(SeverityError, InFailedSQLTransaction, "", "")
	e.Message = "current transaction is aborted, commands ignored until end of transaction block"
	return e
}
