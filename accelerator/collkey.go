package accelerator

/*
#define _GNU_SOURCE
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <gnu/libc-version.h>

#include <wctype.h>

static locale_t pgaccel_newlocale(const char *name) {
	return newlocale(LC_COLLATE_MASK, name, (locale_t)0);
}

static locale_t pgaccel_newctype(const char *name) {
	return newlocale(LC_CTYPE_MASK, name, (locale_t)0);
}

// pgaccel_case maps the n code points of s in place, as Postgres's
// str_toupper, str_tolower and str_initcap do under a libc locale
// (towupper_l, towlower_l; initcap lowers a letter after an alphanumeric
// one, iswalnum_l, and uppers the others).
static void pgaccel_case(unsigned int *s, int n, int how, locale_t loc) {
	int wasalnum = 0;
	for (int i = 0; i < n; i++) {
		wint_t c = (wint_t)s[i];
		switch (how) {
		case 0: s[i] = (unsigned int)towupper_l(c, loc); break;
		case 1: s[i] = (unsigned int)towlower_l(c, loc); break;
		default:
			if (wasalnum) s[i] = (unsigned int)towlower_l(c, loc);
			else s[i] = (unsigned int)towupper_l(c, loc);
			wasalnum = iswalnum_l((wint_t)s[i], loc) != 0;
		}
	}
}

// pgaccel_strxfrm writes the collation key of s (NUL-terminated) into
// out of size n and returns its length; a length >= n means out was too
// small.
static size_t pgaccel_strxfrm(char *out, const char *s, size_t n, locale_t loc) {
	return strxfrm_l(out, s, n, loc);
}
*/
import "C"

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/pgaccel/pgaccel/pgdef"
)

// Ordering text under a linguistic (libc) collation. Postgres compares two
// strings of a deterministic libc collation with strcoll_l in the
// collation's locale and, when they collate equal, by their bytes
// (varstr_cmp). The C library's strxfrm_l maps a string to a key whose
// bytewise order is strcoll_l's, so
//
//	pgaccel_collkey(s, locale) = strxfrm_l(s, locale) || 0x00 || s
//
// orders as Postgres orders under that locale: strxfrm output holds no NUL,
// so a key that is a prefix of another orders first, and equal keys are
// ordered by the bytes. The planner sorts and range-compares by it
// (planner/collorder.go); it is exact only when this process's C library
// holds the same locale data as the origin's, which refresh establishes
// per collation (the origin's collversion is the glibc version its locale
// data comes from, and a probe of strings ordered at the origin) before a
// column's ordering is accelerated.

// pgdef.FuncCollkey is the DuckDB scalar function of the keys:
//
//	pgaccel_collkey(text VARCHAR, locale VARCHAR) -> BLOB
//
// NULL text is NULL. A locale this process cannot load is an error.

// LibcVersion is the version of the C library this process runs on, as
// Postgres records it in a libc collation's collversion ("2.36").
func LibcVersion() string { return C.GoString(C.gnu_get_libc_version()) }

// localeCache keeps the C locales of one category, loaded once for the
// life of the process (a handful of collations).
type localeCache struct {
	sync.Mutex
	m    map[string]C.locale_t
	load func(*C.char) C.locale_t
}

var (
	locales = &localeCache{load: func(n *C.char) C.locale_t { return C.pgaccel_newlocale(n) }}
	ctypes  = &localeCache{load: func(n *C.char) C.locale_t { return C.pgaccel_newctype(n) }}
)

// get returns the locale named name.
func (lc *localeCache) get(name string) (C.locale_t, error) {
	lc.Lock()
	defer lc.Unlock()
	if loc, ok := lc.m[name]; ok {
		return loc, nil
	}
	if name == "" || strings.IndexByte(name, 0) >= 0 {
		return nil, fmt.Errorf("locale %q is not a locale name", name)
	}
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	loc := lc.load(cs)
	if loc == nil {
		return nil, fmt.Errorf("locale %s is not installed on this machine (install it: localedef -i %s -f UTF-8 %s, or the locales package's locale-gen)",
			name, strings.SplitN(name, ".", 2)[0], name)
	}
	if lc.m == nil {
		lc.m = map[string]C.locale_t{}
	}
	lc.m[name] = loc
	return loc, nil
}

// collLocale returns the LC_COLLATE locale named name.
func collLocale(name string) (C.locale_t, error) { return locales.get(name) }

// LocaleAvailable reports whether this process can order text under the
// libc locale name, an error saying why not otherwise.
func LocaleAvailable(name string) error {
	if IsICULocale(name) {
		_, err := ICUCollatorVersion(name[len(ICUPrefix):])
		return err
	}
	_, err := collLocale(name)
	return err
}

// LocaleVersion is the version of this process's data for a collation
// or case locale, as Postgres records it in a collation's collversion:
// the ICU collator's for an ICU locale (ICUPrefix), the C library's for a
// libc one.
func LocaleVersion(name string) (string, error) {
	if IsICULocale(name) {
		return ICUCollatorVersion(name[len(ICUPrefix):])
	}
	return LibcVersion(), nil
}

// CaseLocaleAvailable reports whether this process can map case under the
// libc locale name (its LC_CTYPE), an error saying why not otherwise.
func CaseLocaleAvailable(name string) error {
	if IsICULocale(name) {
		return LocaleAvailable(name)
	}
	_, err := ctypes.get(name)
	return err
}

// CollationKey returns s's key under the libc locale (see above). s must
// hold no NUL byte (Postgres text cannot).
func CollationKey(locale, s string) ([]byte, error) {
	if IsICULocale(locale) {
		return icuKey(locale[len(ICUPrefix):], s, nil)
	}
	loc, err := collLocale(locale)
	if err != nil {
		return nil, err
	}
	return collationKey(loc, s, nil)
}

// collationKey appends s's key to dst.
func collationKey(loc C.locale_t, s string, dst []byte) ([]byte, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, errors.New(pgdef.FuncCollkey + ": text holds a NUL byte")
	}
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	n := C.size_t(2*len(s) + 16)
	for {
		buf := C.malloc(n)
		got := C.pgaccel_strxfrm((*C.char)(buf), cs, n, loc)
		if got < n {
			dst = append(dst, C.GoBytes(buf, C.int(got))...)
			C.free(buf)
			break
		}
		C.free(buf)
		n = got + 1
	}
	dst = append(dst, 0)
	return append(dst, s...), nil
}

func collationKeyRow(values []driver.Value) (any, error) {
	s, ok := values[0].(string)
	if !ok {
		return nil, nil // NULL
	}
	name, ok := values[1].(string)
	if !ok {
		return nil, errors.New(pgdef.FuncCollkey + ": no locale")
	}
	return CollationKey(name, s)
}

var establishedCollations sync.Map // provider|locale|version -> locale

// RecordCollation records that the origin's collation of provider, locale
// and version (as pg_collation or pg_database records them) was
// established to order as this process's keys under locale (refresh).
// keyLocale is the locale name the key function takes for it ("icu:" and
// the ICU locale for ICU's).
func RecordCollation(provider, locale, version, keyLocale string) {
	establishedCollations.Store(provider+"|"+locale+"|"+version, keyLocale)
}

// DefaultCollationKeySQL is the SQL of the session's database's default
// collation as a key EstablishedCollation reads (provider|locale|version);
// NULL when the database is not found.
const DefaultCollationKeySQL = `(SELECT d.datlocprovider::text || '|' || ` + DatabaseLocaleSQL + ` || '|' || coalesce(d.datcollversion, '') ` +
	`FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database())`

// DatabaseLocaleSQL is the SQL of the locale of database d's default
// collation: its ICU locale for provider ICU (daticulocale before
// Postgres 17, datlocale from 17: read through to_jsonb, which either
// release answers), else datcollate.
const DatabaseLocaleSQL = `CASE WHEN d.datlocprovider = 'i' THEN coalesce(pg_catalog.to_jsonb(d) ->> 'datlocale', pg_catalog.to_jsonb(d) ->> 'daticulocale', '') ELSE d.datcollate END`

// CollationLocaleSQL is, for collation co, what DatabaseLocaleSQL is for
// a database: colliculocale or colllocale for ICU, else collcollate.
const CollationLocaleSQL = `CASE WHEN co.collprovider = 'i' THEN coalesce(pg_catalog.to_jsonb(co) ->> 'colllocale', pg_catalog.to_jsonb(co) ->> 'colliculocale', '') ELSE coalesce(co.collcollate, '') END`

// EstablishedCollation returns the locale of the collation key
// provider|locale|version when RecordCollation recorded it, "" otherwise.
// One map lookup: the proxy asks it for every statement it plans.
func EstablishedCollation(key string) string {
	locale, _ := establishedCollations.Load(key)
	s, _ := locale.(string)
	return s
}

// Case mapping under a libc LC_CTYPE. In a UTF-8 database Postgres maps
// upper, lower and initcap code point by code point with the C library's
// towupper_l and towlower_l in the collation's LC_CTYPE (initcap: a letter
// after an alphanumeric one, by iswalnum_l, is lowered, any other
// uppered), and ILIKE compares the lowered text and pattern. These are
// the same calls, so the answers are the origin's when the C library's
// locale data is (refresh establishes it per LC_CTYPE, as for collations).

// MapCase returns s upper-cased (how 0), lower-cased (1) or initcapped (2)
// under the libc LC_CTYPE locale.
func MapCase(locale, s string, how int) (string, error) {
	if IsICULocale(locale) {
		return icuCase(locale[len(ICUPrefix):], s, how)
	}
	loc, err := ctypes.get(locale)
	if err != nil {
		return "", err
	}
	if s == "" {
		return s, nil
	}
	cps := make([]C.uint, 0, len(s))
	for _, r := range s {
		cps = append(cps, C.uint(r))
	}
	C.pgaccel_case(&cps[0], C.int(len(cps)), C.int(how), loc)
	var b strings.Builder
	b.Grow(len(s))
	for _, c := range cps {
		b.WriteRune(rune(c))
	}
	return b.String(), nil
}

func caseRow(how int) func(values []driver.Value) (any, error) {
	return func(values []driver.Value) (any, error) {
		s, ok := values[0].(string)
		if !ok {
			return nil, nil // NULL
		}
		name, ok := values[1].(string)
		if !ok {
			return nil, errors.New("case mapping: no locale")
		}
		return MapCase(name, s, how)
	}
}
