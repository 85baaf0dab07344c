package tpchdata

import (
	"fmt"
	"math"
	"reflect"
	_ "unsafe" // for go:linkname

	"github.com/pingcap/go-tpc/tpch/dbgen"
)

// go-tpc's dbgen takes only whole scale factors. TPC-H's dbgen makes a
// fractional one (below 1) by running at scale 1 with every scaled table's
// base row count multiplied by the fraction, in thousandths (driver.c:
// "int_scale = (int)(1000 * flt_scale); tdefs[i].base = int_scale *
// tdefs[i].base / 1000"). The derived key ranges follow the bases: the
// customer keys orders draw from, the part keys lineitem draws from, and the
// supplier count of the part/supplier bridge. go-tpc keeps the bases in an
// unexported table, so a fractional scale reaches it through go:linkname,
// with a layout check before anything is written.

// dbgenTableDef mirrors go-tpc v1.0.7's dbgen.tDef field for field.
//
//lint:ignore U1000 the fields are go-tpc's layout, read only by go-tpc through dbgenTableDefs.
type dbgenTableDef struct {
	name    string
	comment string
	base    int64
	loader  dbgen.Loader
	genSeed func(dbgen.Table, int64)
	child   dbgen.Table
	vTotal  int64
}

//go:linkname dbgenTableDefs github.com/pingcap/go-tpc/tpch/dbgen.tDefs
var dbgenTableDefs []dbgenTableDef

//go:linkname dbgenCustKeyMax github.com/pingcap/go-tpc/tpch/dbgen.ockeyMax
var dbgenCustKeyMax int64

// initDbgen initializes dbgen for scale factor sf: a whole number, or a
// multiple of 0.001 below 1, as TPC-H's dbgen accepts.
func initDbgen(sf float64) error {
	if sf >= 1 {
		if sf != math.Trunc(sf) {
			return fmt.Errorf("-sf %g: a scale factor of 1 or more must be a whole number", sf)
		}
		dbgen.InitDbGen(int64(sf))
		return nil
	}
	milli := math.Round(sf * 1000)
	if milli < 1 || math.Abs(sf*1000-milli) > 1e-6 {
		return fmt.Errorf("-sf %g: a scale factor below 1 must be a multiple of 0.001", sf)
	}
	dbgen.InitDbGen(1)
	defs := dbgenTableDefs
	if len(defs) != int(dbgen.TRegion)+1 || defs[dbgen.TCust].name != "customer.tbl" ||
		defs[dbgen.TCust].base != 150000 || defs[dbgen.TPart].base != 200000 || defs[dbgen.TSupp].base != 10000 {
		return fmt.Errorf("-sf %g: go-tpc's dbgen tables do not have the layout of v1.0.7; use a whole scale factor", sf)
	}
	for t := dbgen.TPart; t < dbgen.TNation; t++ {
		defs[t].base = int64(milli) * defs[t].base / 1000
		if defs[t].base < 1 {
			defs[t].base = 1
		}
	}
	// What InitDbGen derived from the bases (initOrder, initLineItem).
	dbgenCustKeyMax = defs[dbgen.TCust].base
	reflect.ValueOf(&dbgen.LPkeyMax).Elem().SetInt(defs[dbgen.TPart].base)
	return nil
}

// ExpectedRows is how many rows dbgen makes of each table at sf (lineitem:
// about four per order, not known in advance).
func ExpectedRows(sf float64) map[string]int64 {
	scaled := func(base int64) int64 {
		if sf >= 1 {
			return base * int64(sf)
		}
		return max(1, int64(math.Round(sf*1000))*base/1000)
	}
	return map[string]int64{
		"region":   5,
		"nation":   25,
		"part":     scaled(200000),
		"supplier": scaled(10000),
		"partsupp": scaled(200000) * 4,
		"customer": scaled(150000),
		"orders":   scaled(1500000),
	}
}
