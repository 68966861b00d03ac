// Package fakeprovider is a stand-in for the realtime model servers an Arbiter agent
// talks to: it serves Gemini Live's BidiGenerateContent and OpenAI Realtime over
// WebSocket on one listener and plays a recorded session (a trace, docs/trace-format.md)
// to each connection at its recorded times, translated into that protocol, or refuses a
// trace its protocol cannot carry (Refusal). It records every message each client
// sends (and what it sent itself) as JSON lines, and Check compares such a record with
// the reference output of `arbiter replay` for the trace as each session's wire carried
// it: one function response per live call id, none for a dead one, each status note
// once, the same commits, judged by what the model ends up holding.
//
// The translation of each trace event, per protocol, is docs/fake-provider.md. The
// translators (gemini.go, openai.go) are pure: a trace event or a client message in,
// the server messages out; the session loop (session.go) owns the clock and the socket.
// What a protocol can carry of a trace, the rule for an OpenAI call cut off by barge-in
// and the trace as one session's wire carried it are wireview.go; what the model holds
// of what the agent sent is held.go; the checker's verdicts are check.go.
package fakeprovider
