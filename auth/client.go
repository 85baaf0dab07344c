package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
)

// ClientExchange is the client side of SCRAM-SHA-256 with a ClientKey in
// place of a password: how pgaccel logs in to the origin as a role whose
// client it verified (pgbouncer's scram pass-through; Postgres 18's
// postgres_fdw use_scram_passthrough). The origin must offer the salt and
// iteration count of the verifier the key was recovered with: a password
// changed since (even to the same text) re-salts it, and the exchange
// fails, as it must.
type ClientExchange struct {
	clientKey, serverKey []byte
	salt                 []byte
	iterations           int
	clientFirstBare      string
	nonce                string
	authMessage          string
}

// NewClientExchange logs in with clientKey, checking the origin's
// signature with the verifier's ServerKey and its salt and iterations.
func NewClientExchange(clientKey []byte, v Verifier) *ClientExchange {
	return &ClientExchange{clientKey: clientKey, serverKey: v.ServerKey, salt: v.Salt, iterations: v.Iterations}
}

// First returns the client-first-message (for SASLInitialResponse).
func (c *ClientExchange) First() ([]byte, error) {
	raw := make([]byte, 18)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	c.nonce = base64.StdEncoding.EncodeToString(raw)
	c.clientFirstBare = "n=,r=" + c.nonce
	return []byte("n,," + c.clientFirstBare), nil
}

// ErrResalted is an origin whose salt or iteration count is not the
// verifier's: the role's password changed since the ClientKey was
// recovered.
var ErrResalted = errors.New("auth: the origin's verifier changed since the client logged in (its password was set again)")

// Final reads the server-first-message and returns the client-final one.
func (c *ClientExchange) Final(serverFirst []byte) ([]byte, error) {
	attrs := strings.Split(string(serverFirst), ",")
	if len(attrs) < 3 || !strings.HasPrefix(attrs[0], "r=") || !strings.HasPrefix(attrs[1], "s=") || !strings.HasPrefix(attrs[2], "i=") {
		return nil, errMessage
	}
	nonce := attrs[0][2:]
	if !strings.HasPrefix(nonce, c.nonce) || len(nonce) == len(c.nonce) {
		return nil, errMessage
	}
	salt, err := base64.StdEncoding.DecodeString(attrs[1][2:])
	if err != nil {
		return nil, errMessage
	}
	iter, err := strconv.Atoi(attrs[2][2:])
	if err != nil {
		return nil, errMessage
	}
	if !hmac.Equal(salt, c.salt) || iter != c.iterations {
		return nil, ErrResalted
	}
	withoutProof := "c=biws,r=" + nonce // biws: base64 of "n,,"
	c.authMessage = c.clientFirstBare + "," + string(serverFirst) + "," + withoutProof
	stored := sha256.Sum256(c.clientKey)
	signature := hmacSHA256(stored[:], c.authMessage)
	proof := make([]byte, len(signature))
	for i := range proof {
		proof[i] = c.clientKey[i] ^ signature[i]
	}
	return []byte(withoutProof + ",p=" + b64(proof)), nil
}

// Verify checks the server-final-message's signature: the origin knows the
// verifier, not an impostor.
func (c *ClientExchange) Verify(serverFinal []byte) error {
	v, ok := strings.CutPrefix(string(serverFinal), "v=")
	if !ok || c.authMessage == "" {
		return errMessage
	}
	sig, err := base64.StdEncoding.DecodeString(v)
	if err != nil || !hmac.Equal(sig, hmacSHA256(c.serverKey, c.authMessage)) {
		return errors.New("auth: the origin's SCRAM signature is wrong")
	}
	return nil
}
