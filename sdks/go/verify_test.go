package gable_test

// Unit tests of Verify, with signatures computed here.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/gable/gable-go"
)

const testSecret = "whsec_unit_test_secret"

var testBody = []byte(`{"id":"0b5f1c3e-5d2a-4c55-9a0e-6f1c2d3e4f50","object":"event","type":"lead.created",` +
	`"created_at":"2026-11-22T10:00:00Z","livemode":false,"api_version":"2026-11-22",` +
	`"related_object_id":"1c6a2d4f-6e3b-4d66-8b1f-7a2d3e4f5a61","property_id":null,` +
	`"data":{"object":{"id":"1c6a2d4f-6e3b-4d66-8b1f-7a2d3e4f5a61","object":"lead","name":"Lee"},"previous_attributes":{}}}`)

func sign(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.%s", ts, body)
	return hex.EncodeToString(mac.Sum(nil))
}

func signed(ts int64, signature string) http.Header {
	h := http.Header{}
	h.Set("Gable-Timestamp", strconv.FormatInt(ts, 10))
	h.Set("Gable-Signature", signature)
	return h
}

func refused(t *testing.T, why string, err error) {
	t.Helper()
	var sigErr *gable.SignatureVerificationError
	if !errors.As(err, &sigErr) {
		t.Errorf("%s: want a *gable.SignatureVerificationError, got %v", why, err)
	}
}

func TestVerifyAcceptsAnyMatchingV1Value(t *testing.T) {
	now := time.Now().Unix()
	header := signed(now, "v0=abc v1="+sign("whsec_old", now, testBody)+" v1="+sign(testSecret, now, testBody))
	event, err := gable.Verify(testBody, header, testSecret)
	if err != nil {
		t.Fatal(err)
	}
	if event.Type != "lead.created" || event.Data.Object["name"] != "Lee" || event.CreatedAt.Year() != 2026 {
		t.Fatalf("parsed event: %+v", event)
	}
	if string(event.Raw) != string(testBody) {
		t.Fatal("Raw is not the payload")
	}
}

func TestVerifyLooksHeadersUpCaseInsensitively(t *testing.T) {
	now := time.Now().Unix()
	// Built by hand, so not canonicalised: http.Header.Get would miss these.
	header := http.Header{
		"gable-timestamp": {strconv.FormatInt(now, 10)},
		"GABLE-SIGNATURE": {"v1=" + sign(testSecret, now, testBody)},
	}
	if _, err := gable.Verify(testBody, header, testSecret); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyRefusals(t *testing.T) {
	now := time.Now().Unix()
	good := "v1=" + sign(testSecret, now, testBody)
	tampered := append([]byte(nil), testBody...)
	tampered[len(tampered)-10] = 'X'
	cases := map[string]func() (gable.Event, error){
		"a tampered body":     func() (gable.Event, error) { return gable.Verify(tampered, signed(now, good), testSecret) },
		"a wrong secret":      func() (gable.Event, error) { return gable.Verify(testBody, signed(now, good), "whsec_wrong") },
		"only other versions": func() (gable.Event, error) { return gable.Verify(testBody, signed(now, "v0="+good[3:]), testSecret) },
		"no signature":        func() (gable.Event, error) { return gable.Verify(testBody, signed(now, ""), testSecret) },
		"no timestamp": func() (gable.Event, error) {
			h := signed(now, good)
			h.Del("Gable-Timestamp")
			return gable.Verify(testBody, h, testSecret)
		},
		"a timestamp other than the signed one": func() (gable.Event, error) {
			return gable.Verify(testBody, signed(now-1, good), testSecret)
		},
		"a stale timestamp": func() (gable.Event, error) {
			old := now - 301
			return gable.Verify(testBody, signed(old, "v1="+sign(testSecret, old, testBody)), testSecret)
		},
		"a timestamp from the future": func() (gable.Event, error) {
			return gable.Verify(testBody, signed(now, good), testSecret, gable.WithNow(time.Unix(now-301, 0)))
		},
		"beyond a tighter tolerance": func() (gable.Event, error) {
			return gable.Verify(testBody, signed(now, good), testSecret,
				gable.WithTolerance(10*time.Second), gable.WithNow(time.Unix(now+11, 0)))
		},
	}
	for why, verify := range cases {
		_, err := verify()
		refused(t, why, err)
	}
}

func TestVerifyToleranceIsConfigurable(t *testing.T) {
	old := time.Now().Unix() - 600
	header := signed(old, "v1="+sign(testSecret, old, testBody))
	if _, err := gable.Verify(testBody, header, testSecret, gable.WithTolerance(time.Hour)); err != nil {
		t.Fatalf("a 10 min old delivery within a 1 h tolerance: %v", err)
	}
	_, err := gable.Verify(testBody, header, testSecret)
	refused(t, "a 10 min old delivery with the default tolerance", err)
}
