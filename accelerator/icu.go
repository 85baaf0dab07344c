package accelerator

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

// The few ICU calls pgaccel makes, through pointers found with dlsym: the
// process links no ICU, so it builds and runs without one and uses
// whichever release the machine has (its symbols carry the release's
// suffix, ucol_open_72).
typedef void *(*pgaccel_ucol_open_t)(const char *, int *);
typedef int32_t (*pgaccel_ucol_getSortKey_t)(const void *, const uint16_t *, int32_t, uint8_t *, int32_t);
typedef void (*pgaccel_ucol_getVersion_t)(const void *, uint8_t *);
typedef void (*pgaccel_u_versionToString_t)(const uint8_t *, char *);
typedef int32_t (*pgaccel_u_case_t)(uint16_t *, int32_t, const uint16_t *, int32_t, const char *, int *);
typedef int32_t (*pgaccel_u_strToTitle_t)(uint16_t *, int32_t, const uint16_t *, int32_t, void *, const char *, int *);

static void *pgaccel_icu_open(void *f, const char *loc, int *status) {
	return ((pgaccel_ucol_open_t)f)(loc, status);
}
static int32_t pgaccel_icu_sortkey(void *f, const void *coll, const uint16_t *s, int32_t n, uint8_t *out, int32_t cap) {
	return ((pgaccel_ucol_getSortKey_t)f)(coll, s, n, out, cap);
}
static void pgaccel_icu_version(void *getVersion, void *toString, const void *coll, char *out) {
	uint8_t v[4];
	((pgaccel_ucol_getVersion_t)getVersion)(coll, v);
	((pgaccel_u_versionToString_t)toString)(v, out);
}
static int32_t pgaccel_icu_case(void *f, uint16_t *out, int32_t cap, const uint16_t *s, int32_t n, const char *loc, int *status) {
	return ((pgaccel_u_case_t)f)(out, cap, s, n, loc, status);
}
static int32_t pgaccel_icu_title(void *f, uint16_t *out, int32_t cap, const uint16_t *s, int32_t n, const char *loc, int *status) {
	return ((pgaccel_u_strToTitle_t)f)(out, cap, s, n, NULL, loc, status);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unsafe"

	"github.com/pgaccel/pgaccel/pgdef"
)

// Ordering text under an ICU collation. Postgres compares two strings of a
// deterministic ICU collation with ucol_strcoll under a collator opened
// with ucol_open(the collation's ICU locale) and, when they collate equal,
// by their bytes. ICU's sort key (ucol_getSortKey) orders bytewise as
// ucol_strcoll does and ends with its only 0x00, so
//
//	key = ucol_getSortKey(s) (its 0x00 included) || s
//
// orders as Postgres orders: the same construction as the libc keys
// (collkey.go), whose function computes these for a locale named
// "icu:<ICU locale>". Exact when this process's ICU is the origin's
// release: refresh compares the collator's version (what Postgres records
// as the collation's collversion) and probes the order before it uses them.
//
// Case mapping under an ICU collation is Postgres's icu_convert_case:
// u_strToUpper, u_strToLower and u_strToTitle (default word breaks) in
// the collation's locale, over UTF-16.

// ICUPrefix marks a locale name as an ICU locale (CollationLocale and
// CaseLocale "icu:en-US"), which the key and case functions take.
const ICUPrefix = "icu:"

// IsICULocale reports whether a locale name is an ICU one (ICUPrefix).
func IsICULocale(name string) bool { return strings.HasPrefix(name, ICUPrefix) }

// icuLib is the ICU release this process found (once).
type icuLib struct {
	major                       int
	open, sortKey               unsafe.Pointer
	getVersion, versionToString unsafe.Pointer
	toUpper, toLower, toTitle   unsafe.Pointer
	err                         error
	mu                          sync.Mutex
	free                        map[string][]unsafe.Pointer // idle collators by locale
	failed                      map[string]error            // the locales ucol_open refused, why
}

var (
	icuOnce sync.Once
	icu     icuLib
)

// loadICU looks for libicui18n.so.NN from icuNewest down to icuOldest and
// takes the first (the newest installed).
const icuNewest, icuOldest = 99, 50

func loadICU() *icuLib {
	icuOnce.Do(func() {
		for v := icuNewest; v >= icuOldest; v-- {
			name := C.CString("libicui18n.so." + strconv.Itoa(v))
			h := C.dlopen(name, C.RTLD_NOW|C.RTLD_LOCAL)
			C.free(unsafe.Pointer(name))
			if h == nil {
				continue
			}
			sym := func(fn string) unsafe.Pointer {
				for _, n := range []string{fn + "_" + strconv.Itoa(v), fn} {
					cs := C.CString(n)
					p := C.dlsym(h, cs)
					C.free(unsafe.Pointer(cs))
					if p != nil {
						return p
					}
				}
				return nil
			}
			icu.major = v
			icu.open, icu.sortKey = sym("ucol_open"), sym("ucol_getSortKey")
			icu.getVersion, icu.versionToString = sym("ucol_getVersion"), sym("u_versionToString")
			icu.toUpper, icu.toLower, icu.toTitle = sym("u_strToUpper"), sym("u_strToLower"), sym("u_strToTitle")
			for _, p := range []unsafe.Pointer{icu.open, icu.sortKey, icu.getVersion, icu.versionToString, icu.toUpper, icu.toLower, icu.toTitle} {
				if p == nil {
					icu.err = fmt.Errorf("ICU %d (libicui18n.so.%d) lacks the functions pgaccel calls", v, v)
				}
			}
			return
		}
		icu.err = errors.New("no ICU library is installed on this machine (install the libicu package of the origin's ICU release, e.g. apt-get install libicu72)")
	})
	return &icu
}

// ICURelease is the major release of the ICU this process loads (72), or
// an error saying why it has none.
func ICURelease() (int, error) {
	l := loadICU()
	return l.major, l.err
}

// collator returns an idle collator of locale (ICU's name, without
// ICUPrefix), opening one when none is idle; put it back with release.
// A collator serves one caller at a time; they stay open for the life of
// the process (a few per locale: one per concurrent caller).
func (l *icuLib) collator(locale string) (unsafe.Pointer, error) {
	if l.err != nil {
		return nil, l.err
	}
	l.mu.Lock()
	if err := l.failed[locale]; err != nil {
		l.mu.Unlock()
		return nil, err
	}
	if idle := l.free[locale]; len(idle) > 0 {
		c := idle[len(idle)-1]
		l.free[locale] = idle[:len(idle)-1]
		l.mu.Unlock()
		return c, nil
	}
	l.mu.Unlock()
	if strings.IndexByte(locale, 0) >= 0 {
		return nil, fmt.Errorf("ICU locale %q is not a locale name", locale)
	}
	cs := C.CString(locale)
	defer C.free(unsafe.Pointer(cs))
	var status C.int
	c := C.pgaccel_icu_open(l.open, cs, &status)
	var err error
	if status > 0 || c == nil {
		err = fmt.Errorf("ICU %d cannot open a collator for locale %q (error %d)", l.major, locale, int(status))
	}
	if err != nil {
		l.mu.Lock()
		if l.failed == nil {
			l.failed = map[string]error{}
		}
		l.failed[locale] = err
		l.mu.Unlock()
		return nil, err
	}
	return c, nil
}

// release returns c, a collator of locale, to the idle ones.
func (l *icuLib) release(locale string, c unsafe.Pointer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.free == nil {
		l.free = map[string][]unsafe.Pointer{}
	}
	l.free[locale] = append(l.free[locale], c)
}

// ICUCollatorVersion is the version of this process's ICU collator for
// locale (without ICUPrefix), as Postgres records it in the collversion of
// a collation of that locale ("153.120").
func ICUCollatorVersion(locale string) (string, error) {
	l := loadICU()
	c, err := l.collator(locale)
	if err != nil {
		return "", err
	}
	defer l.release(locale, c)
	var buf [32]C.char
	C.pgaccel_icu_version(l.getVersion, l.versionToString, c, &buf[0])
	return C.GoString(&buf[0]), nil
}

// utf16Of is s in UTF-16, as ICU takes it.
func utf16Of(s string) []uint16 { return utf16.Encode([]rune(s)) }

// icuKey appends s's key under the ICU locale (without ICUPrefix) to dst.
func icuKey(locale, s string, dst []byte) ([]byte, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, errors.New(pgdef.FuncCollkey + ": text holds a NUL byte")
	}
	l := loadICU()
	c, err := l.collator(locale)
	if err != nil {
		return nil, err
	}
	defer l.release(locale, c)
	u := utf16Of(s)
	var src *C.uint16_t
	if len(u) > 0 {
		src = (*C.uint16_t)(unsafe.Pointer(&u[0]))
	}
	n := 4*len(u) + 32
	for {
		buf := make([]byte, n)
		got := int(C.pgaccel_icu_sortkey(l.sortKey, c, src, C.int32_t(len(u)), (*C.uint8_t)(unsafe.Pointer(&buf[0])), C.int32_t(n)))
		if got <= 0 {
			return nil, errors.New(pgdef.FuncCollkey + ": ICU made no sort key")
		}
		if got <= n {
			// got counts the key's terminating 0x00, which stays: it
			// separates the key from the bytes.
			dst = append(dst, buf[:got]...)
			return append(dst, s...), nil
		}
		n = got
	}
}

// icuCase maps s's case under the ICU locale (without ICUPrefix): upper
// (how 0), lower (1) or title (2), as Postgres's icu_convert_case does.
func icuCase(locale, s string, how int) (string, error) {
	l := loadICU()
	if l.err != nil {
		return "", l.err
	}
	if strings.IndexByte(locale, 0) >= 0 {
		return "", fmt.Errorf("ICU locale %q is not a locale name", locale)
	}
	if s == "" {
		return s, nil
	}
	cs := C.CString(locale)
	defer C.free(unsafe.Pointer(cs))
	u := utf16Of(s)
	src := (*C.uint16_t)(unsafe.Pointer(&u[0]))
	n := len(u) + 8
	for {
		out := make([]uint16, n)
		var status C.int
		dst := (*C.uint16_t)(unsafe.Pointer(&out[0]))
		var got C.int32_t
		switch how {
		case 0:
			got = C.pgaccel_icu_case(l.toUpper, dst, C.int32_t(n), src, C.int32_t(len(u)), cs, &status)
		case 1:
			got = C.pgaccel_icu_case(l.toLower, dst, C.int32_t(n), src, C.int32_t(len(u)), cs, &status)
		default:
			got = C.pgaccel_icu_title(l.toTitle, dst, C.int32_t(n), src, C.int32_t(len(u)), cs, &status)
		}
		if int(got) > n { // U_BUFFER_OVERFLOW_ERROR: try with its size
			n = int(got)
			continue
		}
		if status > 0 {
			return "", fmt.Errorf("ICU case mapping failed (error %d)", int(status))
		}
		return string(utf16.Decode(out[:got])), nil
	}
}
