package guard

import "strings"

// Gemini session resumption across the guard: the handle the agent keeps is the
// server's, prefixed with the arbiter session's id, so that the connection that
// resumes with it (on any replica, after a restart of the guard) reports to the same
// session: the calls of the connection that ended come back as skips
// (connection_closed), their outcomes as notes. The server gets its own handle back.
//
//	arb~SESSION~HANDLE
//
// A session id holds no '~' ([A-Za-z0-9_.:-]); the server's handle is the rest.

const handlePrefix = "arb~"

func joinHandle(session, real string) string { return handlePrefix + session + "~" + real }

// splitHandle reads a handle the guard made; ok is false for any other (sent on as
// it is).
func splitHandle(h string) (session, real string, ok bool) {
	rest, found := strings.CutPrefix(h, handlePrefix)
	if !found {
		return "", "", false
	}
	session, real, ok = strings.Cut(rest, "~")
	if !ok || session == "" {
		return "", "", false
	}
	return session, real, true
}
