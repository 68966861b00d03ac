// Package speech reads what is said in a voice session, with rules over words: no
// model, no clock, no state that changes an answer (Classify keeps the phrase lists
// it has normalised). It imports nothing of the project, so the engine (package
// arbiter) and any tool can use it alike.
//
//   - Read reads a user utterance's intent under one language's Phrases (phrases.go:
//     English, Spanish, French, German, Chinese, Japanese, Thai) in a Context: stop,
//     amend, go-ahead, unclear, other or unknown (intent.go). A reply is read against
//     the model's last question (reply.go), the model's echo and the request's own
//     words are not the user's intent (echo.go), and scripts written without spaces
//     are read letter by letter (script.go). Classify is Read with no context.
//   - ReadClaims and Verdict read what a model turn tells the user about a side
//     effect: done, not done, or no claim (claims.go states the rules; tokens.go,
//     clauses.go, rules.go and index.go implement them over the words of vocab.go),
//     with the verbs and nouns of one side effect, a Vocabulary (vocabulary.go:
//     Booking, or one VocabularyFor derives from a tool's policy);
//     TurnJoiner groups the model's output transcription into the turns they read
//     (turns.go).
//
// Everything here is pure, deterministic and safe for concurrent use, except a
// TurnJoiner, which is plain state owned by one session. Read, Classify, Words,
// ReadClaims and Verdict take time linear in the length of their input (and Read of
// its context's texts).
package speech
