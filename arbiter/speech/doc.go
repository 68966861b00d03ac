// Package speech reads what is said in a voice session, with rules over words: no
// model, no clock, no state that changes an answer (Classify keeps the phrase lists
// it has normalised). It imports nothing of the project, so the engine (package
// arbiter) and any tool can use it alike.
//
//   - Classify reads a user utterance's intent under one language's Phrases: stop,
//     amend, other or unknown (intent.go).
//   - ReadClaims and Verdict read what a model turn tells the user about a side
//     effect: done, not done, or no claim (claims.go states the rules; tokens.go,
//     clauses.go, rules.go and index.go implement them over the words of vocab.go),
//     with the verbs and nouns of one side effect, a Vocabulary (vocabulary.go:
//     Booking, or one VocabularyFor derives from a tool's policy);
//     TurnJoiner groups the model's output transcription into the turns they read
//     (turns.go).
//
// Everything here is pure, deterministic and safe for concurrent use, except a
// TurnJoiner, which is plain state owned by one session. Classify, Words, ReadClaims
// and Verdict take time linear in the length of their input.
package speech
