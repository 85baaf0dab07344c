package catalog

import (
	"fmt"
	"strconv"
	"strings"
)

// ByteSize is a size in bytes, written with a unit: 64MiB, 512KiB, 1GB.
type ByteSize int64

// byteUnits are the units a size may have, longest first.
var byteUnits = []struct {
	name string
	mult int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
	{"B", 1},
}

const byteSizeExample = "write a number with a unit, such as 64MiB, 512KiB or 1GB"

// ParseByteSize reads a size with a unit (B, KB, MB, GB, KiB, MiB, GiB).
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	for _, u := range byteUnits {
		num, ok := strings.CutSuffix(t, u.name)
		if !ok {
			continue
		}
		num = strings.TrimSpace(num)
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n < 0 || n > (1<<62)/u.mult {
			return 0, fmt.Errorf("%q is not a size", s)
		}
		return ByteSize(n * u.mult), nil
	}
	return 0, fmt.Errorf("%q has no unit", s)
}
