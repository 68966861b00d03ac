package speech

// ackWords are the words of an acknowledgement: "Okay, thanks.", "Alright, thank you
// very much.", "Great.", "Vale, gracias.", "D'accord, merci.", "Gut, danke." A reply
// made only of them asks for nothing.
var ackWords = map[string]bool{
	// English
	"ok": true, "okay": true, "k": true, "kk": true, "alright": true, "all": true, "right": true,
	"thanks": true, "thank": true, "you": true, "very": true, "much": true, "so": true,
	"great": true, "good": true, "fine": true, "cool": true, "perfect": true, "nice": true,
	"got": true, "it": true, "understood": true, "i": true, "see": true, "oh": true,
	"ah": true, "hmm": true, "mm": true, "uh": true, "um": true, "well": true, "then": true,
	"that's": true, "thats": true, "cheers": true, "sounds": true,
	// Spanish, French, German
	"vale": true, "bueno": true, "bien": true, "gracias": true, "muchas": true, "perfecto": true, "entendido": true, "de": true, "acuerdo": true,
	"d'accord": true, "daccord": true, "merci": true, "beaucoup": true, "très": true, "parfait": true, "bon": true, "compris": true,
	"gut": true, "danke": true, "schön": true, "sehr": true, "alles": true, "klar": true, "verstanden": true, "prima": true, "super": true,
}

// ackPhrases are the acknowledgements of the scripts read letter by letter (script.go),
// whose words are single letters: a reply made only of them (and of ackWords) asks for
// nothing either: "好的，谢谢。", "はい、ありがとうございます。", "โอเค ขอบคุณครับ".
var ackPhrases = newPhraseIndex([]string{
	// Chinese
	"好", "好的", "好吧", "谢谢", "谢了", "多谢", "知道了", "明白了", "明白", "行", "嗯", "哦", "没问题",
	// Japanese
	"はい", "ええ", "うん", "ありがとう", "ありがとうございます", "どうも", "わかりました", "分かりました", "了解",
	"了解です", "承知しました", "そうですか", "なるほど",
	// Thai
	"โอเค", "ครับ", "ค่ะ", "ขอบคุณ", "ขอบคุณครับ", "ขอบคุณค่ะ", "เข้าใจแล้ว",
})

// IsAcknowledgement reports whether text (a final user transcript) only acknowledges
// what the model said ("Okay, thanks."): every word is an acknowledgement's (ackWords,
// or part of one of ackPhrases, for scripts read letter by letter), and there is at
// least one. The engine uses it after a stop: a re-issue of the stopped request is a
// new request only once the user asks for something, and "Okay, thanks." after "the
// booking was cancelled" asks for nothing (a fresh user's find: it freed the business
// key, and the model's re-issue committed the booking the user had stopped).
func IsAcknowledgement(text string) bool {
	words := Words(text)
	for i := 0; i < len(words); {
		if ackWords[words[i]] {
			i++
			continue
		}
		n := 0
		for _, p := range ackPhrases.byFirst[words[i]] {
			if hasPrefix(words[i:], p.words) {
				n = len(p.words) // byFirst is longest first
				break
			}
		}
		if n == 0 {
			return false
		}
		i += n
	}
	return len(words) > 0
}
