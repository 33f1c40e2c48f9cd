package buyertoken

import "encoding/base64"

// SignRaw signs payload as is, so tests can make a genuine signature over a
// payload Sign would never write.
func SignRaw(secret []byte, payload string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(mac(secret, payload))
}
