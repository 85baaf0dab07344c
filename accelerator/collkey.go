package accelerator

/*
#define _GNU_SOURCE
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <gnu/libc-version.h>

static locale_t pgaccel_newlocale(const char *name) {
	return newlocale(LC_COLLATE_MASK, name, (locale_t)0);
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

// CollationKeyFunction is the DuckDB scalar function of the keys:
//
//	pgaccel_collkey(text VARCHAR, locale VARCHAR) -> BLOB
//
// NULL text is NULL. A locale this process cannot load is an error.
const CollationKeyFunction = "pgaccel_collkey"

// LibcVersion is the version of the C library this process runs on, as
// Postgres records it in a libc collation's collversion ("2.36").
func LibcVersion() string { return C.GoString(C.gnu_get_libc_version()) }

var locales struct {
	sync.Mutex
	m map[string]C.locale_t
}

// collLocale returns the C locale named name (loaded once, kept for the
// life of the process: a handful of collations).
func collLocale(name string) (C.locale_t, error) {
	locales.Lock()
	defer locales.Unlock()
	if loc, ok := locales.m[name]; ok {
		return loc, nil
	}
	if name == "" || strings.IndexByte(name, 0) >= 0 {
		return nil, fmt.Errorf("locale %q is not a locale name", name)
	}
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	loc := C.pgaccel_newlocale(cs)
	if loc == nil {
		return nil, fmt.Errorf("locale %s is not installed on this machine (install it: localedef -i %s -f UTF-8 %s, or the locales package's locale-gen)",
			name, strings.SplitN(name, ".", 2)[0], name)
	}
	if locales.m == nil {
		locales.m = map[string]C.locale_t{}
	}
	locales.m[name] = loc
	return loc, nil
}

// LocaleAvailable reports whether this process can order text under the
// libc locale name, an error saying why not otherwise.
func LocaleAvailable(name string) error {
	_, err := collLocale(name)
	return err
}

// CollationKey returns s's key under the libc locale (see above). s must
// hold no NUL byte (Postgres text cannot).
func CollationKey(locale, s string) ([]byte, error) {
	loc, err := collLocale(locale)
	if err != nil {
		return nil, err
	}
	return collationKey(loc, s, nil)
}

// collationKey appends s's key to dst.
func collationKey(loc C.locale_t, s string, dst []byte) ([]byte, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, errors.New(CollationKeyFunction + ": text holds a NUL byte")
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
		return nil, errors.New(CollationKeyFunction + ": no locale")
	}
	loc, err := collLocale(name)
	if err != nil {
		return nil, err
	}
	return collationKey(loc, s, nil)
}

var establishedCollations sync.Map // provider|locale|version -> bool

// RecordCollation records whether the origin's collation of provider,
// locale and version (as pg_collation or pg_database records them) was
// established to order as this process's keys under locale (refresh).
func RecordCollation(provider, locale, version string, ok bool) {
	establishedCollations.Store(provider+"|"+locale+"|"+version, ok)
}

// EstablishedCollation reports whether RecordCollation recorded that
// collation as established.
func EstablishedCollation(provider, locale, version string) bool {
	ok, _ := establishedCollations.Load(provider + "|" + locale + "|" + version)
	return ok == true
}
