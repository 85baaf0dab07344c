package accelerator

// Replication is where the change stream of a changes dataset stands, kept
// in the acceleration's checkpoint in the same DuckDB transaction as the
// rows it describes: a restart resumes the stream at LSN.
type Replication struct {
	// Slot and Publication name the origin's replication slot and
	// publication the stream reads.
	Slot        string `json:"slot"`
	Publication string `json:"publication"`
	// SystemID is the origin's system identifier (IDENTIFY_SYSTEM): a slot
	// of that name on another system is not this stream's.
	SystemID string `json:"system_id"`
	// LSN is the end of the last transaction applied (or, when the table
	// saw none for a while, a position the origin reported it had sent
	// everything up to): the stream resumes there.
	LSN uint64 `json:"lsn"`
}
