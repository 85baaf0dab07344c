package proxy

import (
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgaccel/pgaccel/pgdef"
)

// The proxy reports its own errors with pgdef's SQLSTATEs and severities
// (pgdef.Error).
const (
	severityFatal = pgdef.SeverityFatal
	severityError = pgdef.SeverityError
)

// pgError is pgdef.Error.
func pgError(severity, code, message, hint string) *pgproto3.ErrorResponse {
	return pgdef.Error(severity, code, message, hint)
}

// passwordFailed is the FATAL Postgres sends when a password login fails
// (auth.c's auth_failed), word for word and without pgdef.ErrorPrefix: with
// auth.mode proxy a refused login reads as the origin's would.
func passwordFailed(user string) *pgproto3.ErrorResponse {
	return &pgproto3.ErrorResponse{
		Severity:            severityFatal,
		SeverityUnlocalized: severityFatal,
		Code:                pgdef.InvalidPassword,
		Message:             fmt.Sprintf("password authentication failed for user %q", user),
	}
}
