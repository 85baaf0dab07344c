package proxy

import (
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgaccel/pgaccel/pgdef"
)

// The proxy reports its own errors with pgdef's SQLSTATEs. Errors of the
// origin are relayed as the origin sent them and never pass through here.
const (
	severityFatal = "FATAL"
	severityError = "ERROR"
	errorPrefix   = "pgaccel: "
)

// pgError builds an ErrorResponse with both the localized and the
// non-localized severity set, as Postgres 9.6+ sends them.
func pgError(severity, code, message, hint string) *pgproto3.ErrorResponse {
	return &pgproto3.ErrorResponse{
		Severity:            severity,
		SeverityUnlocalized: severity,
		Code:                code,
		Message:             errorPrefix + message,
		Hint:                hint,
	}
}

// passwordFailed is the FATAL Postgres sends when a password login fails
// (auth.c's auth_failed), word for word and without errorPrefix: with
// auth.mode proxy a refused login reads as the origin's would.
func passwordFailed(user string) *pgproto3.ErrorResponse {
	return &pgproto3.ErrorResponse{
		Severity:            severityFatal,
		SeverityUnlocalized: severityFatal,
		Code:                pgdef.InvalidPassword,
		Message:             fmt.Sprintf("password authentication failed for user %q", user),
	}
}
