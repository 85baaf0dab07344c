package tpchdata

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/internal/pgtest"
	"github.com/pingcap/go-tpc/tpch/dbgen"
)

// ChildFlag is the boolean flag that makes a program using Load run as
// its generator (GenerateChild), with -sf: every main that calls Load
// handles it first.
const ChildFlag = "generate-child"

// Stats is what the load did.
type Stats struct {
	Rows     map[string]int64
	Generate time.Duration // generating and COPYing (they overlap), in a child process
	Finish   time.Duration // keys, index, VACUUM ANALYZE, grants
}

// copyStream is one table's COPY FROM STDIN, fed row by row by the
// generator through a pipe, so that no table is ever held in memory.
type copyStream struct {
	table string
	pw    *io.PipeWriter
	w     *bufio.Writer
	row   []byte
	rows  int64
	done  chan error
}

// openCopy starts `COPY table FROM STDIN` on its own connection.
func openCopy(ctx context.Context, dsn string, t Table) (*copyStream, error) {
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connect to load %s: %w", t.Name, err)
	}
	pr, pw := io.Pipe()
	s := &copyStream{table: t.Name, pw: pw, w: bufio.NewWriterSize(pw, 256<<10), done: make(chan error, 1)}
	sql := fmt.Sprintf("COPY %s (%s) FROM STDIN", t.Name, strings.Join(t.ColumnNames(), ", "))
	go func() {
		defer conn.Close(context.Background())
		_, err := conn.CopyFrom(ctx, pr, sql)
		if err != nil {
			err = fmt.Errorf("COPY %s: %w", t.Name, err)
		}
		// Unblocks the generator if the COPY ended early.
		pr.CloseWithError(errors.Join(err, errCopyEnded))
		s.done <- err
	}()
	return s, nil
}

var errCopyEnded = errors.New("COPY ended")

// close ends the stream (aborting the COPY if cause is not nil) and returns
// the COPY's result.
func (s *copyStream) close(cause error) error {
	if cause == nil {
		cause = s.w.Flush()
	}
	if cause != nil {
		s.pw.CloseWithError(cause)
	} else {
		s.pw.Close()
	}
	err := <-s.done
	if err == nil && cause != nil {
		err = cause
	}
	return err
}

// Row assembly in COPY text format: tab-separated, one row a line.

func (s *copyStream) int(v int64) {
	s.sep()
	s.row = strconv.AppendInt(s.row, v, 10)
}

// money appends cents as a decimal with two places, like dbgen's FmtMoney.
func (s *copyStream) money(cents int64) {
	s.sep()
	if cents < 0 {
		s.row = append(s.row, '-')
		cents = -cents
	}
	s.row = strconv.AppendInt(s.row, cents/100, 10)
	s.row = append(s.row, '.', byte('0'+cents%100/10), byte('0'+cents%10))
}

func (s *copyStream) text(v string) {
	s.sep()
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\':
			s.row = append(s.row, '\\', '\\')
		case '\t':
			s.row = append(s.row, '\\', 't')
		case '\n':
			s.row = append(s.row, '\\', 'n')
		case '\r':
			s.row = append(s.row, '\\', 'r')
		default:
			s.row = append(s.row, c)
		}
	}
}

func (s *copyStream) char(c byte) { s.text(string(c)) }

func (s *copyStream) sep() {
	if len(s.row) > 0 {
		s.row = append(s.row, '\t')
	}
}

func (s *copyStream) endRow() error {
	s.row = append(s.row, '\n')
	_, err := s.w.Write(s.row)
	s.row = s.row[:0]
	s.rows++
	return err
}

// The dbgen loaders, one per table. dbgen hands an order to both the orders
// and the lineitem loader, and a part to both part and partsupp.

type (
	regionLoader   struct{ *copyStream }
	nationLoader   struct{ *copyStream }
	supplierLoader struct{ *copyStream }
	customerLoader struct{ *copyStream }
	partLoader     struct{ *copyStream }
	partsuppLoader struct{ *copyStream }
	ordersLoader   struct{ *copyStream }
	lineitemLoader struct{ *copyStream }
)

// Flush is a no-op: the streams are flushed once generation is over (dbgen
// ignores some Flush errors).
func (s *copyStream) Flush() error { return nil }

func (l regionLoader) Load(item any) error {
	r := item.(*dbgen.Region)
	l.int(int64(r.Code))
	l.text(r.Text)
	l.text(r.Comment)
	return l.endRow()
}

func (l nationLoader) Load(item any) error {
	n := item.(*dbgen.Nation)
	l.int(int64(n.Code))
	l.text(n.Text)
	l.int(int64(n.Join))
	l.text(n.Comment)
	return l.endRow()
}

func (l supplierLoader) Load(item any) error {
	s := item.(*dbgen.Supp)
	l.int(int64(s.SuppKey))
	l.text(s.Name)
	l.text(s.Address)
	l.int(int64(s.NationCode))
	l.text(s.Phone)
	l.money(int64(s.Acctbal))
	l.text(s.Comment)
	return l.endRow()
}

func (l customerLoader) Load(item any) error {
	c := item.(*dbgen.Cust)
	l.int(int64(c.CustKey))
	l.text(c.Name)
	l.text(c.Address)
	l.int(int64(c.NationCode))
	l.text(c.Phone)
	l.money(int64(c.Acctbal))
	l.text(c.MktSegment)
	l.text(c.Comment)
	return l.endRow()
}

func (l partLoader) Load(item any) error {
	p := item.(*dbgen.Part)
	l.int(int64(p.PartKey))
	l.text(p.Name)
	l.text(p.Mfgr)
	l.text(p.Brand)
	l.text(p.Type)
	l.int(int64(p.Size))
	l.text(p.Container)
	l.money(int64(p.RetailPrice))
	l.text(p.Comment)
	return l.endRow()
}

func (l partsuppLoader) Load(item any) error {
	p := item.(*dbgen.Part)
	for _, ps := range p.S {
		l.int(int64(ps.PartKey))
		l.int(int64(ps.SuppKey))
		l.int(int64(ps.Qty))
		l.money(int64(ps.SCost))
		l.text(ps.Comment)
		if err := l.endRow(); err != nil {
			return err
		}
	}
	return nil
}

func (l ordersLoader) Load(item any) error {
	o := item.(*dbgen.Order)
	l.int(int64(o.OKey))
	l.int(int64(o.CustKey))
	l.char(o.Status)
	l.money(int64(o.TotalPrice))
	l.text(o.Date)
	l.text(o.OrderPriority)
	l.text(o.Clerk)
	l.int(o.ShipPriority)
	l.text(o.Comment)
	return l.endRow()
}

func (l lineitemLoader) Load(item any) error {
	o := item.(*dbgen.Order)
	for _, li := range o.Lines {
		l.int(int64(li.OKey))
		l.int(int64(li.PartKey))
		l.int(int64(li.SuppKey))
		l.int(int64(li.LCnt))
		l.int(int64(li.Quantity)) // a whole number of units; numeric(15,2) shows .00
		l.money(int64(li.EPrice))
		l.money(int64(li.Discount))
		l.money(int64(li.Tax))
		l.char(li.RFlag)
		l.char(li.LStatus)
		l.text(li.SDate) // ship, commit, receipt: the column order
		l.text(li.CDate)
		l.text(li.RDate)
		l.text(li.ShipInstruct)
		l.text(li.ShipMode)
		l.text(li.Comment)
		if err := l.endRow(); err != nil {
			return err
		}
	}
	return nil
}

// Load creates the tables, has a child process generate scale factor
// sf into them (see GenerateChild), then adds keys, vacuums, analyzes and
// grants.
//
// The generation runs in a child because dbgen's text pool (300 MB, held in
// a package variable for good) would otherwise stay in this process's RSS,
// where the refresh's memory is measured.
func Load(ctx context.Context, origin *pgtest.Server, sf float64, progress func(string, ...any)) (Stats, error) {
	st := Stats{Rows: map[string]int64{}}
	if err := createTables(ctx, origin); err != nil {
		return st, err
	}
	self, err := os.Executable()
	if err != nil {
		return st, fmt.Errorf("find this program to run the generator: %w", err)
	}
	progress("generating TPC-H scale factor %g with go-tpc's dbgen (child process), streaming into COPY", sf)
	began := time.Now()
	cmd := exec.CommandContext(ctx, self, "-"+ChildFlag, "-sf", strconv.FormatFloat(sf, 'g', -1, 64))
	cmd.Stdin = strings.NewReader(origin.SuperDSN() + "\n") // not in argv, where ps shows it
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return st, fmt.Errorf("generate: %w", err)
	}
	if err := json.Unmarshal(out, &st.Rows); err != nil {
		return st, fmt.Errorf("generate: unexpected output %q: %w", out, err)
	}
	st.Generate = time.Since(began)
	for name, want := range ExpectedRows(sf) {
		if st.Rows[name] != want {
			return st, fmt.Errorf("dbgen made %d rows of %s, want %d at scale factor %g", st.Rows[name], name, want, sf)
		}
	}

	progress("loaded %d lineitem rows in %v; adding keys, VACUUM ANALYZE", st.Rows["lineitem"], st.Generate.Round(time.Millisecond))
	began = time.Now()
	if err := finishTables(ctx, origin); err != nil {
		return st, err
	}
	st.Finish = time.Since(began)
	return st, nil
}

// GenerateChild is the child process of Load: it reads the origin's
// DSN from stdin, generates scale factor sf with dbgen straight into one
// COPY stream per table, and prints the row counts as JSON on stdout.
func GenerateChild(ctx context.Context, sf float64, stdin io.Reader, stdout io.Writer) error {
	dsn, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil {
		return fmt.Errorf("read the origin DSN from stdin: %w", err)
	}
	dsn = strings.TrimSpace(dsn)
	if err := initDbgen(sf); err != nil {
		return err
	}
	rows := map[string]int64{}
	streams := map[string]*copyStream{}
	closeAll := func(cause error) error {
		var errs []error
		for _, t := range Tables {
			if s := streams[t.Name]; s != nil {
				if err := s.close(cause); err != nil && !errors.Is(err, cause) {
					errs = append(errs, err)
				}
				rows[t.Name] = s.rows
			}
		}
		return errors.Join(errs...)
	}
	for _, t := range Tables {
		s, err := openCopy(ctx, dsn, t)
		if err != nil {
			return errors.Join(err, closeAll(err))
		}
		streams[t.Name] = s
	}
	loaders := map[dbgen.Table]dbgen.Loader{
		dbgen.TRegion: regionLoader{streams["region"]},
		dbgen.TNation: nationLoader{streams["nation"]},
		dbgen.TSupp:   supplierLoader{streams["supplier"]},
		dbgen.TCust:   customerLoader{streams["customer"]},
		dbgen.TPart:   partLoader{streams["part"]},
		dbgen.TPsupp:  partsuppLoader{streams["partsupp"]},
		dbgen.TOrder:  ordersLoader{streams["orders"]},
		dbgen.TLine:   lineitemLoader{streams["lineitem"]},
	}
	// The order of go-tpc's own loader (tpch/workload.go).
	order := []dbgen.Table{dbgen.TNation, dbgen.TRegion, dbgen.TCust, dbgen.TSupp, dbgen.TPartPsupp, dbgen.TOrderLine}
	genErr := generate(ctx, loaders, order)
	if err := closeAll(genErr); err != nil || genErr != nil {
		return errors.Join(genErr, err)
	}
	return json.NewEncoder(stdout).Encode(rows)
}

// generate runs dbgen, one table group at a time so that ctx can stop it
// between groups. dbgen prints its progress on os.Stdout, where the row
// counts go: it is pointed at os.Stderr meanwhile.
func generate(ctx context.Context, loaders map[dbgen.Table]dbgen.Loader, order []dbgen.Table) error {
	stdout := os.Stdout
	os.Stdout = os.Stderr
	defer func() { os.Stdout = stdout }()
	for _, t := range order {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := dbgen.DbGen(loaders, []dbgen.Table{t}); err != nil {
			return fmt.Errorf("dbgen: %w", err)
		}
	}
	return nil
}
