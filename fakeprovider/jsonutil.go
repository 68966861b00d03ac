package fakeprovider

import (
	"encoding/base64"
	"encoding/json"

	"github.com/voicearbiter/arbiter/internal/realtime"
)

// obj is a JSON object as the translators build them (realtime.Obj). What a client
// sends is read by package internal/realtime's gemini and openai, which the wire
// guard reads with too: each protocol fact is read in one place.
type obj = realtime.Obj

// silence20ms is 20 ms of silent 16-bit mono PCM at 24 kHz (both providers' output
// format), base64: the audio chunk model_audio_start sends.
var silence20ms = base64.StdEncoding.EncodeToString(make([]byte, 24000/50*2))

// argsJSON is a tool call's arguments as the JSON text OpenAI sends ("{}" for none).
func argsJSON(args map[string]any) string {
	if args == nil {
		return "{}"
	}
	b, err := json.Marshal(args)
	if err != nil {
		return "{}"
	}
	return string(b)
}
