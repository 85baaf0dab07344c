package gen

import "testing"

func TestReadStatements_CommentsDescribeTheNext(t *testing.T) {
	text := `-- a file comment
-- name: first
-- settings: TimeZone=Asia/Kolkata; IntervalStyle=iso_8601
-- extended
SELECT id,
       (SELECT max(k) FROM gen_u ORDER BY 1) AS m
FROM gen_t ORDER BY 1, 2;

SELECT count(*) FROM gen_t;
`
	qs, err := ReadStatements(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 {
		t.Fatalf("read %d statements, want 2", len(qs))
	}
	a, b := qs[0], qs[1]
	if a.Name != "first" || !a.Extended || a.Settings.TimeZone != "Asia/Kolkata" || a.Settings.IntervalStyle != "iso_8601" || !a.Ordered {
		t.Errorf("first statement read as %+v", a)
	}
	if b.Name != "statement 2" || b.Extended || b.Settings != Defaults || b.Ordered {
		t.Errorf("second statement read as %+v (settings and flags are per statement; no ORDER BY at its end)", b)
	}
	if _, err := ReadStatements("SELECT 1"); err == nil {
		t.Error("a statement without its semicolon was accepted")
	}
	if _, err := ReadStatements("-- settings: search_path=x\nSELECT 1;"); err == nil {
		t.Error("an unknown setting was accepted")
	}
}
