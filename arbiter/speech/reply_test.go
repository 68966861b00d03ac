package speech

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestReadReplies (issue 25, pattern 1): a reply is read against the model's last
// question. A refusal answers it: a stop when it asked about the pending action, a
// go-ahead when it asked about something else or whether to cancel; a yes to whether
// to cancel stops; what nothing settles is unclear.
func TestReadReplies(t *testing.T) {
	for _, c := range []struct {
		lang, said, text string
		want             Intent
	}{
		// Nothing asked: the words alone cannot say.
		{"en", "", "No.", IntentUnclear},
		{"en", "", "No, thanks.", IntentUnclear},
		{"en", "", "Nope, I'm good.", IntentUnclear},
		{"en", "", "I'm not sure.", IntentUnclear},
		{"en", "", "I don't know, maybe not.", IntentUnclear},
		{"en", "", "Yes.", IntentGoAhead},
		{"en", "", "That's all, thanks.", IntentOther},
		{"en", "Have a nice day!", "No.", IntentUnclear}, // a statement about nothing
		// Something else was asked: a refusal says nothing more is wanted.
		{"en", "Booking that now. Anything else?", "No.", IntentGoAhead},
		{"en", "Anything else?", "No, that's all.", IntentGoAhead},
		{"en", "Anything else?", "No, thanks.", IntentGoAhead},
		{"en", "Is there anything else I can help you with?", "Nope, I'm good.", IntentGoAhead},
		{"en", "Anything else?", "I don't think so.", IntentGoAhead},
		{"en", "Anything else?", "Not right now, thanks.", IntentGoAhead},
		{"en", "Anything else?", "That's all.", IntentGoAhead},
		{"en", "Anything else?", "Hmm, not sure.", IntentOther},
		{"en", "Anything else?", "No!", IntentUnclear},         // emphatic: may be a stop
		{"en", "Anything else?", "No, no, no.", IntentUnclear}, // emphatic
		// The pending action was asked about (its tool's words, or the language's cues).
		{"en", "It's 40 euros. Shall I book it?", "No.", IntentStop},
		{"en", "Shall I go ahead?", "No thanks.", IntentStop},
		{"en", "I'm booking tomorrow at 3pm for you now.", "No!", IntentStop},
		{"en", "Shall I book it?", "Not yet.", IntentStop},
		{"en", "Shall I book it?", "Hmm, I'm not sure.", IntentUnclear},
		{"en", "Shall I book it?", "Yes, please.", IntentGoAhead},
		{"en", "Shall I book it?", "That's all.", IntentUnclear},
		// Whether to cancel it was asked: a refusal keeps it, a yes stops.
		{"en", "Do you want me to cancel the booking?", "No.", IntentGoAhead},
		{"en", "Should I cancel it?", "No, no.", IntentGoAhead},
		{"en", "Should I cancel it for you?", "Yes, please.", IntentStop},
		// Both else and the action: ambiguous.
		{"en", "Shall I book it, or is there anything else?", "No.", IntentUnclear},
		// The last question counts, not an earlier one; "3 p.m." does not end it.
		{"en", "Shall I book it? Great. Anything else?", "No.", IntentGoAhead},
		{"en", "Anything else? Shall I book it for 3 p.m. tomorrow?", "No.", IntentStop},
		// A refusal after the user's own words is a stop, whatever was asked.
		{"en", "Anything else?", "Book 4pm. No.", IntentStop},
		// A clear stop is a stop whatever was asked.
		{"en", "Anything else?", "Wait, cancel the booking.", IntentStop},
		{"en", "Do you want me to cancel the booking?", "Stop, don't book it.", IntentStop},
		// A refusal that moves on to a question answers the model's question.
		{"en", "Anything else?", "No. What's the weather like there?", IntentGoAhead},
		// Not corrections: the words after the comma are a reply, or a question.
		{"en", "", "No, what time is it?", IntentUnclear},
		{"en", "", "Not sure, what do you think?", IntentOther},
		// Other languages.
		{"es", "¿Algo más?", "No, gracias.", IntentGoAhead},
		{"es", "¿Confirmo la reserva?", "No.", IntentStop},
		{"es", "¿Quiere que cancele la reserva?", "Sí.", IntentStop},
		{"fr", "Vous désirez autre chose ?", "Non, c'est tout.", IntentGoAhead},
		{"fr", "Voulez-vous que j'annule la réservation ?", "Oui.", IntentStop},
		{"de", "Kann ich sonst noch etwas für Sie tun?", "Nein, das ist alles.", IntentGoAhead},
		{"de", "Soll ich das so buchen?", "Nein.", IntentStop},
		{"zh", "还有别的需要吗？", "没有了，谢谢。", IntentGoAhead},
		{"zh", "要我取消预订吗？", "是的。", IntentStop},
		{"ja", "他に何かございますか？", "いいえ、大丈夫です。", IntentGoAhead},
		{"ja", "予約をキャンセルしますか？", "はい。", IntentStop},
		{"th", "มีอะไรให้ช่วยอีกไหมครับ", "ไม่มีแล้ว ขอบคุณครับ", IntentGoAhead},
	} {
		r := Read(c.text, DefaultPhrases[c.lang], Context{Said: c.said, Action: Booking})
		if r.Intent != c.want {
			t.Errorf("%s: Read(%q) after %q = %s (%q), want %s", c.lang, c.text, c.said, r.Intent, r.Phrase, c.want)
		}
		checkReading(t, c.text, DefaultPhrases[c.lang], r.Intent, r.Phrase)
	}
	// The arbiter's own question about the action (Asked) is the target whatever the
	// model said last.
	for text, want := range map[string]Intent{"No.": IntentStop, "Yes.": IntentGoAhead, "I'm not sure.": IntentUnclear,
		"What time is it?": IntentOther} {
		if r := Read(text, DefaultPhrases["en"], Context{Said: "Anything else?", Asked: true}); r.Intent != want {
			t.Errorf("asked: Read(%q) = %s, want %s", text, r.Intent, want)
		}
	}
}

// TestClassifyScripts (issue 25, pattern 3): stop, amend and go-ahead phrases are found
// inside text written without spaces, with built-in phrases for Chinese, Japanese and
// Thai, and the English "stop" in every language; the words of other meaning that hold a
// stop phrase (NotStop) are none.
func TestClassifyScripts(t *testing.T) {
	for _, c := range []struct {
		lang, text string
		want       Intent
	}{
		{"zh", "停下，不要订了。", IntentStop},
		{"zh", "请停下吧", IntentStop},
		{"zh", "取消吧。", IntentStop},
		{"zh", "算了，不订了。", IntentStop},
		{"zh", "等一下，先别订。", IntentStop},
		{"zh", "我改主意了。", IntentStop},
		{"zh", "请stop吧", IntentStop},
		{"zh", "等一下，改成四点。", IntentAmend},
		{"zh", "我想问一下取消政策是什么？", IntentOther},
		{"zh", "不要停，继续订。", IntentOther},
		{"zh", "我要停车位。", IntentOther},
		{"zh", "不错。", IntentOther},
		{"zh", "好的，谢谢。", IntentGoAhead},
		{"zh", "不。", IntentUnclear},
		{"ja", "やめてください、予約しないで。", IntentStop},
		{"ja", "キャンセルしてください。", IntentStop},
		{"ja", "ちょっと待って。", IntentStop},
		{"ja", "ストップ！", IntentStop},
		{"ja", "ｽﾄｯﾌﾟ！", IntentStop}, // half-width katakana: NFKC
		{"ja", "stopして", IntentStop},
		{"ja", "四時に変更してください。", IntentAmend},
		{"ja", "キャンセル料はかかりますか？", IntentOther},
		{"ja", "心配しないで。", IntentOther},
		{"ja", "はい、お願いします。", IntentGoAhead},
		{"ja", "いいえ。", IntentUnclear},
		{"th", "หยุดก่อน ไม่ต้องจอง", IntentStop},
		{"th", "ยกเลิกการจองด้วย", IntentStop},
		{"th", "stop ครับ", IntentStop},
		{"th", "ฉันอยากจองวันหยุดยาว", IntentOther},
		{"th", "ได้เลย ขอบคุณครับ", IntentGoAhead},
		{"th", "ไม่ครับ", IntentUnclear},
		// English "stop" in the other built-in languages, inside words of their scripts.
		{"es", "stop", IntentStop},
		{"de", "Stop!", IntentStop},
	} {
		if got, phrase := Classify(c.text, DefaultPhrases[c.lang]); got != c.want {
			t.Errorf("%s: Classify(%q) = %s (%q), want %s; words %q", c.lang, c.text, got, phrase, c.want, Words(c.text))
		}
	}
	for lang, p := range DefaultPhrases {
		if !strings.Contains(strings.Join(p.Stop, "\x00")+"\x00", "stop\x00") {
			t.Errorf("DefaultPhrases[%s].Stop has no English \"stop\"", lang)
		}
	}
}

// TestWordsScripts: each letter of an unspaced script is a word, with its combining
// marks; other scripts keep their words whole beside them; a space between two Thai
// letters ends a clause.
func TestWordsScripts(t *testing.T) {
	for text, want := range map[string]string{
		"请stop吧":        "请 stop 吧",
		"停下，不要订了。":      "停 下 不 要 订 了",
		"キャンセルして":       "キ ャ ン セ ル し て",
		"ストップ":          "ス ト ッ プ",
		"หยุดก่อน":      "ห ยุ ด ก่ อ น",
		"Don't STOP 停下": "dont stop 停 下",
		"नमस्ते दुनिया": "नमस्ते दुनिया", // spacing marks stay in their word
	} {
		if got := strings.Join(Words(text), " "); got != want {
			t.Errorf("Words(%q) = %q, want %q", text, got, want)
		}
	}
	s := Normalize("ไม่ ขอบคุณ")
	if b := wordBreaks(s, len(Words(s))); b[2] != ',' {
		t.Errorf("wordBreaks(%q) = %q: a space between Thai words should end a clause", s, b)
	}
}

// TestReadEcho (issue 25, pattern 2): words that repeat three or more of the model's
// recent words in a row are its echo: dropped; all echo is unknown, with every word
// counted; the user's own words beside them are read; a short repeat may be either, so
// a stop it makes is unclear.
func TestReadEcho(t *testing.T) {
	said := "Please hold on while I book that for you. Wait a moment, I'm checking."
	for _, c := range []struct {
		text         string
		want         Intent
		echoed, word int
	}{
		{"hold on while I book that for you", IntentUnknown, 8, 8},
		{"Wait a moment, I'm checking", IntentUnknown, 5, 5},
		{"hold on while I book that for you. No, stop, don't book it!", IntentStop, 8, 13},
		{"Stop, cancel the booking.", IntentStop, 0, 4},
		{"Hold on.", IntentUnclear, 0, 2}, // two words the model said: maybe echo
		{"Stop!", IntentStop, 0, 1},       // the model did not say it
	} {
		r := Read(c.text, DefaultPhrases["en"], Context{Echo: said})
		if r.Intent != c.want || r.Echoed != c.echoed || r.Words != c.word {
			t.Errorf("Read(%q) with echo = %s, %d of %d words echoed; want %s, %d of %d", c.text, r.Intent, r.Echoed, r.Words, c.want, c.echoed, c.word)
		}
		if r.Echo() != (c.echoed == c.word) {
			t.Errorf("Read(%q).Echo() = %v", c.text, r.Echo())
		}
	}
	// The same words with no echo possible are the user's.
	if r := Read("hold on while I book that for you", DefaultPhrases["en"], Context{Said: said}); r.Intent != IntentStop {
		t.Errorf("with no echo: %s, want stop", r.Intent)
	}
	// Chinese echo, letter by letter.
	if r := Read("请稍等我正在为您预订", DefaultPhrases["zh"], Context{Echo: "请稍等，我正在为您预订明天下午三点。"}); !r.Echo() {
		t.Errorf("Chinese echo: %+v", r)
	}
}

// TestReadCarried (issue 25, pattern 4): the request's own words are not intent about
// it; a stop said beside them still stops.
func TestReadCarried(t *testing.T) {
	for _, c := range []struct {
		text    string
		carried []string
		want    Intent
	}{
		{"Two tickets for Stop Making Sense on Friday.", []string{"Stop Making Sense"}, IntentOther},
		{"Two tickets for Stop Making Sense on Friday.", nil, IntentStop},
		{"Book a table at the Never Mind Bar.", []string{"Never Mind Bar", "2"}, IntentOther},
		{"Send the text Stop to the pharmacy.", []string{"pharmacy", "Stop"}, IntentOther},
		{"Play Make It Rain.", []string{"Make It Rain"}, IntentOther},
		{"Dos entradas para el restaurante Alto Nivel.", []string{"Alto Nivel"}, IntentOther},
		{"Two tickets for Stop Making Sense. Actually no, don't book it.", []string{"Stop Making Sense"}, IntentStop},
		{"Don't book Don't Stop Believin'.", []string{"Don't Stop Believin'"}, IntentStop},
	} {
		lang := "en"
		if strings.HasPrefix(c.text, "Dos") {
			lang = "es"
		}
		if r := Read(c.text, DefaultPhrases[lang], Context{Carried: c.carried}); r.Intent != c.want {
			t.Errorf("Read(%q) carrying %q = %s (%q), want %s", c.text, c.carried, r.Intent, r.Phrase, c.want)
		}
	}
}

// TestEchoCost: dropEcho does work linear in the lengths of the transcript and of the
// model's words (steps counted, not timed): at most a few steps per word of each, for
// any input, repetitive or not.
func TestEchoCost(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		said := costText().Draw(t, "said")
		heard := costText().Draw(t, "heard")
		if rapid.Bool().Draw(t, "copy") {
			heard = said + " " + heard + " " + said
		}
		h := Normalize(heard)
		words := Words(h)
		steps := 0
		dropEcho(h, words, said, &steps)
		if bound := 3*(len(words)+len(Words(said))) + 3; steps > bound {
			t.Fatalf("dropEcho took %d steps for %d heard and %d said words (bound %d)", steps, len(words), len(Words(said)), bound)
		}
		steps = 0
		maskCarried(words, []string{said, heard}, &steps)
		if bound := 2*len(words) + len(Words(said)) + len(Words(heard)); steps > bound {
			t.Fatalf("maskCarried took %d steps (bound %d)", steps, bound)
		}
	})
}

// TestSegmenterCost: the word scanner (Words, wordBreaks and wordSpans share it) looks
// at each rune of the text once, for text of any script: the number of runes it is
// given is the number of steps, and the words it finds are never more than the runes.
func TestSegmenterCost(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := Normalize(costText().Draw(t, "s"))
		var sc wordScanner
		steps, starts := 0, 0
		for _, r := range s {
			steps++
			if start, _, _ := sc.next(r); start {
				starts++
			}
		}
		if runes := len([]rune(s)); steps != runes || starts > runes {
			t.Fatalf("scanner: %d steps, %d words for %d runes", steps, starts, runes)
		}
		if n := len(Words(s)); n != starts || len(wordSpans(s)) != n || len(wordBreaks(s, n)) != n+1 {
			t.Fatalf("Words %d, spans %d, scanner %d words in %q", n, len(wordSpans(s)), starts, s)
		}
		// Reading doubles at most linearly: the same text twice has twice the words.
		if n2 := len(Words(s + " " + s)); n2 != 2*starts {
			t.Fatalf("Words(s s) = %d words, want %d", n2, 2*starts)
		}
	})
}

// costText draws text of mixed scripts: English words, Chinese and Japanese letters,
// Thai with its marks, punctuation, and runs repeated many times.
func costText() *rapid.Generator[string] {
	piece := rapid.SampledFrom([]string{"stop", "hold on", "while I book", "no", "停下", "不要订了", "キャンセル", "ストップ",
		"หยุดก่อน", "ไม่ต้องจอง", ", ", ". ", "? ", " ", "!", "、", "。", "don't", "e\u0301", "नमस्ते"})
	return rapid.Custom(func(t *rapid.T) string {
		var b strings.Builder
		for _, p := range rapid.SliceOfN(piece, 0, 60).Draw(t, "pieces") {
			b.WriteString(strings.Repeat(p, rapid.IntRange(1, 4).Draw(t, "repeat")))
		}
		return b.String()
	})
}

// TestReadProperties: Read in any context answers the same twice, with an intent and
// a phrase Classify's rules allow; what the model said, the action's words and the
// arbiter's question never turn a stop by the words alone into anything else (context
// only reads replies), nor an utterance with no reply in it; and with an echo, the
// words read are never more than the words heard.
func TestReadProperties(t *testing.T) {
	said := rapid.OneOf(rapid.SampledFrom([]string{"", "Anything else?", "Shall I book it?", "Should I cancel it?",
		"Shall I book it, or anything else?", "Have a nice day!", "Please hold on while I book that for you."}), statement())
	rapid.Check(t, func(t *rapid.T) {
		s := statement().Draw(t, "s")
		lang := rapid.SampledFrom([]string{"en", "es", "fr", "de", "zh", "ja", "th"}).Draw(t, "lang")
		p := DefaultPhrases[lang]
		ctx := Context{Said: said.Draw(t, "said"), Action: Booking, Asked: rapid.Bool().Draw(t, "asked")}
		r := Read(s, p, ctx)
		if r2 := Read(s, p, ctx); r2 != r {
			t.Fatalf("Read(%q) not deterministic: %+v then %+v", s, r, r2)
		}
		checkReading(t, s, p, r.Intent, r.Phrase)
		if in, _ := Classify(s, p); in == IntentStop && r.Intent != IntentStop {
			t.Fatalf("Read(%q) in %+v = %s, but the words alone stop", s, ctx, r.Intent)
		}
		if in, _ := Classify(s, p); in != IntentUnclear && in != IntentGoAhead && in != IntentOther && r.Intent != in {
			t.Fatalf("Read(%q) in %+v = %s, Classify %s: only a reply reads by its context", s, ctx, r.Intent, in)
		}
		ctx.Echo = rapid.OneOf(rapid.Just(s), said).Draw(t, "echo")
		r = Read(s, p, ctx)
		if r.Echoed > r.Words || (r.Echo() && r.Intent != IntentUnknown) {
			t.Fatalf("Read(%q) with echo %q: %+v", s, ctx.Echo, r)
		}
		if ctx.Echo == s && len(Words(s)) >= echoRun && !r.Echo() {
			t.Fatalf("Read(%q) with itself as the echo: %+v, want all echo", s, r)
		}
	})
}
