package por

import "github.com/relayd/relayd/internal/kdf"

// HKDF-SHA256 (RFC 5869) with an empty salt and 32-byte outputs, through internal/kdf (over
// crypto/hmac, tested against crypto/hkdf).

// hkdfExtract is HKDF-Extract(salt empty, secret).
func hkdfExtract(secret *[32]byte) [32]byte { return kdf.Extract(secret[:]) }

// hkdfExpand1 is the first 32 bytes of HKDF-Expand(prk, info).
func hkdfExpand1(prk *[32]byte, info string) [32]byte { return kdf.NewExpander(prk).Next(info) }
