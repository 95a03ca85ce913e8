package idempay_test

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/idempay/idempay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// isoEntry is one code of ISO 4217 list one: its minor-unit digits, or -1
// where the list says N.A.
type isoEntry struct {
	number string
	minor  int
}

// readTSV returns the fields of every line of a testdata file that is not a
// comment.
func readTSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			rows = append(rows, strings.Split(line, "\t"))
		}
	}
	require.NoError(t, sc.Err())
	return rows
}

func parseMinor(t *testing.T, s string) int {
	t.Helper()
	if s == "N.A." {
		return -1
	}
	n, err := strconv.Atoi(s)
	require.NoError(t, err, "minor units %q", s)
	return n
}

// activeList is the published 2024-06-25 list with the later amendments
// applied, up to and including upTo.
func activeList(t *testing.T, upTo int) map[string]isoEntry {
	list := map[string]isoEntry{}
	for _, r := range readTSV(t, "testdata/iso4217/list-one-2024-06-25.tsv") {
		list[r[0]] = isoEntry{number: r[1], minor: parseMinor(t, r[2])}
	}
	for _, r := range readTSV(t, "testdata/iso4217/amendments.tsv") {
		if n, err := strconv.Atoi(r[0]); err == nil && n > upTo {
			continue
		}
		switch r[2] {
		case "+":
			list[r[3]] = isoEntry{number: r[4], minor: parseMinor(t, r[5])}
		case "-":
			require.Contains(t, list, r[3], "amendment %s withdraws a code the list does not have", r[0])
			delete(list, r[3])
		default:
			t.Fatalf("amendments.tsv: unknown op %q", r[2])
		}
	}
	return list
}

// TestCurrencyExponentISO4217 checks CurrencyExponent against the whole of
// ISO 4217 list one: every active code answers its minor units, every code
// without them (N.A.) and every other three-letter code is refused.
func TestCurrencyExponentISO4217(t *testing.T) {
	list := activeList(t, idempay.ISO4217Amendment)
	for a := 'A'; a <= 'Z'; a++ {
		for b := 'A'; b <= 'Z'; b++ {
			for c := 'A'; c <= 'Z'; c++ {
				code := string([]rune{a, b, c})
				got, err := idempay.CurrencyExponent(code)
				e, listed := list[code]
				switch {
				case listed && e.minor >= 0:
					if assert.NoError(t, err, code) {
						assert.Equal(t, e.minor, got, "%s minor units", code)
					}
				default:
					var ve *idempay.ValidationError
					assert.True(t, errors.As(err, &ve), "%s is not an active currency with minor units, got %d, %v", code, got, err)
				}
			}
		}
	}
}

// TestISO4217AmendmentsReachThe2025List cross-checks the amendments file:
// applied up to amendment 179, they turn the 2024-06-25 list into the list
// published 2025-05-12.
func TestISO4217AmendmentsReachThe2025List(t *testing.T) {
	var want []string
	for _, r := range readTSV(t, "testdata/iso4217/codes-2025-05-12.txt") {
		want = append(want, strings.Fields(r[0])...)
	}
	var got []string
	for code := range activeList(t, 179) {
		got = append(got, code)
	}
	assert.ElementsMatch(t, want, got)
}

// TestCurrencyExponentNotCLDR pins the codes where CLDR's display digits,
// which the previous implementation used, differ from ISO 4217.
func TestCurrencyExponentNotCLDR(t *testing.T) {
	for code, want := range map[string]int{
		"IDR": 2, "MMK": 2, "LAK": 2, "COP": 2, "PKR": 2, "TZS": 2, "RSD": 2, "LBP": 2,
		"IRR": 2, "AFN": 2, "ALL": 2, "IQD": 3, "MRU": 2, "SLE": 2, "XCG": 2, "ZWG": 2,
		"jpy": 0, "Bhd": 3,
	} {
		got, err := idempay.CurrencyExponent(code)
		if assert.NoError(t, err, code) {
			assert.Equal(t, want, got, code)
		}
	}
	for _, code := range []string{"HRK", "BGN", "ANG", "SLL", "XAU", "XXX", "XTS", "US", "USDT", ""} {
		_, err := idempay.CurrencyExponent(code)
		assert.ErrorIs(t, err, idempay.ErrInvalidRequest, code)
	}
}
