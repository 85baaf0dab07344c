package proxy

import (
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgaccel/pgaccel/pgdef"
)

// passwordFailed is the FATAL Postgres sends when a password login fails
// (auth.c's auth_failed), word for word and without pgdef.ErrorPrefix: with
// auth.mode proxy a refused login reads as the origin's would.
func passwordFailed(user string) *pgproto3.ErrorResponse {
	return &pgproto3.ErrorResponse{
		Severity:            pgdef.SeverityFatal,
		SeverityUnlocalized: pgdef.SeverityFatal,
		Code:                pgdef.InvalidPassword,
		Message:             fmt.Sprintf("password authentication failed for user %q", user),
	}
}
