package proxy

import (
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"
)

// SQLSTATE codes the proxy itself reports. Errors of the origin are relayed
// as the origin sent them and never pass through here.
const (
	codeConnectionFailure    = "08006" // connection_failure
	codeProtocolViolation    = "08P01" // protocol_violation
	codeAdminShutdown        = "57P01" // admin_shutdown
	codeFeatureNotSupported  = "0A000" // feature_not_supported
	codeQueryCanceled        = "57014" // query_canceled
	codeProgramLimitExceeded = "54000" // program_limit_exceeded
	codeInternalError        = "XX000" // internal_error
	codeInFailedTransaction  = "25P02" // in_failed_sql_transaction
	severityFatal            = "FATAL"
	severityError            = "ERROR"
	errorPrefix              = "pgaccel: "
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
		Code:                codeInvalidPassword,
		Message:             fmt.Sprintf("password authentication failed for user %q", user),
	}
}
