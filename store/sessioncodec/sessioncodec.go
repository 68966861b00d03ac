// Package sessioncodec encodes a session (arbiter.Session) as the record a store
// keeps.
package sessioncodec

import "github.com/voicearbiter/arbiter/arbiter"

// Encode encodes s for a store. The Version field is not part of the record (the
// store keeps it beside it). Safe for concurrent use on different sessions.
func Encode(s *arbiter.Session) ([]byte, error) { return arbiter.EncodeSession(s) }

// Decode decodes what Encode wrote. Errors: Internal for a malformed record. The
// session returned is the caller's; it does not alias b.
func Decode(b []byte) (*arbiter.Session, error) { return arbiter.DecodeSession(b) }
