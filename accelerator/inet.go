package accelerator

// inet and cidr are held as the text Postgres prints them with (inet_out,
// cidr_out): equal values print alike, and the text is what both the text
// and (through proxy/encode) the binary protocol give back. The binary
// COPY stream and the change stream carry them in inet_send's form:
//
//	family (2: IPv4, 3: IPv6), bits, is_cidr, address length (4, 16), address
//
// which pgdef.InetText prints as Postgres does.

// Postgres's type OIDs of inet and cidr.
const (
	oidInet = 869
	oidCidr = 650
)
