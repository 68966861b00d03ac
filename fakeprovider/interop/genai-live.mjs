// Connects @google/genai's Live client to the fake provider and acts as a tiny agent
// for C_on_run2: answers the live re-issue, never the abandoned first call, sends the note.
import { GoogleGenAI, Modality, Behavior } from "@google/genai";
const port = process.argv[2];
const ai = new GoogleGenAI({ apiKey: "fake-key", httpOptions: { baseUrl: `http://127.0.0.1:${port}` } });
const t0 = Date.now();
const log = (what) => console.log(JSON.stringify({ t: Date.now() - t0, ...what }));
let session;
const closed = new Promise((resolve) => {
  ai.live.connect({
    model: "gemini-3.8-live",
    config: {
      responseModalities: [Modality.AUDIO], inputAudioTranscription: {}, outputAudioTranscription: {},
      tools: [{ functionDeclarations: [{ name: "book_slot", behavior: Behavior.BLOCKING,
        parameters: { type: "OBJECT", properties: { slot: { type: "STRING" } } } }] }],
    },
    callbacks: {
      onmessage: (m) => {
        const keys = Object.keys(m).concat(m.serverContent ? Object.keys(m.serverContent).map((k) => "serverContent." + k) : []);
        log({ msg: keys.join(",") , text: m.serverContent?.inputTranscription?.text ?? m.serverContent?.outputTranscription?.text, va: m.voiceActivity?.type ?? m.voiceActivity?.voiceActivityType });
        for (const fc of m.toolCall?.functionCalls ?? []) {
          log({ toolCall: fc.id, name: fc.name, args: fc.args });
          if (fc.id === "fc_7334104368860656461") {
            session.sendClientContent({ turns: [{ role: "user", parts: [{ text: "System note: the booking for tomorrow at 3pm was cancelled before it was committed. Nothing is scheduled." }] }], turnComplete: true });
            session.sendToolResponse({ functionResponses: [{ id: fc.id, name: fc.name, response: { status: "cancelled", executed: false, duplicate_of: "fc_1792165045038015411" } }] });
          }
        }
      },
      onclose: (e) => { log({ close: e.code, reason: e.reason }); resolve(); },
      onerror: (e) => log({ error: String(e.message ?? e) }),
    },
  }).then((s) => { session = s; log({ connected: true, setupComplete: s.setupComplete }); });
});
await closed;
