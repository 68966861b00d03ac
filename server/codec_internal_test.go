package server

import (
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	"github.com/voicearbiter/arbiter/arbiter"
	arbiterv1 "github.com/voicearbiter/arbiter/proto/arbiter/v1"
)

// FuzzCodec: whatever bytes arrive, the codec never fails (nor panics) on an arbiter
// message, and every request protobuf refuses comes out marked, as an Invalid error.
//
//	go test ./server -run '^$' -fuzz FuzzCodec -fuzztime 60s
func FuzzCodec(f *testing.F) {
	for _, seed := range [][]byte{
		{0x0a, 0x02, 's', '1', 0x1a, 0x02, 0xff, 0xfe}, // text not UTF-8
		{0x0a, 0x10, 's'},  // a length past the end
		{0xff},             // a broken tag
		{0x12, 0x01, 0xc3}, // call_ids[0] not UTF-8
	} {
		f.Add(seed)
	}
	c := newCodec()
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range []proto.Message{new(arbiterv1.ReportTranscriptRequest), new(arbiterv1.RegisterCallRequest), new(arbiterv1.ReportToolCallCancellationRequest)} {
			if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, m); err != nil {
				t.Fatalf("%T: the codec failed: %v", m, err)
			}
			if proto.Unmarshal(b, m.ProtoReflect().New().Interface()) == nil {
				continue
			}
			if err := undecoded(m); arbiter.KindOf(err) != arbiter.Invalid {
				t.Fatalf("%T %x does not decode, but undecoded says %v", m, b, err)
			}
		}
	})
}
