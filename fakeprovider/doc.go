// Package fakeprovider is a stand-in for the realtime model servers an Arbiter agent
// talks to: it serves Gemini Live's BidiGenerateContent and OpenAI Realtime over
// WebSocket on one listener and plays a recorded session (a trace, docs/trace-format.md)
// to each connection at its recorded times, translated into that protocol. It records
// every message each client sends (and what it sent itself) as JSON lines, and Check
// compares such a record with the reference output of `arbiter replay` for the same
// trace: one function response per live call id, none for a dead one, each status note
// once, the same commits.
//
// The translation of each trace event, per protocol, is docs/fake-provider.md. The
// translators (gemini.go, openai.go) are pure: a trace event or a client message in,
// the server messages out; the session loop (session.go) owns the clock and the socket.
package fakeprovider
