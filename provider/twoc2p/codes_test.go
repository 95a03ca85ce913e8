package twoc2p_test

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/idempay/idempay/provider/twoc2p"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// responseCodes reads 2C2P's Payment Response Codes table (as converted by
// choonkeat/2c2p, which lost the leading zeros: "3" is 0003).
func responseCodes(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "upstream", "choonkeat-2c2p_response-code-payment.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	codes := map[string]string{}
	for _, r := range rows[1:] {
		n, err := strconv.Atoi(r[0])
		require.NoError(t, err, r[0])
		codes[fmt.Sprintf("%04d", n)] = r[1]
	}
	require.Greater(t, len(codes), 200)
	return codes
}

// notARefusal are words of the table's descriptions that say a payment was
// made, is under way, was settled or duplicated, or name no payment at all:
// none of those codes may end an intent as failed.
var notARefusal = []string{"success", "approved", "completed partially", "settle", "honor with", "in progress",
	"pending", "duplicate", "reserved", "refund", "chargeback", "tokenization", "cancel fail",
	"transaction not found", "record not exist", "transaction does not exist", "too late", "malfunction", "host down"}

// TestIsRefusalFollowsTheTable: the default decline list is an explicit
// list from 2C2P's table. It names only codes the table has, none whose
// description says money may have moved or is unrelated to a refusal, and
// it includes the inquiry codes 0003 (cancelled) and 0004 (soft-declined).
func TestIsRefusalFollowsTheTable(t *testing.T) {
	codes := responseCodes(t)
	for _, code := range []string{"4032", "4045", "4046", "4048", "4070", "4094", "4000", "4008", "4009", "4010",
		"4011", "4016", "4068", "4085", "4110", "4200", "0000", "0001", "2001", "2002", "9015"} {
		assert.False(t, twoc2p.IsRefusal(code), "%s %q is not a refusal", code, codes[code])
	}
	for _, code := range []string{"0003", "0004", "4005", "4051", "4054", "4059", "4081", "5010"} {
		assert.True(t, twoc2p.IsRefusal(code), "%s %q is a refusal", code, codes[code])
	}
	for n := range 10000 {
		code := fmt.Sprintf("%04d", n)
		if !twoc2p.IsRefusal(code) {
			continue
		}
		desc, listed := codes[code]
		if !assert.True(t, listed, "%s is a refusal but not in 2C2P's table", code) {
			continue
		}
		for _, w := range notARefusal {
			assert.NotContains(t, strings.ToLower(desc), w, "%s %q is in the refusal list", code, desc)
		}
	}
	for _, code := range []string{"", "40", "4005 ", "40x5", "04005"} {
		assert.False(t, twoc2p.IsRefusal(code), "%q", code)
	}
}
