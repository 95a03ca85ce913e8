package sim

import (
	"encoding/binary"
	"hash/fnv"
	"time"
)

// dice draws the simulator's faults. Each draw is a pure function of the
// seed and the draw's coordinates (a site name and the intent, call and
// attempt it is for), never the next number of a shared stream: a stream
// shared by goroutines would hand out its numbers in the order the
// scheduler ran them, and the same seed would give other faults.
type dice struct{ seed uint64 }

// u returns a number uniform in [0, 1) for the decision named by parts.
func (d dice) u(parts ...any) float64 {
	return float64(d.bits(parts...)>>11) / (1 << 53)
}

// chance reports whether an event of probability p happens at parts.
func (d dice) chance(p float64, parts ...any) bool { return p > 0 && d.u(parts...) < p }

// intn returns a number in [0, n) for parts.
func (d dice) intn(n int, parts ...any) int {
	if n <= 1 {
		return 0
	}
	return int(d.bits(parts...) % uint64(n))
}

// between returns a duration in [lo, hi) for parts.
func (d dice) between(lo, hi time.Duration, parts ...any) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(d.u(parts...)*float64(hi-lo))
}

// bits hashes the seed and parts with FNV-1a, then mixes the sum with
// SplitMix64's finaliser so that nearby inputs give unrelated outputs.
func (d dice) bits(parts ...any) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], d.seed)
	h.Write(b[:])
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			h.Write([]byte(v))
		case int:
			binary.LittleEndian.PutUint64(b[:], uint64(v))
			h.Write(b[:])
		case uint64:
			binary.LittleEndian.PutUint64(b[:], v)
			h.Write(b[:])
		default:
			panic("sim: dice part of unsupported type")
		}
		h.Write([]byte{0}) // so that ("ab","c") and ("a","bc") differ
	}
	return splitmix(h.Sum64())
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
