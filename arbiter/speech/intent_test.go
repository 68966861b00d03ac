package speech

import "testing"

func TestClassify(t *testing.T) {
	cases := []struct {
		lang, text string
		want       Intent
	}{
		// English stops, including the recorded sessions' words.
		{"en", "Actually, stop. Don't book it.", IntentStop},
		{"en", "Stop", IntentStop},
		{"en", "Don’t!", IntentStop},
		{"en", "dont do that", IntentStop},
		{"en", "Never mind.", IntentStop},
		{"en", "Cancel it.", IntentStop},
		{"en", "Wait.", IntentStop},
		{"en", "Hold on a second", IntentStop},
		{"en", "Book tomorrow 3pm. No wait, stop.", IntentStop},
		{"en", "Make it 4pm. No, stop, forget it.", IntentStop},
		// English amendments: the four and a few more.
		{"en", "Wait, make it 4pm.", IntentAmend},
		{"en", "Actually, Lyon.", IntentAmend},
		{"en", "Change it to Friday.", IntentAmend},
		{"en", "No, the five o'clock one.", IntentAmend},
		{"en", "Cancel that and book 4pm instead.", IntentAmend},
		{"en", "How about Saturday?", IntentAmend},
		{"en", "Hold on, switch to the window seat.", IntentAmend},
		// Neither.
		{"en", "What's the weather like there?", IntentOther},
		{"en", "Actually, what's the weather like there?", IntentOther},
		{"en", "Thanks!", IntentOther},
		{"en", "Make it", IntentOther}, // a marker without new details
		{"en", "Book me the 3:00 p.m. slot tomorrow, please.", IntentOther},
		{"en", "...", IntentUnknown},
		// Spanish, French, German.
		{"es", "¡Detente! No lo hagas.", IntentStop},
		{"es", "Espera.", IntentStop},
		{"es", "Espera, mejor a las cuatro.", IntentAmend},
		{"es", "Cámbialo a viernes.", IntentAmend},
		{"es", "Reserva para mañana a las tres.", IntentOther},
		{"fr", "Arrête, ne le fais pas.", IntentStop},
		{"fr", "Attends, plutôt à seize heures.", IntentAmend},
		{"fr", "En fait, Lyon.", IntentAmend},
		{"fr", "Quel temps fait-il ?", IntentOther},
		{"de", "Stopp, nicht buchen!", IntentStop},
		{"de", "Warte, lieber um 16 Uhr.", IntentAmend},
		{"de", "Hör auf.", IntentStop},
		{"de", "Wie ist das Wetter?", IntentOther},
	}
	for _, tc := range cases {
		t.Run(tc.lang+"/"+tc.text, func(t *testing.T) {
			if got, phrase := Classify(tc.text, DefaultPhrases[tc.lang]); got != tc.want {
				t.Errorf("Classify(%q) = %s (%q), want %s", tc.text, got, phrase, tc.want)
			}
		})
	}
}

func TestWordsNormalisation(t *testing.T) {
	decomposed := "arre\u0302te" // "arrête" with a combining circumflex
	if w := Words(decomposed); len(w) != 1 || w[0] != "arrête" {
		t.Fatalf("Words(%q) = %q, want NFC %q", decomposed, w, "arrête")
	}
	if got, _ := Classify(decomposed, DefaultPhrases["fr"]); got != IntentStop {
		t.Fatalf("decomposed arrête: %s, want stop", got)
	}
	if w := Words("HÖR AUF"); w[0] != "hör" {
		t.Fatalf("case folding: %q", w)
	}
	if w := Words("Don’t"); len(w) != 1 || w[0] != "dont" {
		t.Fatalf("apostrophes: %q", w)
	}
}

func TestStopIntent(t *testing.T) {
	cases := []struct {
		text string
		stop bool
	}{
		{"Actually, stop. Don't book it.", true},
		{"Book 3pm tomorrow. No wait, stop.", true},
		{"dont do it", true},
		{"Don’t book it", true},
		{"Never mind.", true},
		{"CANCEL that", true},
		{"What's the weather like there?", false},
		{"OK, book it after all", false},
		{"Sounds good.", false},
		{"unstoppable", false}, // word boundaries
		{"the waiter", false},
	}
	en := DefaultPhrases["en"]
	for _, tc := range cases {
		if got, phrase := Classify(tc.text, en); (got == IntentStop) != tc.stop {
			t.Errorf("Classify(%q) = %s (%q), want stop %v", tc.text, got, phrase, tc.stop)
		}
	}
}

// TestClassifyVocabularyRound2 (issue 13 follow-up): stops, amends and false stops a
// fresh user found.
func TestClassifyVocabularyRound2(t *testing.T) {
	cases := []struct {
		text string
		want Intent
	}{
		// Stops. (Round 2 had "No no no", "Nope" stop too; issue 25 reads a reply of
		// refusals against the model's question: TestReadReplies.)
		{"I changed my mind", IntentStop},
		{"I've changed my mind.", IntentStop},
		{"Hold off on that", IntentStop},
		{"Forget about it", IntentStop},
		{"Forget it", IntentStop},
		{"Change of plans.", IntentStop}, // the new plans not said yet: fail closed
		// Amends: not stops, and not other (which would let the old request commit).
		{"Sorry, I meant 4pm", IntentAmend},
		{"Not Friday, Saturday", IntentAmend},
		{"Not Friday, Saturday.", IntentAmend},
		{"No, not Friday, Saturday", IntentAmend},
		{"Change of plans, 4pm", IntentAmend},
		{"I changed my mind, make it 4pm", IntentAmend},
		{"Nope, make it Saturday", IntentAmend},
		{"No, no, the five o'clock one", IntentAmend},
		// False stops: a stop phrase's words that do not ask to stop.
		{"Don't stop, book it.", IntentOther},
		// A fresh user's false stops (NotStop): the words of a stop phrase, no stop.
		{"Don't worry about it.", IntentOther},
		{"I don't mind, book it.", IntentOther},
		{"I can't wait!", IntentOther},
		{"The bus stop is right there.", IntentOther},
		{"Don't worry, stop it.", IntentStop},
		{"Do not worry, just cancel it.", IntentStop},
		{"Yes please, don't forget the window seat.", IntentGoAhead},
		{"Don't forget it", IntentOther},
		{"Do not wait, just book it", IntentOther},
		{"Don't cancel, I still want it", IntentOther},
		// ...while punctuation between them, or a later stop, still stops.
		{"Don't! Stop!", IntentStop},
		{"Don't. Stop.", IntentStop},
		{"Don't stop... no, actually, stop.", IntentStop},
		{"Don't forget the window seat. Actually, cancel it.", IntentStop},
		{"Don't forget. Don't book it.", IntentStop},
		// A stop phrase is not read across a sentence end: "do. Not" is no "do not"
		// (TestClassifyRound3Properties found it); within a sentence it still stops.
		{"I do. Not yet.", IntentUnclear},
		{"I do, not now, do not book it.", IntentStop},
		{"Please do not book it.", IntentStop},
		// Not corrections.
		{"I'm not sure, maybe", IntentUnclear}, // a hedge (issue 25)
		{"Not Friday", IntentOther},            // no new details after a comma
		{"Friday, not Saturday", IntentOther},  // nothing after the corrected clause
		{"Is it not Friday, then?", IntentOther},
	}
	en := DefaultPhrases["en"]
	for _, c := range cases {
		if got, phrase := Classify(c.text, en); got != c.want {
			t.Errorf("Classify(%q) = %s (%q), want %s", c.text, got, phrase, c.want)
		}
	}
}

// round3Stops are the English stops a fresh user found committing a pending booking
// (issue 13 follow-ups, round 2): each stops alone, and after any other sentence
// (TestClassifyRound3Properties). round3Refusals were round 2's stops too; issue 25
// reads them as replies: alone, unclear with nothing asked (TestReadReplies reads them
// against a question), and still a stop after other words of the user's ("Book 4pm.
// No."). round3SoftStops stop alone, but an amendment elsewhere in the utterance wins
// over them.
var (
	round3Stops     = []string{"Skip it.", "Drop it.", "Call it off.", "Let's not.", "Undo that.", "I said no."}
	round3Refusals  = []string{"No!", "No.", "Not yet.", "Nah.", "No thank you.", "No thanks.", "Not now.", "Not now, thanks", "No, thanks.", "No, no.", "No?", "No no no", "No, no, no!", "Nope", "Nope."}
	round3SoftStops = []string{"Hold it.", "Hold up.", "Pause.", "No, wait."}
	// round3Others hold a bare word or a stop's words without refusing.
	round3Others = []string{"No problem", "No problem.", "No worries!", "Not bad.", "Not bad at all", "No worries, book it.",
		"There's no rush.", "No way that's the price?", "Not really a problem", "I have no idea", "Now is fine"}
)

// TestClassifyRound3 (issue 13 follow-ups, round 2): bare refusals and the other
// stops that committed, amends that committed the old slot, and look-alikes that stay
// other.
func TestClassifyRound3(t *testing.T) {
	type tc struct {
		lang, text string
		want       Intent
	}
	var cases []tc
	for _, s := range round3Stops {
		cases = append(cases, tc{"en", s, IntentStop})
	}
	for _, s := range round3Refusals {
		cases = append(cases, tc{"en", s, IntentUnclear})
	}
	for _, s := range round3SoftStops {
		cases = append(cases, tc{"en", s, IntentStop})
	}
	for _, s := range round3Others {
		cases = append(cases, tc{"en", s, IntentOther})
	}
	cases = append(cases,
		tc{"en", "Yes, now.", IntentGoAhead},
		tc{"en", "Let me think about it first.", IntentUnclear}, // a hedge: round 2's soft stop
		tc{"en", "No, not now.", IntentUnclear},
		// A bare "no" that a comma and new details follow corrects; a later stop wins.
		tc{"en", "No, Saturday.", IntentAmend},
		tc{"en", "No, no, Saturday.", IntentAmend},
		tc{"en", "No, Saturday. No!", IntentStop},
		tc{"en", "No, stop.", IntentStop},
		tc{"en", "Hold up, make it 4pm.", IntentAmend},
		tc{"en", "Make it 4pm, no, 5pm.", IntentAmend},
		tc{"en", "Book 4pm. No.", IntentStop},
	)
	for _, c := range cases {
		t.Run(c.lang+"/"+c.text, func(t *testing.T) {
			if got, phrase := Classify(c.text, DefaultPhrases[c.lang]); got != c.want {
				t.Errorf("Classify(%q) = %s (%q), want %s", c.text, got, phrase, c.want)
			}
		})
	}
}

// round3Languages are the Spanish, French and German stops of issue 13's follow-ups,
// round 2: the English loanword "stop" in Spanish and "changed my mind"; each stops
// alone and after any statement (TestClassifyRound3Properties). round3LanguageRefusals
// were round 2's stops too: replies, like round3Refusals.
var (
	round3Languages = map[string][]string{
		"es": {"Stop.", "stop", "Para, no lo reserves.", "Para.", "Cambié de opinión", "Cambie de opinion.", "He cambiado de opinión"},
		"fr": {"J'ai changé d'avis", "J’ai changé d’avis."},
		"de": {"Ich habe es mir anders überlegt", "Hab's mir anders überlegt."},
	}
	round3LanguageRefusals = map[string][]string{
		"es": {"No no no.", "No.", "¡No!", "Ahora no.", "Todavía no."},
		"fr": {"Non non non.", "Non.", "Non, non.", "Pas maintenant.", "Pas encore."},
		"de": {"Nein nein nein.", "Nein.", "Nein!", "Nicht jetzt.", "Noch nicht."},
	}
)

// round3LanguageOthers hold a bare word or a stop's words without refusing.
var round3LanguageOthers = map[string][]string{
	"es": {"Para mañana a las tres, por favor.", "No sé, ¿qué hora es?", "No hay problema.", "Reserva para dos."},
	"fr": {"Non merci pour l'info, c'est parfait", "Il n'y a pas de problème.", "Non loin d'ici."},
	"de": {"Nein danke für die Info, das passt", "Kein Problem.", "Das ist nicht schlecht."},
}

func TestClassifyRound3Languages(t *testing.T) {
	for lang, ss := range round3Languages {
		for _, s := range ss {
			if got, phrase := Classify(s, DefaultPhrases[lang]); got != IntentStop {
				t.Errorf("%s: Classify(%q) = %s (%q), want stop", lang, s, got, phrase)
			}
		}
	}
	for lang, ss := range round3LanguageRefusals {
		for _, s := range ss {
			if got, phrase := Classify(s, DefaultPhrases[lang]); got != IntentUnclear {
				t.Errorf("%s: Classify(%q) = %s (%q), want unclear", lang, s, got, phrase)
			}
		}
	}
	for lang, ss := range round3LanguageOthers {
		for _, s := range ss {
			if got, phrase := Classify(s, DefaultPhrases[lang]); got != IntentOther {
				t.Errorf("%s: Classify(%q) = %s (%q), want other", lang, s, got, phrase)
			}
		}
	}
	// A bare word that a comma and new details follow corrects.
	for lang, s := range map[string]string{"es": "No, a las cuatro.", "fr": "Non, samedi.", "de": "Nein, Samstag."} {
		if got, phrase := Classify(s, DefaultPhrases[lang]); got != IntentAmend {
			t.Errorf("%s: Classify(%q) = %s (%q), want amend", lang, s, got, phrase)
		}
	}
}

// TestClassifyRound3Corrections (issue 13 follow-ups, round 2): corrections that read
// as other committed the old slot; each amends.
func TestClassifyRound3Corrections(t *testing.T) {
	for _, c := range []struct{ lang, text string }{
		{"en", "No, Saturday."},
		{"en", "No, Saturday at 4pm please."},
		{"en", "Make that Saturday."},
		{"en", "Sorry, make that Saturday."},
		{"fr", "Pas vendredi, samedi."},
		{"fr", "Non, pas vendredi, samedi."},
		{"fr", "Pardon, je voulais dire à 16h."},
		{"de", "Nicht Freitag, Samstag."},
		{"de", "Nein, nicht Freitag, Samstag."},
		{"de", "Entschuldigung, ich meinte um 16 Uhr."},
		{"es", "Perdón, quise decir a las 4."},
		{"es", "Perdon, quise decir a las 4."},
	} {
		if got, phrase := Classify(c.text, DefaultPhrases[c.lang]); got != IntentAmend {
			t.Errorf("%s: Classify(%q) = %s (%q), want amend", c.lang, c.text, got, phrase)
		}
	}
	// Not corrections: a marker alone, or a negation with nothing after its comma.
	for _, c := range []struct{ lang, text string }{
		{"en", "Make that"},
		{"fr", "Pas vendredi"},
		{"fr", "Ce n'est pas grave."},
		{"de", "Nicht Freitag"},
		{"de", "Das ist nicht schlimm."},
		{"es", "Quise decir"},
	} {
		if got, phrase := Classify(c.text, DefaultPhrases[c.lang]); got != IntentOther {
			t.Errorf("%s: Classify(%q) = %s (%q), want other", c.lang, c.text, got, phrase)
		}
	}
	// A stop said after the correction still wins; "nicht buchen" is a stop.
	for _, c := range []struct{ lang, text string }{
		{"de", "Nicht buchen, bitte."},
		{"fr", "Pas vendredi, samedi. Non, arrête."},
		{"en", "Make that Saturday. No, cancel it."},
	} {
		if got, phrase := Classify(c.text, DefaultPhrases[c.lang]); got != IntentStop {
			t.Errorf("%s: Classify(%q) = %s (%q), want stop", c.lang, c.text, got, phrase)
		}
	}
}
