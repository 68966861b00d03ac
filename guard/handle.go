package guard

import (
	"strings"

	"github.com/voicearbiter/arbiter/arbiter"
)

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
// it is), and for one whose session is not a session id the API accepts
// (arbiter.CheckName: 1-128 characters from [A-Za-z0-9_.:-]): the handle comes from
// the agent, which must not name a session it could not name by X-Arbiter-Session.
func splitHandle(h string) (session, real string, ok bool) {
	rest, found := strings.CutPrefix(h, handlePrefix)
	if !found {
		return "", "", false
	}
	session, real, ok = strings.Cut(rest, "~")
	if !ok || arbiter.CheckName("session_id", session) != nil {
		return "", "", false
	}
	return session, real, true
}
