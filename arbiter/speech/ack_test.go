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
		// Scripts read letter by letter (issue 25).
		"好的，谢谢。": true,
		"知道了":    true,
		"好的，订吧。": false,
		"はい、ありがとうございます。":  true,
		"はい、予約してください。":    false,
		"โอเค ขอบคุณครับ": true,
		"โอเค จองเลย":     false,
	} {
		if got := IsAcknowledgement(text); got != want {
			t.Errorf("IsAcknowledgement(%q) = %v, want %v", text, got, want)
		}
	}
}
