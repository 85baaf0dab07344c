package refresh

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/accelerator"
)

// Linguistic collations. A text column whose origin collation is not
// bytewise is ordered by the acceleration only when this process orders
// its values exactly as the origin does (accelerator.CollationKey). That
// is established once per collation and process, against the origin:
//
//   - the provider is libc or ICU (accelerator/icu.go) and the collation
//     is deterministic;
//   - the locale's codeset is UTF-8 (the acceleration holds UTF-8);
//   - this process can load the locale;
//   - the origin's recorded collversion, the version of the C library
//     its locale data comes from, is this process's C library's version;
//   - a probe of strings chosen to separate locales (every printable
//     ASCII character, Latin-1 and other letters, digits, punctuation and
//     spaces, alone and between letters) ordered at the origin under the
//     collation is ordered the same by the keys.
//
// A collation that passes gets ColumnSpec.CollationLocale; one that does
// not, a CollationNote saying why (the column is then ordered at the
// origin, as before). Verdicts are kept for the life of the process by
// provider, locale and version.

// collationFacts is what columnsSQL says of a column's collation when it
// is not bytewise: provider|locale|version|qualified name|deterministic.
type collationFacts struct {
	provider, locale, version, name string
	deterministic                   bool
	ctype                           string // its LC_CTYPE
}

func parseCollationFacts(s string) (collationFacts, bool) {
	parts := strings.Split(s, "|")
	if len(parts) != 6 {
		return collationFacts{}, false
	}
	return collationFacts{provider: parts[0], locale: parts[1], version: parts[2], name: parts[3], deterministic: parts[4] == "t",
		ctype: parts[5]}, true
}

// establishCollation sets what c's collation (facts: columnsSQL's) lets
// the acceleration do: order it (CollationLocale, when it is not
// bytewise) and map its case (CaseLocale, when its LC_CTYPE is not C), or
// why not (the notes). An error is a failure to ask the origin.
func establishCollation(ctx context.Context, conn *pgconn.PgConn, c *accelerator.ColumnSpec, facts string) error {
	f, ok := parseCollationFacts(facts)
	if !ok {
		c.CollationNote = "its collation could not be read"
		return nil
	}
	for _, e := range []struct {
		needed       bool
		verify       func(context.Context, *pgconn.PgConn, collationFacts) (collationVerdict, error)
		locale, note *string
	}{
		{!c.BinaryCollation, verifyCollation, &c.CollationLocale, &c.CollationNote},
		{!c.ASCIICase, verifyCtype, &c.CaseLocale, &c.CaseNote},
	} {
		if !e.needed {
			continue
		}
		v, err := e.verify(ctx, conn, f)
		if err != nil {
			return err
		}
		*e.locale, *e.note = v.locale, v.note
	}
	// Both are established only on the origin's release of the locale
	// data (one collation: both libc, or both ICU).
	locale := c.CollationLocale
	if locale == "" {
		locale = c.CaseLocale
	}
	if locale != "" {
		v, err := accelerator.LocaleVersion(locale)
		if err != nil {
			c.CollationLocale, c.CaseLocale = "", ""
			c.CollationNote, c.CaseNote = err.Error(), err.Error()
			return nil
		}
		c.CollationVersion = v
	}
	return nil
}

// defaultCollationSQL gives the facts (collationFacts) of the database's
// default collation, NULL when it is bytewise.
const defaultCollationSQL = `SELECT CASE WHEN d.datlocprovider = 'b' OR d.datlocprovider = 'c' AND d.datcollate IN ('C', 'POSIX') THEN NULL
  ELSE d.datlocprovider::text || '|' || ` + accelerator.DatabaseLocaleSQL + ` || '|' || coalesce(d.datcollversion, '') || '|pg_catalog."default"|t|' ||
       CASE WHEN d.datlocprovider = 'i' THEN ` + accelerator.DatabaseLocaleSQL + ` ELSE d.datctype END END
FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database()`

// establishDefaultCollation establishes the database's default collation
// (when it is not bytewise) as a column's is: text of no column of its
// own (a jsonb's, a cast's, to_char's) orders by it, and the planner
// keys that text once it is established (accelerator.EstablishedCollation),
// whether or not a column of the dataset has it. An error is a failure to
// ask the origin.
func establishDefaultCollation(ctx context.Context, conn *pgconn.PgConn) error {
	res := conn.ExecParams(ctx, defaultCollationSQL, nil, nil, nil, nil).Read()
	if res.Err != nil {
		return fmt.Errorf("read the database's default collation: %w", res.Err)
	}
	if len(res.Rows) != 1 || res.Rows[0][0] == nil {
		return nil
	}
	f, ok := parseCollationFacts(string(res.Rows[0][0]))
	if !ok {
		return nil
	}
	_, err := verifyCollation(ctx, conn, f)
	return err
}

// collationVerdict is the outcome of verifying one collation: the locale
// the keys use, or why the collation is not reproduced.
type collationVerdict struct {
	locale, note string
}

var collationVerdicts struct {
	sync.Mutex
	m map[string]collationVerdict
}

// verifyCollation returns the verdict on f's collation, verifying it
// against the origin (conn) the first time. An error is a failure to ask
// the origin (not kept: the next load asks again).
func verifyCollation(ctx context.Context, conn *pgconn.PgConn, f collationFacts) (collationVerdict, error) {
	key := f.provider + "|" + f.locale + "|" + f.version + "|" + strconv.FormatBool(f.deterministic)
	return cachedVerdict(key, func() (collationVerdict, error) {
		v, err := judgeCollation(ctx, conn, f)
		if err == nil && f.deterministic && v.locale != "" {
			accelerator.RecordCollation(f.provider, f.locale, f.version, v.locale)
		}
		return v, err
	})
}

// cachedVerdict returns the verdict kept under key, or judge's, kept
// unless it is an error (the origin could not be asked).
func cachedVerdict(key string, judge func() (collationVerdict, error)) (collationVerdict, error) {
	collationVerdicts.Lock()
	v, ok := collationVerdicts.m[key]
	collationVerdicts.Unlock()
	if ok {
		return v, nil
	}
	v, err := judge()
	if err != nil {
		return collationVerdict{}, err
	}
	collationVerdicts.Lock()
	if collationVerdicts.m == nil {
		collationVerdicts.m = map[string]collationVerdict{}
	}
	collationVerdicts.m[key] = v
	collationVerdicts.Unlock()
	return v, nil
}

func judgeCollation(ctx context.Context, conn *pgconn.PgConn, f collationFacts) (collationVerdict, error) {
	no := func(format string, args ...any) (collationVerdict, error) {
		return collationVerdict{note: fmt.Sprintf(format, args...)}, nil
	}
	switch {
	case f.provider != "c" && f.provider != "i":
		return no("its collation %s has provider %q, whose order pgaccel does not reproduce", f.name, f.provider)
	case !f.deterministic:
		return no("its collation %s is nondeterministic", f.name)
	case f.provider == "c" && !utf8Locale(f.locale):
		return no("its collation's locale %s is not a UTF-8 one", f.locale)
	}
	keyLocale := f.locale
	if f.provider == "i" {
		if v, err := icuVersionCheck(f, "collation"); v != "" || err != nil {
			return collationVerdict{note: v}, err
		}
		keyLocale = accelerator.ICUPrefix + f.locale
	} else {
		if err := accelerator.LocaleAvailable(f.locale); err != nil {
			return no("its collation's %v", err)
		}
		if here := accelerator.LibcVersion(); f.version != here {
			if f.version == "" {
				return no("the origin records no version of its collation %s (locale %s), so pgaccel cannot establish that its C library's locale data (glibc %s) orders as the origin's", f.name, f.locale, here)
			}
			return no("its collation %s (locale %s) comes from glibc %s at the origin and pgaccel runs on glibc %s, whose locale data may order otherwise", f.name, f.locale, f.version, here)
		}
	}
	probe := collationProbe()
	sql := "SELECT string_agg(i::text, ',' ORDER BY s COLLATE " + f.name + ", i) FROM unnest($1::text[]) WITH ORDINALITY u(s, i)"
	res := conn.ExecParams(ctx, sql, [][]byte{textArray(probe)}, nil, nil, nil).Read()
	if res.Err != nil {
		return collationVerdict{}, fmt.Errorf("probe the order of collation %s: %w", f.name, res.Err)
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return collationVerdict{}, errors.New("probe the order of collation " + f.name + ": no answer")
	}
	var origin []string
	for _, i := range strings.Split(string(res.Rows[0][0]), ",") {
		n, err := strconv.Atoi(i)
		if err != nil || n < 1 || n > len(probe) {
			return collationVerdict{}, fmt.Errorf("probe the order of collation %s: answer %q", f.name, i)
		}
		origin = append(origin, probe[n-1])
	}
	keys := make(map[string][]byte, len(probe))
	for _, s := range probe {
		k, err := accelerator.CollationKey(keyLocale, s)
		if err != nil {
			return no("its collation's keys: %v", err)
		}
		keys[s] = k
	}
	local := slices.Clone(probe)
	slices.SortStableFunc(local, func(a, b string) int { return strings.Compare(string(keys[a]), string(keys[b])) })
	for i := range origin {
		if origin[i] != local[i] {
			return no("its collation %s (locale %s) orders %q before %q at the origin, and pgaccel's copy of the locale the other way", f.name, f.locale, origin[i], local[i])
		}
	}
	return collationVerdict{locale: keyLocale}, nil
}

// icuVersionCheck says why this process cannot reproduce f's ICU
// collation (what: "collation" or "case mapping"): it has no ICU, cannot
// open the locale, or its collator's version is not the one the origin
// records (Postgres's collversion of an ICU collation is the collator's
// ucol_getVersion, which changes with the ICU release and its collation
// data). "" when it can.
func icuVersionCheck(f collationFacts, what string) (string, error) {
	release, err := accelerator.ICURelease()
	if err != nil {
		return fmt.Sprintf("its collation %s is ICU's (locale %s) and pgaccel cannot reproduce its %s: %v", f.name, f.locale, what, err), nil
	}
	here, err := accelerator.ICUCollatorVersion(f.locale)
	switch {
	case err != nil:
		return fmt.Sprintf("its collation %s is ICU's (locale %s) and pgaccel cannot reproduce its %s: %v", f.name, f.locale, what, err), nil
	case f.version == "":
		return fmt.Sprintf("the origin records no version of its ICU collation %s (locale %s), so pgaccel cannot establish that its ICU %d (collator %s) orders as the origin's", f.name, f.locale, release, here), nil
	case f.version != here:
		return fmt.Sprintf("its ICU collation %s (locale %s) has collator version %s at the origin and pgaccel's ICU %d has %s, whose collation data may differ", f.name, f.locale, f.version, release, here), nil
	}
	return "", nil
}

// utf8Locale reports whether a libc locale name's codeset is UTF-8.
func utf8Locale(name string) bool {
	_, codeset, ok := strings.Cut(name, ".")
	if !ok {
		return false
	}
	codeset, _, _ = strings.Cut(codeset, "@")
	codeset = strings.ToLower(strings.ReplaceAll(codeset, "-", ""))
	return codeset == "utf8"
}

// collationProbe returns the probe strings: distinct, valid UTF-8, no NUL.
func collationProbe() []string {
	var chars []rune
	for r := rune(0x20); r < 0x7f; r++ {
		chars = append(chars, r)
	}
	for r := rune(0xa0); r <= 0xff; r++ {
		chars = append(chars, r)
	}
	chars = append(chars, []rune("ĀāĂăĄąĆćČčĎďĐđĒēĘęĚěĞğĲĳŁłŃńŇňŒœŘřŚśŞşŠšŢţŤťŮůŰűŸŹźŻżŽžƒǍǎȘșȚțΑαΒβΓγΔδΩωάέЀЁАаБбВвЯяЖжЩщЪъЬьЮюאבגابت中文日本語한국어ก\u0301\u0308\u200b\u00ad–—‘’“”…€™№ﬁﬂ👍😀\t")...)
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] && utf8.ValidString(s) {
			seen[s] = true
			out = append(out, s)
		}
	}
	add("")
	for _, c := range chars {
		s := string(c)
		add(s)
		add("a" + s)
		add(s + "a")
		add("A" + s + "b")
		add("b" + s + "a")
	}
	for _, w := range []string{
		"a", "A", "b", "B", "ab", "Ab", "aB", "AB", "a b", "a-b", "a_b", "a.b", "ab ", " ab", "abc", "abd", "ABC",
		"co-op", "coop", "co op", "cote", "côte", "coté", "côté", "Cote", "Côte", "resume", "résumé", "Resume",
		"Résumé", "strasse", "straße", "Straße", "STRASSE", "ss", "ß", "æ", "ae", "Æ", "AE", "ø", "o", "Ø", "å",
		"aa", "Å", "AA", "ö", "oe", "ü", "ue", "ñ", "n", "nz", "ñz", "1", "2", "10", "9", "01", "1.5", "1,5", "-1",
		"+1", "1e5", "a1", "a10", "a2", "A1", "item 1", "item 10", "item 2", "item-1", "item_1", "Zebra", "zebra",
		"Apple", "apple", "éclair", "eclair", "Eclair", "Éclair", "naïve", "naive", "x-ray", "xray", "X-ray",
		"O'Brien", "OBrien", "o'brien", "Mc Donald", "McDonald", "mcdonald", "hello world", "hello, world",
		"hello-world", "helloworld", "Hello World", "\ta", " a", "a\t", "lljama", "llama", "Llama", "chico", "cica",
		"ćao", "čao", "cao", "dz", "dž", "Dž", "DŽ", "ij", "ĳ", "IJ", "Ĳ", "ﬁle", "file", "œuf", "oeuf",
		"Ωmega", "omega", "Ωμέγα", "ωμέγα", "ЯБЛОКО", "яблоко", "Ёж", "ёж", "еж", "中", "文", "中文", "日本",
		"a\u0301", "á", "e\u0308", "ë", "a\u200bb", "a\u00adb", "😀a", "a😀", "👍", "—", "–", "-", "−",
	} {
		add(w)
	}
	return out
}

// verifyCtype returns the verdict on the LC_CTYPE of f's collation: the
// locale whose case mapping (accelerator.MapCase) is the origin's upper,
// lower and initcap, or why not. Established as collations are: libc, a
// UTF-8 locale installed here, the origin's glibc (its collversion; the
// same release's locale data defines LC_CTYPE), and a probe of the same
// strings mapped alike at the origin.
func verifyCtype(ctx context.Context, conn *pgconn.PgConn, f collationFacts) (collationVerdict, error) {
	return cachedVerdict("ctype|"+f.provider+"|"+f.ctype+"|"+f.version, func() (collationVerdict, error) {
		return judgeCtype(ctx, conn, f)
	})
}

func judgeCtype(ctx context.Context, conn *pgconn.PgConn, f collationFacts) (collationVerdict, error) {
	no := func(format string, args ...any) (collationVerdict, error) {
		return collationVerdict{note: fmt.Sprintf(format, args...)}, nil
	}
	caseLocale := f.ctype
	switch {
	case f.provider == "i":
		// ICU maps case in the collation's ICU locale (icu_convert_case).
		if v, err := icuVersionCheck(f, "case mapping"); v != "" || err != nil {
			return collationVerdict{note: v}, err
		}
		caseLocale = accelerator.ICUPrefix + f.locale
	case f.provider != "c":
		return no("its case is mapped by collation %s of provider %q, which pgaccel does not reproduce (only libc's and ICU's)", f.name, f.provider)
	case !utf8Locale(f.ctype):
		return no("its LC_CTYPE %s is not a UTF-8 locale", f.ctype)
	default:
		if err := accelerator.CaseLocaleAvailable(f.ctype); err != nil {
			return no("its LC_CTYPE's %v", err)
		}
		// Postgres records no version of an LC_CTYPE; the collation's,
		// when there is one, is its glibc's. Without one (LC_COLLATE C),
		// the probe alone decides.
		if here := accelerator.LibcVersion(); f.version != "" && f.version != here {
			return no("its LC_CTYPE %s comes from glibc %s at the origin and pgaccel runs on glibc %s", f.ctype, f.version, here)
		}
	}
	probe := collationProbe()
	sql := "SELECT string_agg(upper(s COLLATE " + f.name + ") || chr(1) || lower(s COLLATE " + f.name + ") || chr(1) || initcap(s COLLATE " + f.name +
		"), chr(2) ORDER BY i) FROM unnest($1::text[]) WITH ORDINALITY u(s, i)"
	res := conn.ExecParams(ctx, sql, [][]byte{textArray(probe)}, nil, nil, nil).Read()
	if res.Err != nil {
		return collationVerdict{}, fmt.Errorf("probe the case mapping of collation %s: %w", f.name, res.Err)
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return collationVerdict{}, errors.New("probe the case mapping of collation " + f.name + ": no answer")
	}
	got := strings.Split(string(res.Rows[0][0]), "\x02")
	if len(got) != len(probe) {
		return collationVerdict{}, fmt.Errorf("probe the case mapping of collation %s: %d answers for %d strings", f.name, len(got), len(probe))
	}
	for i, s := range probe {
		var local []string
		for how := 0; how < 3; how++ {
			m, err := accelerator.MapCase(caseLocale, s, how)
			if err != nil {
				return no("its LC_CTYPE's %v", err)
			}
			local = append(local, m)
		}
		if want := strings.Join(local, "\x01"); got[i] != want {
			return no("its LC_CTYPE %s maps the case of %q to %q at the origin and to %q here", f.ctype, s, got[i], want)
		}
	}
	return collationVerdict{locale: caseLocale}, nil
}

// textArray is the text[] literal of ss.
func textArray(ss []string) []byte {
	var lit strings.Builder
	lit.WriteByte('{')
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	for i, s := range ss {
		if i > 0 {
			lit.WriteByte(',')
		}
		lit.WriteByte('"')
		lit.WriteString(esc.Replace(s))
		lit.WriteByte('"')
	}
	lit.WriteByte('}')
	return []byte(lit.String())
}
