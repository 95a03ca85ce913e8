package twoc2p_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/idempaytest/twoc2ptest"
	"github.com/idempay/idempay/keystore/memstore"
	"github.com/idempay/idempay/provider/twoc2p"
	"github.com/stretchr/testify/require"
)

// RSA keys cost a second each on a small machine: one merchant key and one
// stand-in gateway key serve every test of the binary. The fake makes its
// own gateway key per server.
var (
	opsMerchantKey = sync.OnceValue(func() *rsa.PrivateKey { return mustRSA() })
	opsGatewayKey  = sync.OnceValue(func() *rsa.PrivateKey { return mustRSA() })
)

func mustRSA() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
}

// opsProvider is the test merchant's adapter with its maintenance keys:
// the merchant's, and gateway as 2C2P's public key.
func opsProvider(gateway *rsa.PublicKey) twoc2p.Provider {
	return twoc2p.Provider{MerchantID: tc2pMerchant,
		Maintenance: twoc2p.MaintenanceKeys{Merchant: opsMerchantKey(), Gateway: gateway}}
}

// opsServe starts a fake gateway that knows the test merchant's key, and
// returns it with an adapter holding the keys to speak to it.
func opsServe(t *testing.T, store idempay.KeyStore, opts ...twoc2ptest.Option) (*twoc2ptest.Server, twoc2p.Provider) {
	t.Helper()
	opts = append([]twoc2ptest.Option{twoc2ptest.WithMerchantKey(&opsMerchantKey().PublicKey)}, opts...)
	srv, _ := tc2pServe(t, tc2pFake{opts: opts}, store, nil)
	return srv, opsProvider(srv.GatewayKey())
}

// opsClient is a Client of p against srv.
func opsClient(t *testing.T, srv *twoc2ptest.Server, p twoc2p.Provider, store idempay.KeyStore) *idempay.Client {
	t.Helper()
	return tc2pClient(t, srv.URL, store, func(cfg *idempay.Config) { cfg.Provider = p })
}

// paid charges intent id (THB, amount in satang), has the customer pay,
// and charges it again so that Payment Inquiry settles it.
func paid(t *testing.T, c *idempay.Client, srv *twoc2ptest.Server, id string, amount int64) *idempay.Charge {
	t.Helper()
	req := idempay.ChargeRequest{IntentID: id, Amount: amount, Currency: "THB"}
	_, err := c.Charge(context.Background(), req)
	require.ErrorIs(t, err, idempay.ErrPending, id)
	inv, err := idempay.TwoC2PInvoiceNo(id, false)
	require.NoError(t, err)
	require.NoError(t, srv.Pay(inv))
	ch, err := c.Charge(context.Background(), req)
	if err != nil {
		require.ErrorIs(t, err, idempay.ErrAuthorized, id)
		return ch
	}
	require.Equal(t, idempay.StateSucceeded, ch.State)
	return ch
}

// byHand sends a maintenance request to srv as the merchant would from
// outside idempay (the dashboard, another system), and returns the
// answer's respCode.
func byHand(t *testing.T, srv *twoc2ptest.Server, processType, invoiceNo, amount string) string {
	t.Helper()
	return actionByHand(srv, processType, invoiceNo, amount)
}

// opKeys returns every key the store's record of operation id of type typ
// was sent under: the current attempt's and the earlier ones'.
func opKeys(t testing.TB, store idempay.KeyStore, typ idempay.OpType, id string) []string {
	rec, err := store.Load(context.Background(), tc2pNS+"/"+string(typ), id)
	if err != nil {
		return nil
	}
	keys := []string{rec.Key}
	for _, p := range rec.History {
		keys = append(keys, p.Key)
	}
	return keys
}

// madeUnder counts the operations the fake made under any key of the
// store's record of id.
func madeUnder(t testing.TB, srv *twoc2ptest.Server, store idempay.KeyStore, typ idempay.OpType, id string) int {
	n := 0
	for _, k := range opKeys(t, store, typ, id) {
		n += srv.Ledger().OpCount(k)
	}
	return n
}

// invoiceOf is the invoiceNo of attempt 1 of intent id.
func invoiceOf(t testing.TB, id string) string {
	inv, err := idempay.TwoC2PInvoiceNo(id, false)
	if err != nil {
		t.Fatalf("invoiceNo of %q: %v", id, err)
	}
	return inv
}

func newStore() idempay.KeyStore { return memstore.New() }

func sprintf(verb string, v any) string { return fmt.Sprintf(verb, v) }

// slogText is v logged by a text handler and a JSON handler.
func slogText(v any) string {
	var b bytes.Buffer
	slog.New(slog.NewTextHandler(&b, nil)).Info("provider", "p", v)
	slog.New(slog.NewJSONHandler(&b, nil)).Info("provider", "p", v)
	return b.String()
}

// pemForms writes the test merchant's private key and the stand-in
// gateway's public key in every PEM form ParseMaintenanceKeys reads.
func pemForms(t *testing.T) (privPKCS1, privPKCS8, pubPKIX, pubPKCS1, cert []byte) {
	t.Helper()
	enc := func(typ string, b []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}) }
	privPKCS1 = enc("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(opsMerchantKey()))
	p8, err := x509.MarshalPKCS8PrivateKey(opsMerchantKey())
	require.NoError(t, err)
	privPKCS8 = enc("PRIVATE KEY", p8)
	pkixDER, err := x509.MarshalPKIXPublicKey(&opsGatewayKey().PublicKey)
	require.NoError(t, err)
	pubPKIX = enc("PUBLIC KEY", pkixDER)
	pubPKCS1 = enc("RSA PUBLIC KEY", x509.MarshalPKCS1PublicKey(&opsGatewayKey().PublicKey))
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "2C2P test"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<31, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &opsGatewayKey().PublicKey, opsGatewayKey())
	require.NoError(t, err)
	cert = enc("CERTIFICATE", der)
	return
}
