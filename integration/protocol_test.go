package integration

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy"
)

// Random extended-protocol sequences, run on the origin directly and
// through the proxy, must give the same replies message for message:
// statements that are accelerated, go to the origin, fail to parse, fail
// to bind, write; named and unnamed statements and portals; row limits,
// Describes, Closes, transaction blocks, errors and the skipping to Sync
// they cause; sent a stretch at a time (as most clients do) or pipelined.
// This is what holds the proxy's own answers (deferred.go) to Postgres's.

var protocolStatements = []string{
	"SELECT id, status FROM acc_orders WHERE id < $1 ORDER BY id",
	"SELECT count(*), max(amount) FROM acc_orders WHERE qty > $1",
	"SELECT count(*) FROM acc_orders",
	"SELECT 10 / $1::int",
	"SELEC 1",
	"UPDATE acc_orders SET qty = qty WHERE id = $1",
}

var protocolQueries = []string{
	"BEGIN", "COMMIT", "ROLLBACK", "SELECT count(*) FROM acc_orders WHERE qty > 2", "SELECT 1/0",
	"DEALLOCATE ALL", "DEALLOCATE a",
}

// randomSequence returns a message sequence ending with a Sync and how
// many ReadyForQuery messages it gets.
func randomSequence(r *rand.Rand) ([]pgproto3.FrontendMessage, int) {
	pick := func(options ...string) string { return options[r.Intn(len(options))] }
	param := func() []byte {
		switch r.Intn(8) {
		case 0:
			return nil
		case 1:
			return []byte("x")
		case 2:
			return []byte("0")
		default:
			return []byte(strconv.Itoa(1 + r.Intn(6)))
		}
	}
	var msgs []pgproto3.FrontendMessage
	rfqs := 0
	n := 3 + r.Intn(18)
	for range n {
		k := r.Intn(100)
		if k >= 92 && len(msgs) > 0 {
			if _, ok := msgs[len(msgs)-1].(*pgproto3.Sync); !ok {
				// A Query inside a stretch that failed is skipped, with no
				// ReadyForQuery: Queries only between stretches here.
				k = 80
			}
		}
		switch {
		case k < 18:
			p := &pgproto3.Parse{Name: pick("", "", "a"), Query: protocolStatements[r.Intn(len(protocolStatements))]}
			if r.Intn(4) == 0 {
				p.ParameterOIDs = []uint32{20} // int8, given
			}
			msgs = append(msgs, p)
		case k < 38:
			b := &pgproto3.Bind{DestinationPortal: pick("", "", "", "p"), PreparedStatement: pick("", "", "a")}
			switch r.Intn(10) {
			case 0:
			case 1:
				b.Parameters = [][]byte{param(), param()}
			default:
				b.Parameters = [][]byte{param()}
			}
			if r.Intn(6) == 0 && len(b.Parameters) == 1 {
				b.ParameterFormatCodes = []int16{1}
				b.Parameters[0] = []byte{0, 0, 0, 0, 0, 0, 0, byte(r.Intn(6))}
				if r.Intn(3) == 0 {
					b.Parameters[0] = b.Parameters[0][4:] // the wrong size for int8
				}
			}
			switch r.Intn(5) {
			case 0:
				b.ResultFormatCodes = []int16{1}
			case 1:
				b.ResultFormatCodes = []int16{0, 1}
			case 2:
				b.ResultFormatCodes = []int16{1, 0, 1}
			}
			msgs = append(msgs, b)
		case k < 58:
			msgs = append(msgs, &pgproto3.Execute{Portal: pick("", "", "", "p"), MaxRows: uint32(pick("0", "0", "1", "2")[0] - '0')})
		case k < 68:
			if r.Intn(2) == 0 {
				msgs = append(msgs, &pgproto3.Describe{ObjectType: 'S', Name: pick("", "a")})
			} else {
				msgs = append(msgs, &pgproto3.Describe{ObjectType: 'P', Name: pick("", "p")})
			}
		case k < 74:
			if r.Intn(2) == 0 {
				msgs = append(msgs, &pgproto3.Close{ObjectType: 'S', Name: pick("", "a")})
			} else {
				msgs = append(msgs, &pgproto3.Close{ObjectType: 'P', Name: pick("", "p")})
			}
		case k < 92:
			msgs = append(msgs, &pgproto3.Sync{})
			rfqs++
		default:
			msgs = append(msgs, &pgproto3.Query{String: protocolQueries[r.Intn(len(protocolQueries))]})
			rfqs++
		}
	}
	msgs = append(msgs, &pgproto3.Sync{})
	return msgs, rfqs + 1
}

func describeSequence(msgs []pgproto3.FrontendMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		switch m := m.(type) {
		case *pgproto3.Parse:
			fmt.Fprintf(&b, "Parse %q %q\n", m.Name, m.Query)
		case *pgproto3.Bind:
			fmt.Fprintf(&b, "Bind %q %q params %q formats %v results %v\n", m.DestinationPortal, m.PreparedStatement, m.Parameters, m.ParameterFormatCodes, m.ResultFormatCodes)
		case *pgproto3.Execute:
			fmt.Fprintf(&b, "Execute %q max %d\n", m.Portal, m.MaxRows)
		case *pgproto3.Describe:
			fmt.Fprintf(&b, "Describe %c %q\n", m.ObjectType, m.Name)
		case *pgproto3.Close:
			fmt.Fprintf(&b, "Close %c %q\n", m.ObjectType, m.Name)
		case *pgproto3.Query:
			fmt.Fprintf(&b, "Query %q\n", m.String)
		default:
			fmt.Fprintf(&b, "%T\n", m)
		}
	}
	return b.String()
}

func TestProtocol_RandomSequencesMatchTheOrigin(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, accelDatasets)
	count := 400
	if v, err := strconv.Atoi(os.Getenv("PGACCEL_PROTOCOL_SEQUENCES")); err == nil {
		count = v
	}
	first := 0
	if v, err := strconv.Atoi(os.Getenv("PGACCEL_PROTOCOL_SEED")); err == nil {
		first, count = v, v+1 // one sequence, to look into
	}
	before := routeCounts(t, a)
	for seed := first; seed < count; seed++ {
		msgs, rfqs := randomSequence(rand.New(rand.NewSource(int64(seed))))
		pipelined := seed%3 == 0
		direct := rawSession(t, origin.Addr(), msgs, rfqs, pipelined)
		proxied := rawSession(t, a.Addr(), msgs, rfqs, pipelined)
		if direct != proxied {
			t.Fatalf("seed %d (pipelined %v):\n%s\nreplies differ:\n%s", seed, pipelined, describeSequence(msgs), lineDiff(direct, proxied))
		}
	}
	if after := routeCounts(t, a); count-first > 50 && after[acc] == before[acc] {
		t.Fatal("the acceleration answered nothing")
	}
}

// The same sequences through a proxy without datasets, whose sessions an
// event loop relays (proxy/loop_linux.go), pipelined or not.
func TestProtocol_RandomSequencesThroughTheEventLoop(t *testing.T) {
	mustExec(t, accelSchema)
	p, count := loopProxy(t, nil)
	// The same pass-through relay on goroutines (no event loops).
	off := 0
	g := startProxy(t, func(c *proxy.Config) { c.EventLoops = &off })
	n := 200
	if v, err := strconv.Atoi(os.Getenv("PGACCEL_PROTOCOL_SEQUENCES")); err == nil {
		n = v
	}
	for seed := range n {
		msgs, rfqs := randomSequence(rand.New(rand.NewSource(int64(seed))))
		pipelined := seed%3 == 0
		direct := rawSession(t, origin.Addr(), msgs, rfqs, pipelined)
		proxied := rawSession(t, p.ln.Addr().String(), msgs, rfqs, pipelined)
		if direct != proxied {
			t.Fatalf("seed %d (pipelined %v):\n%s\nreplies differ:\n%s", seed, pipelined, describeSequence(msgs), lineDiff(direct, proxied))
		}
		if seed%2 == 0 {
			if onGoroutines := rawSession(t, g.ln.Addr().String(), msgs, rfqs, pipelined); direct != onGoroutines {
				t.Fatalf("seed %d (pipelined %v), no event loop:\n%s\nreplies differ:\n%s", seed, pipelined, describeSequence(msgs), lineDiff(direct, onGoroutines))
			}
		}
	}
	if taken, handed := count("taken"), count("write_blocked")+count("busy"); taken < float64(n) || handed != 0 {
		t.Fatalf("event loop took %v sessions of %d and handed %v back", taken, n, handed)
	}
}

// FuzzProtocolSequences is TestProtocol_RandomSequencesMatchTheOrigin with
// the fuzzer choosing the seeds:
//
//	go test ./integration -run XXX -fuzz FuzzProtocolSequences -fuzztime 5m
func FuzzProtocolSequences(f *testing.F) {
	mustExec(f, accelSchema)
	a := startApp(f, accelDatasets)
	for _, seed := range []int64{52, 108, 191, 1600, 13498, 13728, -350} { // each once found a difference
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, seed int64, pipelined bool) {
		msgs, rfqs := randomSequence(rand.New(rand.NewSource(seed)))
		direct := rawSession(t, origin.Addr(), msgs, rfqs, pipelined)
		proxied := rawSession(t, a.Addr(), msgs, rfqs, pipelined)
		if direct != proxied {
			t.Fatalf("seed %d (pipelined %v):\n%s\nreplies differ:\n%s", seed, pipelined, describeSequence(msgs), lineDiff(direct, proxied))
		}
	})
}
