package filestore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/idempay/idempay"
	"github.com/idempay/idempay/keystore/filestore"
)

// The key reserved before a crash is found again by the next process.
func Example() {
	dir, err := os.MkdirTemp("", "filestore-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "idempay.db")
	ctx := context.Background()

	s, err := filestore.Open(path, filestore.WithRetention(3*24*time.Hour))
	if err != nil {
		log.Fatal(err)
	}
	res, err := s.Reserve(ctx, idempay.ReserveRequest{
		Namespace: "stripe:acct_1", ID: "order-42", Attempt: 1,
		Key: "0f8fad5b-d9cb-469f-a165-70867728950e", Fingerprint: "amount=1000&currency=jpy",
		Owner: "web-1/flight-1", Lease: time.Minute,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("created:", res.Created)
	s.Close() // the process stops before the charge is resolved

	s, err = filestore.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	open, err := s.ListOpen(ctx, "stripe:acct_1", idempay.Cursor{}, 100)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range open {
		fmt.Println("to resume:", r.ID, r.Key)
	}
	// Output:
	// created: true
	// to resume: order-42 0f8fad5b-d9cb-469f-a165-70867728950e
}
