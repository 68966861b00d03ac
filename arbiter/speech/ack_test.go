package speech

import "testing"

func TestIsAcknowledgement(t *testing.T) {
	for text, want := range map[string]bool{
		"Okay, thanks.":                 true,
		"OK.":                           true,
		"Alright, thank you very much.": true,
		"Great, thanks!":                true,
		"Got it.":                       true,
		"Vale, gracias.":                true,
		"D'accord, merci.":              true,
		"Gut, danke.":                   true,
		"":                              false,
		"...":                           false,
		"OK, book it after all.":        false,
		"Okay, do it.":                  false,
		"Yes please.":                   false,
		"Thanks, and book Friday too.":  false,
		"Okay, actually book it.":       false,
		"Sure, go ahead.":               false,
	} {
		if got := IsAcknowledgement(text); got != want {
			t.Errorf("IsAcknowledgement(%q) = %v, want %v", text, got, want)
		}
	}
}
