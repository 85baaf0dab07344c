package planner

// valueHazard checks, in one pass over the referenced datasets' columns,
// the rules under which DuckDB would compute or print a value differently
// from Postgres without an error (see floatagg.go, textout.go,
// collation.go, numericscale.go). It returns the reason the statement
// must go to the origin, or "".
func valueHazard(a *analysis, r resolution) string {
	merges, mergeCols, divides := a.mergesValues, a.mergeCols, a.divides
	scaleOK := r.scale.ok
	if a.roundUntracked || a.roundTracked && !scaleOK {
		return ReasonNumericScale
	}
	if scaleOK {
		// The merges and divisions of scale-tracked outputs are exact.
		merges, mergeCols, divides = a.mergesOutside, a.mergeColsOutside, a.dividesOutside
	}
	switch {
	case a.aggFloatCast:
		return ReasonFloatAggregate
	case merges && a.numericLiteral:
		return ReasonNumericScale
	case divides && a.numericLiteral:
		return ReasonNumericDivision
	}
	for _, d := range r.datasets {
		for _, c := range d.state.Columns {
			switch {
			case c.TypeOID == oidFloat4 || c.TypeOID == oidFloat8:
				if _, ok := a.aggCols[c.Name]; ok {
					return ReasonFloatAggregate
				}
			case c.TypeOID == oidNumeric || c.TypeOID == oidNumericArray:
				if _, merged := mergeCols[c.Name]; merged || merges {
					return ReasonNumericScale
				}
				if divides && c.TypeOID == oidNumeric {
					return ReasonNumericDivision
				}
			}
			if _, ok := a.concatCols[c.Name]; ok && !textTypeOIDs[c.TypeOID] {
				return ReasonUnsupported
			}
			if a.ordering && !c.BinaryCollation && collatable(c.TypeOID) {
				if _, ok := a.cols.names[c.Name]; ok || a.cols.star || a.cols.natural {
					return ReasonCollation
				}
			}
		}
	}
	return ""
}

// Type OIDs the rules look at.
const (
	oidFloat4       = 700
	oidFloat8       = 701
	oidNumeric      = 1700
	oidNumericArray = 1231
	oidInt2         = 21
	oidInt4         = 23
	oidInt8         = 20
)
