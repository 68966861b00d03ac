// Package guard is the wire guard: a WebSocket proxy between an agent (any framework,
// any language) and its realtime model server (Gemini Live, OpenAI Realtime) that
// enforces the arbiter's answer rules on the wire, with the same engine and store as
// the RPCs (arbiter serve --proxy-listen).
//
// The agent changes one base URL. The guard forwards everything both ways, in order
// (audio at once, never held or dropped), and:
//
//   - reports what the server says to the engine itself (voice activity,
//     transcriptions, interruptions, turns, function calls, cancellations,
//     connections), so the agent reports nothing by hand;
//   - registers each function call before the agent sees it: a call the arbiter
//     answers itself (a duplicate of a business key, a rejected call, a run's
//     prompt) is answered upstream by the guard and never reaches the agent's tools;
//   - lets exactly one function response per live call id go upstream, the
//     arbiter's: the agent's answer is replaced by it (the tool's result under
//     `result`), held while a side-effecting job still decides, dropped for a dead
//     id, an id already answered or an unknown one (each drop logged with why);
//   - answers a call the agent never answers (the seed's wedge) once its response is
//     due, at the latest at the call's max_pending, and its own "not executed" when
//     the arbiter cannot be reached (fail closed);
//   - sends the status notes as the protocol's user turn when the model is idle, or
//     riding on a NON_BLOCKING response (Gemini scheduling), each once, keeping what
//     it adds out of the agent's view where the framework mirrors the conversation.
//
// The per-message rule is Rule (rule.go, gemini.go, openai.go): a pure state machine
// of one connection, tested without sockets (rule_test.go, and the property test of
// property_test.go against the real engine). Proxy (proxy.go) carries it out on real
// connections: one goroutine per direction, the reports delivered in order, the
// session's effect log watched. Options.Metrics (metrics.go) sees what each connection
// did as it happens (arbiter serve: the arbiter_guard_* Prometheus series). Message by
// message: docs/wire-guard.md.
package guard
