package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
)

// The server side of SCRAM-SHA-256 (RFC 5802, RFC 7677) as Postgres runs
// it (auth-scram.c): the client's proof is checked against the role's
// verifier, so pgaccel needs no password, only the origin's StoredKey and
// ServerKey; the salt and iteration count it shows the client are the
// verifier's own, so the client's proof is the one the origin would take.
// A successful exchange yields the ClientKey, with which pgaccel can log
// in to the origin as that role: a password equivalent, kept in memory
// only (see proxy/doc.go when that lands).
//
// Postgres ignores the user name of the SCRAM messages (the startup
// message's counts) and does not offer channel binding here: a client
// asking for it ("p=...") is refused, one that could use it but sees it
// is not offered ("y,,") is accepted.

// Mechanism is the SASL mechanism pgaccel offers.
const Mechanism = "SCRAM-SHA-256"

// ErrFailed is the failure of a proof: the client is told only that the
// password was wrong (28P01), as by Postgres.
var ErrFailed = errors.New("auth: password authentication failed")

// errMessage is a SCRAM message pgaccel cannot read (a protocol
// violation, 08P01).
var errMessage = errors.New("auth: malformed SCRAM message")

// ErrChannelBinding is a client that requires channel binding, which a
// proxy that ends TLS itself cannot give.
var ErrChannelBinding = errors.New("auth: channel binding is not supported by pgaccel (the client requires SCRAM-SHA-256-PLUS)")

// Exchange is one SCRAM-SHA-256 exchange with a client.
type Exchange struct {
	v               Verifier
	mock            bool // an unknown role, or one without a SCRAM verifier: it always fails
	clientFirstBare string
	serverFirst     string
	nonce           string // the client's and the server's, joined
	gs2Header       string
}

// NewExchange starts an exchange against v. A role that is unknown, has
// no password or has an md5 one gets a mock exchange (mockSalt seeds its
// salt) that looks the same to the client and fails at the proof, so a
// login does not reveal which roles exist.
func NewExchange(v Verifier, mockSalt []byte) *Exchange {
	if v.Kind != SCRAM {
		mac := hmac.New(sha256.New, mockSalt)
		mac.Write([]byte("pgaccel mock salt"))
		return &Exchange{v: Verifier{Kind: SCRAM, Iterations: 4096, Salt: mac.Sum(nil)[:16],
			StoredKey: make([]byte, 32), ServerKey: make([]byte, 32)}, mock: true}
	}
	return &Exchange{v: v}
}

// First reads the client-first-message (of SASLInitialResponse) and
// returns the server-first-message (of AuthenticationSASLContinue).
func (e *Exchange) First(msg []byte) ([]byte, error) {
	s := string(msg)
	// gs2-header: cbind-flag "," [authzid] ","
	flag, rest, ok := strings.Cut(s, ",")
	if !ok {
		return nil, errMessage
	}
	switch {
	case flag == "n", flag == "y":
	case strings.HasPrefix(flag, "p="):
		return nil, ErrChannelBinding
	default:
		return nil, errMessage
	}
	authzid, bare, ok := strings.Cut(rest, ",")
	if !ok || authzid != "" {
		return nil, errMessage // Postgres refuses an authorization identity
	}
	e.gs2Header = flag + ",,"
	// client-first-message-bare: [reserved-mext ","] username "," nonce ["," extensions]
	attrs := strings.Split(bare, ",")
	if len(attrs) < 2 || strings.HasPrefix(attrs[0], "m=") || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") {
		return nil, errMessage
	}
	clientNonce := attrs[1][2:]
	if clientNonce == "" || len(clientNonce) > 1024 || !printable(clientNonce) {
		return nil, errMessage
	}
	raw := make([]byte, 18)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	e.clientFirstBare = bare
	e.nonce = clientNonce + base64.StdEncoding.EncodeToString(raw)
	e.serverFirst = "r=" + e.nonce + ",s=" + base64.StdEncoding.EncodeToString(e.v.Salt) + ",i=" + strconv.Itoa(e.v.Iterations)
	return []byte(e.serverFirst), nil
}

// Final reads the client-final-message (of SASLResponse) and, when its
// proof is right, returns the server-final-message (of
// AuthenticationSASLFinal) and the client's ClientKey.
func (e *Exchange) Final(msg []byte) (serverFinal, clientKey []byte, err error) {
	if e.serverFirst == "" {
		return nil, nil, errMessage
	}
	s := string(msg)
	i := strings.LastIndex(s, ",p=")
	if i < 0 {
		return nil, nil, errMessage
	}
	withoutProof, proofText := s[:i], s[i+3:]
	attrs := strings.Split(withoutProof, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "c=") || !strings.HasPrefix(attrs[1], "r=") {
		return nil, nil, errMessage
	}
	cb, err := base64.StdEncoding.DecodeString(attrs[0][2:])
	if err != nil || string(cb) != e.gs2Header {
		return nil, nil, errMessage // the channel binding data must repeat the gs2 header
	}
	if attrs[1][2:] != e.nonce {
		return nil, nil, errMessage
	}
	proof, err := base64.StdEncoding.DecodeString(proofText)
	if err != nil || len(proof) != sha256.Size {
		return nil, nil, errMessage
	}
	authMessage := e.clientFirstBare + "," + e.serverFirst + "," + withoutProof
	signature := hmacSHA256(e.v.StoredKey, authMessage)
	key := make([]byte, sha256.Size)
	for i := range key {
		key[i] = proof[i] ^ signature[i]
	}
	stored := sha256.Sum256(key)
	if e.mock || subtle.ConstantTimeCompare(stored[:], e.v.StoredKey) != 1 {
		return nil, nil, ErrFailed
	}
	return []byte("v=" + base64.StdEncoding.EncodeToString(hmacSHA256(e.v.ServerKey, authMessage))), key, nil
}

func hmacSHA256(key []byte, msg string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msg))
	return mac.Sum(nil)
}

// printable reports whether s is printable ASCII without a comma, as a
// SCRAM nonce must be.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e || s[i] == ',' {
			return false
		}
	}
	return true
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
