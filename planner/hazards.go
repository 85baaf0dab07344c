package planner

import (
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// valueHazard checks, in one pass over the referenced datasets' columns,
// the rules under which DuckDB would compute or print a value differently
// from Postgres without an error (see floatagg.go, textout.go,
// collation.go, numericscale.go). It returns the reason the statement
// must go to the origin and which rule it is, or "".
func valueHazard(a *analysis, r resolution) (reason, detail string) {
	merges, mergeCols := a.mergesValues, a.mergeCols
	scaleOK := r.scale.ok
	if a.roundUntracked || a.roundTracked && !scaleOK {
		return ReasonNumericScale, "round or trunc of a numeric whose display scale is not tracked"
	}
	if a.trackedNumericCast && !scaleOK {
		return ReasonUnsupported, "cast to numeric"
	}
	if scaleOK {
		// The merges and divisions of scale-tracked outputs are exact.
		merges, mergeCols = a.mergesOutside, a.mergeColsOutside
	}
	// A division of integers, or of a double precision, is DuckDB's
	// as Postgres's; any other may be numeric (divkinds.go).
	_, divides := a.untypedDivision(r, !scaleOK)
	switch {
	case a.aggFloatCast:
		return ReasonFloatAggregate, "an aggregate of a value cast to a float type (the summation order changes the last digits)"
	case merges && a.numericLiteral:
		return ReasonNumericScale, "CASE, COALESCE or a set operation merging numeric values whose display scales may differ"
	}
	if why := a.timeCallHazard(r); why != "" {
		return ReasonUnsupported, why
	}
	if why := a.concatHazard(r); why != "" {
		return ReasonUnsupported, why
	}
	for _, x := range a.arrayToString {
		cr := x.GetColumnRef()
		if cr == nil || lastField(cr) == "" || !columnsAre(r, lastField(cr), func(c catalog.ColumnInfo) bool {
			switch c.TypeOID {
			case pgdef.OIDTextArray, pgdef.OIDVarcharArray, pgdef.OIDInt2Array, pgdef.OIDInt4Array, pgdef.OIDInt8Array: // text, varchar and integer arrays print alike
				return true
			}
			return false
		}) {
			return ReasonUnsupported, "array_to_string of an array that is not known to be of text or integers (DuckDB prints other elements its own way)"
		}
	}
	for _, x := range a.distinctOn {
		if a.tieKey(r, x) {
			return ReasonUnsupported, "DISTINCT ON a value that may be a float or an interval: of equal values printed otherwise (-0 and 0, '1 mon' and '30 days'), which row each engine keeps differs"
		}
	}
	for _, args := range a.mathCalls {
		g := &floatGuard{a: a, r: r}
		if !g.realArgs(args...) {
			return ReasonUnsupported, "exp, ln, log, sqrt, power or ^ of a value that may be a numeric (Postgres computes it in numeric, DuckDB in double precision)"
		}
	}
	for _, x := range a.percentileArgs {
		if k := a.kindOf(r, x, 0); k != kindInt4 && k != kindInt8 && !a.numericValue(r, x) {
			return ReasonUnsupported, "percentile_cont of a value that may be a double precision (Postgres interpolates infinities to NaN)"
		}
	}
	if why := a.tstzHazard(r); why != "" {
		return ReasonUnsupported, why
	}
	if why := a.scopeHazard(r); why != "" {
		return ReasonUnsupported, why
	}
	if why := a.commonTypeHazard(r); why != "" {
		return ReasonUnsupported, why
	}
	if n, ok := a.intFloatSafe(r); !ok {
		return ReasonFloatAggregate, "a sum or average of " + n + " cast to double precision, which is not known to be a smallint or integer column (only those sum exactly in any order)"
	}
	hasBpchar, hasNumeric := false, false
	for _, d := range r.datasets {
		of := " of dataset " + d.ds.Name
		for _, c := range d.state.Columns {
			switch {
			case c.TypeOID == pgdef.OIDFloat4 || c.TypeOID == pgdef.OIDFloat8:
				if _, ok := a.aggCols[c.Name]; ok {
					return ReasonFloatAggregate, "an aggregate of the float column " + c.Name + of + " (the summation order changes the last digits)"
				}
			case c.TypeOID == pgdef.OIDNumeric || c.TypeOID == pgdef.OIDNumericArray:
				if _, merged := mergeCols[c.Name]; merged || merges {
					return ReasonNumericScale, "the numeric column " + c.Name + of + " merged with values whose display scale may differ"
				}
			}
			if c.TypeOID == pgdef.OIDBpchar || c.TypeOID == pgdef.OIDBpcharArray {
				hasBpchar = true
			}
			if c.TypeOID == pgdef.OIDNumeric || c.TypeOID == pgdef.OIDNumericArray {
				hasNumeric = true
			}
			if a.ordering && !c.BinaryCollation && c.CollationLocale == "" && collatable(c.TypeOID) {
				// A collation the acceleration reproduces is keyed where
				// it orders (collorder.go).
				if _, ok := a.cols.names[c.Name]; ok || a.cols.star || a.cols.natural {
					why := "whose collation is not bytewise"
					if c.CollationNote != "" {
						why += ", and pgaccel does not reproduce its order: " + c.CollationNote
					}
					return ReasonCollation, "ordering or comparing the column " + c.Name + of + ", " + why
				}
			}
		}
	}
	if f := a.untypedExtract(r); f != "" {
		return ReasonUnsupported, "EXTRACT or date_part of the field " + f + " of a value not known to be a timestamp column (DuckDB counts it in whole units)"
	}
	if reason, why := a.typeHazard(r); reason != "" {
		return reason, why
	}
	if n := a.realArithmetic(r); n != "" {
		return ReasonUnsupported, "arithmetic on " + n + ", which may be a real (float4): DuckDB computes it in single precision"
	}
	if divides {
		return ReasonNumericDivision, "a division whose operands are not known to be integers or double precision (a numeric one DuckDB would compute in floating point)"
	}
	// Rules by the type a name holds (aliases.go).
	wrapped := textWrapped(a, r)
	if n := a.firstUnsafe(r, without(a.textCastCols, wrapped), textCastRule); n != "" {
		return ReasonUnsupported, "a cast to text of " + n + ", whose type Postgres prints its own way (or is not known)"
	}
	if n := a.firstUnsafe(r, without(a.concatCols, wrapped), concatRule); n != "" {
		return ReasonUnsupported, "|| with " + n + ", which is not known to be text (Postgres formats other types its own way)"
	}
	if n := a.firstUnsafe(r, a.caseCols, caseRule); n != "" {
		return ReasonUnsupported, "upper, lower or ILIKE of " + n + ", whose case the origin maps under an LC_CTYPE other than C that pgaccel does not reproduce (or that is not known)" + caseNoteOf(r, n)
	}
	if _, ok := a.caseMode(r); !ok {
		return ReasonUnsupported, "upper, lower or ILIKE of columns whose case the origin maps under different LC_CTYPEs"
	}
	if hasNumeric || a.numericLiteral {
		if n := a.firstUnsafe(r, mergeCols, mergeRule); n != "" {
			return ReasonNumericScale, n + ", merged with values whose display scale may differ, may be numeric"
		}
	}
	if hasBpchar {
		if n := a.firstUnsafe(r, a.valueCols, bpcharValueRule); n != "" {
			return ReasonUnsupported, n + " may be a char(n) value returned without its length (Postgres pads it; the acceleration keeps it without trailing spaces)"
		}
		if n := a.firstUnsafe(r, mergeCols, bpcharValueRule); n != "" {
			return ReasonUnsupported, n + " may be a char(n) value merged into a value without a length (Postgres pads it; the acceleration keeps it without trailing spaces)"
		}
	}
	return "", ""
}

// tieKey reports whether n may hold values that compare equal but print
// otherwise: floats (-0 and 0) and intervals, or arrays of them.
func (a *analysis) tieKey(r resolution, n *pg_query.Node) bool {
	if tc := n.GetTypeCast(); tc != nil {
		return castTarget(tc, floatTypeNames) || castTarget(tc, map[string]bool{"interval": true}) || tc.TypeName == nil
	}
	if c := n.GetAConst(); c != nil {
		return false
	}
	if cr := n.GetColumnRef(); cr != nil && lastField(cr) != "" {
		found, all := columnsNamed(r, lastField(cr), func(c catalog.ColumnInfo) bool {
			switch c.TypeOID {
			case pgdef.OIDFloat4, pgdef.OIDFloat8, pgdef.OIDInterval, pgdef.OIDFloat4Array, pgdef.OIDFloat8Array, pgdef.OIDIntervalArray: // and their arrays
				return false
			}
			return true
		})
		if found {
			return !all
		}
		for _, def := range a.aliasDefs[lastField(cr)] {
			if d := def.GetColumnRef(); d != nil && lastField(d) == lastField(cr) {
				continue
			}
			if a.tieKey(r, def) {
				return true
			}
		}
		return len(a.aliasDefs[lastField(cr)]) == 0
	}
	switch a.kindOf(r, n, 0) {
	case kindInt4, kindInt8, kindNumLit:
		return false
	}
	return a.timeType(r, n) != pgdef.OIDTimestamp && a.timeType(r, n) != pgdef.OIDTimestamptz
}
