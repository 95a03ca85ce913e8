package twoc2p_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/idempay/idempay/internal/fixtures"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// resultCodes reads 2C2P's Payment Maintenance result code table (the
// page's text: each row a two-digit code followed by its description).
func resultCodes(t *testing.T) map[string]string {
	t.Helper()
	row := regexp.MustCompile(`^(\d\d)(\S.*)$`)
	codes := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(fixtures.Upstream(t, "2c2p-docs_payment-maintenance-result-codes.txt")))
	for sc.Scan() {
		if m := row.FindStringSubmatch(strings.TrimSpace(sc.Text())); m != nil {
			codes[m[1]] = m[2]
		}
	}
	require.Greater(t, len(codes), 50)
	return codes
}

// 2C2P's table says 29 and 39 are states of the transaction ("already
// voided", "already settled"): a capture or cancel answered so is read as
// the lookup of the same transaction reads that status (V, S), never as a
// failure of the request.
func TestMaintenanceStateCodesReadAsTheirLookup(t *testing.T) {
	codes := resultCodes(t)
	require.Equal(t, "Transaction is already voided.", codes["29"])
	require.Equal(t, "Transaction is already settled.", codes["39"])
	p := opsProvider(&opsGatewayKey().PublicKey)
	rec := idempay.Record{Attempt: 1, Key: readKey}
	for code, status := range map[string]string{"29": "V", "39": "S"} {
		for _, typ := range []idempay.OpType{idempay.OpCapture, idempay.OpCancel} {
			process := map[idempay.OpType]string{idempay.OpCapture: "S", idempay.OpCancel: "V"}[typ]
			read := readWith(t, readOp(typ), 200, sealed(t, ours(process, "respCode", code)))
			srv := lookupServer(t, 200, sealed(t, answerXML("respCode", "00", "processType", "I", "invoiceNo", readIntent, "status", status)), nil)
			var found idempay.Verdict
			var err error
			if typ == idempay.OpCapture {
				found, err = p.FindOp(context.Background(), srv.Client(), readTarget(srv.URL), readOp(typ), rec)
			} else {
				found, err = p.FindOp(context.Background(), srv.Client(), readTarget(srv.URL), readOp(typ), rec)
			}
			require.NoError(t, err)
			assert.Equal(t, found.Kind, read.Kind, "%s answered %s (%s) vs the lookup's status %s", typ, code, codes[code], status)
			assert.Contains(t, []idempay.Kind{idempay.KindSucceeded, idempay.KindDeclined}, read.Kind)
		}
	}
}

// sampleElements lists the element names of 2C2P's refund request sample
// in their order (the sample is not well-formed XML as published, so its
// opening tags are read one by one).
func sampleElements(t *testing.T) ([]string, string) {
	t.Helper()
	b := fixtures.Upstream(t, "choonkeat-2c2p_refund-request-parameter.xml")
	var names []string
	for _, m := range regexp.MustCompile(`<([A-Za-z]+)[ >]`).FindAllSubmatch(b, -1) {
		if n := string(m[1]); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	version := regexp.MustCompile(`<version>([^<]*)</version>`).FindSubmatch(b)
	require.NotNil(t, version)
	return names, string(version[1])
}

// The refund request is 2C2P's as its parameter table and sample show it:
// version 4.3 (the table's "Current"), idempotencyID among the elements,
// every element the adapter sends one of the sample's, in the sample's
// order.
func TestMaintenanceRequestAsTheSampleShows(t *testing.T) {
	names, version := sampleElements(t)
	table := string(fixtures.Upstream(t, "choonkeat-2c2p_refund-request-parameter.csv"))
	require.Contains(t, table, "Current : 4.3")
	require.Contains(t, table, "idempotencyID,C 100,O,A repeated request with the same idempotencyID will return the same response")
	assert.Equal(t, "4.3", version)

	p := opsProvider(&opsGatewayKey().PublicKey)
	op := readOp(idempay.OpRefund)
	r, err := p.NewOpRequest(context.Background(), readTarget("https://pgw.test"), op, readKey)
	require.NoError(t, err)
	body, _ := io.ReadAll(r.Body)
	plain, err := twoc2ptest.Open(string(body), &opsMerchantKey().PublicKey, opsGatewayKey())
	require.NoError(t, err)
	var sent struct {
		Version string `xml:"version"`
	}
	require.NoError(t, xml.Unmarshal(plain, &sent))
	assert.Equal(t, version, sent.Version)

	last := -1
	dec := xml.NewDecoder(bytes.NewReader(plain))
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if se, ok := tok.(xml.StartElement); ok {
			i := slices.Index(names, se.Name.Local)
			require.GreaterOrEqual(t, i, 0, "element %s is not in 2C2P's sample", se.Name.Local)
			assert.Greater(t, i, last, "element %s out of the sample's order", se.Name.Local)
			last = i
		}
	}
	assert.Contains(t, string(plain), "<idempotencyID>"+readKey+"</idempotencyID>")
}
