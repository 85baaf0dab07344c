package encode

import (
	"math"
	"math/big"
	"math/bits"
)

// This file is a Go port of Postgres's Ryu (src/common/d2s.c and f2s.c),
// which float8out and float4out use when extra_float_digits > 0. Postgres
// builds Ryu without STRICTLY_SHORTEST: the interval of acceptable decimals
// is always open (acceptBounds = false), so a decimal lying exactly halfway
// between two floats is never chosen, even when round-half-even parsing
// would map it back. Go's strconv accepts such bounds and prints, for
// example, 1e+23 where Postgres prints 9.999999999999999e+22. Integers
// below 2^53 (2^24 for float4) take Postgres's exact small-integer path.

const (
	doublePow5InvBitcount = 122
	doublePow5Bitcount    = 121
	floatPow5InvBitcount  = 59
	floatPow5Bitcount     = 61
)

// The double tables are what Ryu's PrintDoubleLookupTable generates (and
// Postgres ships in d2s_full_table.h): 5^i normalized to 121 bits, and
// floor(2^(bitlen(5^i)-1+122) / 5^i) + 1, as {low, high} 64-bit halves.
var (
	doublePow5InvSplit [292][2]uint64
	doublePow5Split    [326][2]uint64
)

func init() {
	mask := new(big.Int).SetUint64(math.MaxUint64)
	split := func(v *big.Int) [2]uint64 {
		lo := new(big.Int).And(v, mask).Uint64()
		hi := new(big.Int).Rsh(v, 64).Uint64()
		return [2]uint64{lo, hi}
	}
	pow := big.NewInt(1)
	five := big.NewInt(5)
	for i := 0; i < len(doublePow5Split) || i < len(doublePow5InvSplit); i++ {
		l := pow.BitLen()
		if i < len(doublePow5Split) {
			v := new(big.Int)
			if j := l - doublePow5Bitcount; j >= 0 {
				v.Rsh(pow, uint(j))
			} else {
				v.Lsh(pow, uint(-j))
			}
			doublePow5Split[i] = split(v)
		}
		if i < len(doublePow5InvSplit) {
			v := new(big.Int).Lsh(big.NewInt(1), uint(l-1+doublePow5InvBitcount))
			v.Quo(v, pow)
			v.Add(v, big.NewInt(1))
			doublePow5InvSplit[i] = split(v)
		}
		pow.Mul(pow, five)
	}
}

// The float tables, as in Postgres's f2s.c.
var floatPow5InvSplit = [31]uint64{
	576460752303423489, 461168601842738791, 368934881474191033, 295147905179352826,
	472236648286964522, 377789318629571618, 302231454903657294, 483570327845851670,
	386856262276681336, 309485009821345069, 495176015714152110, 396140812571321688,
	316912650057057351, 507060240091291761, 405648192073033409, 324518553658426727,
	519229685853482763, 415383748682786211, 332306998946228969, 531691198313966350,
	425352958651173080, 340282366920938464, 544451787073501542, 435561429658801234,
	348449143727040987, 557518629963265579, 446014903970612463, 356811923176489971,
	570899077082383953, 456719261665907162, 365375409332725730,
}

var floatPow5Split = [47]uint64{
	1152921504606846976, 1441151880758558720, 1801439850948198400, 2251799813685248000,
	1407374883553280000, 1759218604441600000, 2199023255552000000, 1374389534720000000,
	1717986918400000000, 2147483648000000000, 1342177280000000000, 1677721600000000000,
	2097152000000000000, 1310720000000000000, 1638400000000000000, 2048000000000000000,
	1280000000000000000, 1600000000000000000, 2000000000000000000, 1250000000000000000,
	1562500000000000000, 1953125000000000000, 1220703125000000000, 1525878906250000000,
	1907348632812500000, 1192092895507812500, 1490116119384765625, 1862645149230957031,
	1164153218269348144, 1455191522836685180, 1818989403545856475, 2273736754432320594,
	1421085471520200371, 1776356839400250464, 2220446049250313080, 1387778780781445675,
	1734723475976807094, 2168404344971008868, 1355252715606880542, 1694065894508600678,
	2117582368135750847, 1323488980084844279, 1654361225106055349, 2067951531382569187,
	1292469707114105741, 1615587133892632177, 2019483917365790221,
}

func pow5bits(e int32) int32  { return int32((uint32(e)*1217359)>>19) + 1 }
func log10Pow2(e int32) int32 { return int32((uint32(e) * 78913) >> 18) }
func log10Pow5(e int32) int32 { return int32((uint32(e) * 732923) >> 20) }

func pow5Factor64(v uint64) int32 {
	n := int32(0)
	for v%5 == 0 {
		v /= 5
		n++
	}
	return n
}

func pow5Factor32(v uint32) int32 {
	n := int32(0)
	for v%5 == 0 {
		v /= 5
		n++
	}
	return n
}

func b2u64(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// mulShift64 is ((m * mul) >> j) truncated to 64 bits, for j >= 64.
func mulShift64(m uint64, mul *[2]uint64, j int32) uint64 {
	hi0, _ := bits.Mul64(m, mul[0])
	hi1, lo1 := bits.Mul64(m, mul[1])
	sum, carry := bits.Add64(lo1, hi0, 0)
	hi1 += carry
	s := uint(j - 64)
	return hi1<<(64-s) | sum>>s
}

// d2d is Ryu's double-to-decimal with acceptBounds = false: the shortest
// decimal mantissa*10^exponent strictly inside the rounding interval.
func d2d(ieeeMantissa uint64, ieeeExponent uint32) (uint64, int32) {
	var e2 int32
	var m2 uint64
	if ieeeExponent == 0 {
		e2 = 1 - 1023 - 52 - 2
		m2 = ieeeMantissa
	} else {
		e2 = int32(ieeeExponent) - 1023 - 52 - 2
		m2 = 1<<52 | ieeeMantissa
	}
	mv := 4 * m2
	mmShift := b2u64(ieeeMantissa != 0 || ieeeExponent <= 1)
	var vr, vp, vm uint64
	var e10 int32
	vrIsTrailingZeros := false
	if e2 >= 0 {
		q := log10Pow2(e2)
		if e2 > 3 {
			q--
		}
		k := doublePow5InvBitcount + pow5bits(q) - 1
		i := -e2 + q + k
		e10 = q
		mul := &doublePow5InvSplit[q]
		vr = mulShift64(4*m2, mul, i)
		vp = mulShift64(4*m2+2, mul, i)
		vm = mulShift64(4*m2-1-mmShift, mul, i)
		if q <= 21 {
			if mv%5 == 0 {
				vrIsTrailingZeros = pow5Factor64(mv) >= q
			} else {
				vp -= b2u64(pow5Factor64(mv+2) >= q)
			}
		}
	} else {
		q := log10Pow5(-e2)
		if -e2 > 1 {
			q--
		}
		i := -e2 - q
		k := pow5bits(i) - doublePow5Bitcount
		j := q - k
		e10 = q + e2
		mul := &doublePow5Split[i]
		vr = mulShift64(4*m2, mul, j)
		vp = mulShift64(4*m2+2, mul, j)
		vm = mulShift64(4*m2-1-mmShift, mul, j)
		if q <= 1 {
			vrIsTrailingZeros = true
			vp--
		} else if q < 63 {
			vrIsTrailingZeros = mv&(1<<(q-1)-1) == 0
		}
	}
	removed := int32(0)
	lastRemovedDigit := uint64(0)
	for vp/10 > vm/10 {
		vrIsTrailingZeros = vrIsTrailingZeros && lastRemovedDigit == 0
		lastRemovedDigit = vr % 10
		vr /= 10
		vp /= 10
		vm /= 10
		removed++
	}
	if vrIsTrailingZeros && lastRemovedDigit == 5 && vr%2 == 0 {
		lastRemovedDigit = 4 // round half to even on an exact tie
	}
	return vr + b2u64(vr == vm || lastRemovedDigit >= 5), e10 + removed
}

// mulShift32 is ((m * factor) >> shift) for shift > 32.
func mulShift32(m uint32, factor uint64, shift int32) uint32 {
	bits0 := uint64(m) * (factor & math.MaxUint32)
	bits1 := uint64(m) * (factor >> 32)
	sum := bits0>>32 + bits1
	return uint32(sum >> uint(shift-32))
}

// f2d is Ryu's float-to-decimal with acceptBounds = false.
func f2d(ieeeMantissa, ieeeExponent uint32) (uint32, int32) {
	var e2 int32
	var m2 uint32
	if ieeeExponent == 0 {
		e2 = 1 - 127 - 23 - 2
		m2 = ieeeMantissa
	} else {
		e2 = int32(ieeeExponent) - 127 - 23 - 2
		m2 = 1<<23 | ieeeMantissa
	}
	mv := 4 * m2
	mp := 4*m2 + 2
	mmShift := uint32(b2u64(ieeeMantissa != 0 || ieeeExponent <= 1))
	mm := 4*m2 - 1 - mmShift
	var vr, vp, vm uint32
	var e10 int32
	vrIsTrailingZeros := false
	lastRemovedDigit := uint32(0)
	if e2 >= 0 {
		q := log10Pow2(e2)
		e10 = q
		k := floatPow5InvBitcount + pow5bits(q) - 1
		i := -e2 + q + k
		vr = mulShift32(mv, floatPow5InvSplit[q], i)
		vp = mulShift32(mp, floatPow5InvSplit[q], i)
		vm = mulShift32(mm, floatPow5InvSplit[q], i)
		if q != 0 && (vp-1)/10 <= vm/10 {
			l := floatPow5InvBitcount + pow5bits(q-1) - 1
			lastRemovedDigit = mulShift32(mv, floatPow5InvSplit[q-1], -e2+q-1+l) % 10
		}
		if q <= 9 {
			if mv%5 == 0 {
				vrIsTrailingZeros = pow5Factor32(mv) >= q
			} else {
				vp -= uint32(b2u64(pow5Factor32(mp) >= q))
			}
		}
	} else {
		q := log10Pow5(-e2)
		e10 = q + e2
		i := -e2 - q
		k := pow5bits(i) - floatPow5Bitcount
		j := q - k
		vr = mulShift32(mv, floatPow5Split[i], j)
		vp = mulShift32(mp, floatPow5Split[i], j)
		vm = mulShift32(mm, floatPow5Split[i], j)
		if q != 0 && (vp-1)/10 <= vm/10 {
			j = q - 1 - (pow5bits(i+1) - floatPow5Bitcount)
			lastRemovedDigit = mulShift32(mv, floatPow5Split[i+1], j) % 10
		}
		if q <= 1 {
			vrIsTrailingZeros = true
			vp--
		} else if q < 31 {
			vrIsTrailingZeros = mv&(1<<uint(q-1)-1) == 0
		}
	}
	removed := int32(0)
	if vrIsTrailingZeros {
		for vp/10 > vm/10 {
			vrIsTrailingZeros = vrIsTrailingZeros && lastRemovedDigit == 0
			lastRemovedDigit = vr % 10
			vr /= 10
			vp /= 10
			vm /= 10
			removed++
		}
		if vrIsTrailingZeros && lastRemovedDigit == 5 && vr%2 == 0 {
			lastRemovedDigit = 4
		}
	} else {
		for vp/10 > vm/10 {
			lastRemovedDigit = vr % 10
			vr /= 10
			vp /= 10
			vm /= 10
			removed++
		}
	}
	return vr + uint32(b2u64(vr == vm || lastRemovedDigit >= 5)), e10 + removed
}

// appendShortest appends the Ryu output of Postgres for a finite non-zero
// f: bitSize 64 for float8out, 32 for float4out (f holds a float32).
// Fixed notation is used when the decimal exponent is in [-4, 15) for
// float8 or [-4, 6) for float4.
func appendShortest(dst []byte, f float64, bitSize int) []byte {
	var mant uint64
	var exp int32
	var neg bool
	maxFixed := int32(15)
	if bitSize == 32 {
		maxFixed = 6
		b := math.Float32bits(float32(f))
		neg = b>>31 != 0
		m, e := b&(1<<23-1), (b>>23)&0xff
		if e2 := int32(e) - 127 - 23; e2 >= -23 && e2 <= 0 && m&(1<<uint(-e2)-1) == 0 {
			mant, exp = uint64((1<<23|m)>>uint(-e2)), 0 // small integer
		} else {
			m32, e32 := f2d(m, e)
			mant, exp = uint64(m32), e32
		}
	} else {
		b := math.Float64bits(f)
		neg = b>>63 != 0
		m, e := b&(1<<52-1), uint32(b>>52)&0x7ff
		if e2 := int32(e) - 1023 - 52; e2 >= -52 && e2 <= 0 && m&(1<<uint(-e2)-1) == 0 {
			mant, exp = (1<<52|m)>>uint(-e2), 0 // small integer
		} else {
			mant, exp = d2d(m, e)
		}
	}
	var digits [20]byte
	n := len(digits)
	for x := mant; ; {
		n--
		digits[n] = byte('0' + x%10)
		x /= 10
		if x == 0 {
			break
		}
	}
	d := digits[n:]
	olength := int32(len(d))
	sciExp := exp + olength - 1
	if neg {
		dst = append(dst, '-')
	}
	if sciExp >= -4 && sciExp < maxFixed {
		nexp := exp + olength
		switch {
		case nexp <= 0:
			dst = append(dst, '0', '.')
			for i := nexp; i < 0; i++ {
				dst = append(dst, '0')
			}
			return append(dst, d...)
		case exp < 0:
			dst = append(dst, d[:nexp]...)
			dst = append(dst, '.')
			return append(dst, d[nexp:]...)
		default:
			dst = append(dst, d...)
			for i := int32(0); i < exp; i++ {
				dst = append(dst, '0')
			}
			return dst
		}
	}
	// Scientific notation: the small-integer path (exponent 0) may leave
	// trailing zeros in the mantissa; they move into the exponent.
	for exp == 0 && len(d) > 1 && d[len(d)-1] == '0' {
		d = d[:len(d)-1]
	}
	dst = append(dst, d[0])
	if len(d) > 1 {
		dst = append(dst, '.')
		dst = append(dst, d[1:]...)
	}
	dst = append(dst, 'e')
	if sciExp < 0 {
		dst = append(dst, '-')
		sciExp = -sciExp
	} else {
		dst = append(dst, '+')
	}
	return appendPadN(dst, int64(sciExp), 2)
}
