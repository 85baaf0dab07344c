package pgdef

import "strings"

// SQLState names a Postgres error code (SQLSTATE, errcodes.txt): two
// characters of class, three of condition. pgaccel sends the ones it
// reports itself under these names, and classifies the origin's by them;
// this is their one declaration (as CockroachDB's pgcode and pgx's
// pgconn.PgError predicates do).
type SQLState = string // an alias: pgproto3 and pgconn carry codes as strings

// The codes pgaccel sends or classifies, by errcodes.txt's names.
const (
	SuccessfulCompletion              SQLState = "00000"
	ConnectionFailure                 SQLState = "08006"
	ProtocolViolation                 SQLState = "08P01"
	FeatureNotSupported               SQLState = "0A000"
	InFailedSQLTransaction            SQLState = "25P02"
	IdleInTransactionTimeout          SQLState = "25P03" // idle_in_transaction_session_timeout
	InvalidPassword                   SQLState = "28P01"
	InvalidCatalogName                SQLState = "3D000"
	InvalidSchemaName                 SQLState = "3F000"
	SerializationFailure              SQLState = "40001"
	DeadlockDetected                  SQLState = "40P01"
	InsufficientPrivilege             SQLState = "42501"
	UndefinedColumn                   SQLState = "42703"
	UndefinedFunction                 SQLState = "42883"
	UndefinedTable                    SQLState = "42P01"
	DuplicateObject                   SQLState = "42710"
	TooManyConnections                SQLState = "53300"
	ProgramLimitExceeded              SQLState = "54000"
	LockNotAvailable                  SQLState = "55P03"
	QueryCanceled                     SQLState = "57014"
	AdminShutdown                     SQLState = "57P01"
	CrashShutdown                     SQLState = "57P02"
	CannotConnectNow                  SQLState = "57P03"
	InternalError                     SQLState = "XX000"
	classConnectionException                   = "08"
	classInvalidAuthorization                  = "28"
	classInsufficientResources                 = "53"
	classSyntaxErrorOrAccessViolation          = "42"
	classDataException                         = "22"
)

// IsConnection: class 08, connection exception.
func IsConnection(code SQLState) bool { return strings.HasPrefix(code, classConnectionException) }

// IsShutdown: the server is shutting down, crashed, or still starting
// (57P01, 57P02, 57P03).
func IsShutdown(code SQLState) bool {
	return code == AdminShutdown || code == CrashShutdown || code == CannotConnectNow
}

// IsAuthorization: class 28, invalid authorization specification.
func IsAuthorization(code SQLState) bool { return strings.HasPrefix(code, classInvalidAuthorization) }

// IsResources: class 53, insufficient resources.
func IsResources(code SQLState) bool { return strings.HasPrefix(code, classInsufficientResources) }

// IsSyntaxOrAccess: class 42, syntax error or access rule violation.
func IsSyntaxOrAccess(code SQLState) bool {
	return strings.HasPrefix(code, classSyntaxErrorOrAccessViolation)
}

// IsData: class 22, data exception.
func IsData(code SQLState) bool { return strings.HasPrefix(code, classDataException) }
