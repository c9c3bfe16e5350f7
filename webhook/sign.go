package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// SignatureHeader carries a delivery's signature: "t=<unix seconds>,v1=<hex
// HMAC-SHA256>" (Sign). README's "Webhooks" section describes it for
// receivers.
const SignatureHeader = "Pidnode-Signature"

// DeliveryHeader carries the attempt's id: the endpoint id, '.', the
// attempt number. Receivers de-duplicate by the events' seq, not by it.
const DeliveryHeader = "Pidnode-Delivery"

// Sign returns the value of SignatureHeader for body sent at unix time t
// with secret: the HMAC-SHA256, keyed with the secret's bytes as shown to
// the SNAA (the whole "whsec_…" string), of the decimal t, a '.', and the
// raw body.
func Sign(secret string, t int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	ts := strconv.FormatInt(t, 10)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(m.Sum(nil))
}
