package server_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	protocodec "google.golang.org/grpc/encoding/proto"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/voicearbiter/arbiter/server"
)

// rawCodec sends a *rawRequest's bytes as they are (what a broken client, or an
// attacker, puts on the wire) and decodes answers as protobuf.
type rawCodec struct{}

type rawRequest []byte

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	if r, ok := v.(*rawRequest); ok {
		return mem.BufferSlice{mem.SliceBuffer(*r)}, nil
	}
	return encoding.GetCodecV2(protocodec.Name).Marshal(v)
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return encoding.GetCodecV2(protocodec.Name).Unmarshal(data, v)
}

func (rawCodec) Name() string { return protocodec.Name }

// field appends field num as length-delimited bytes v.
func field(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// deepValue is a google.protobuf.Value of lists nested depth deep.
func deepValue(depth int) []byte {
	var v []byte // an empty Value
	for i := 0; i < depth; i++ {
		list := field(nil, 1, v) // ListValue.values
		v = field(nil, 6, list)  // Value.list_value
	}
	return v
}

// TestUndecodableRequests: requests that do not decode, sent as raw bytes on the
// wire, are INVALID_ARGUMENT with reason MALFORMED_REQUEST and the top-level field
// at fault (grpc-go alone answers INTERNAL "failed to unmarshal"), for unary RPCs and
// Watch; other services' messages keep grpc-go's answer.
func TestUndecodableRequests(t *testing.T) {
	conn := start(t).conn
	ctx := context.Background()
	invoke := func(method string, req []byte) error {
		r := rawRequest(req)
		var resp struct{ healthpb.HealthCheckResponse } // any message: errors carry no body
		return conn.Invoke(ctx, method, &r, &resp.HealthCheckResponse, grpc.ForceCodecV2(rawCodec{}))
	}
	session := field(nil, 1, []byte("s1"))
	cases := []struct {
		name   string
		method string
		req    []byte
		field  string
	}{
		{"transcript text not UTF-8", "/arbiter.v1.ArbiterService/ReportTranscript",
			field(append([]byte(nil), session...), 3, []byte("stop \xff\xfe now")), "text"},
		{"session id not UTF-8", "/arbiter.v1.ArbiterService/ReportSpeech",
			field(nil, 1, []byte{0xc3, 0x28}), "session_id"},
		{"second withdrawn call id not UTF-8", "/arbiter.v1.ArbiterService/ReportToolCallCancellation",
			field(field(append([]byte(nil), session...), 2, []byte("c1")), 2, []byte{0xff}), "call_ids[1]"},
		{"args nested past the decoder's limit", "/arbiter.v1.ArbiterService/RegisterCall",
			field(field(append([]byte(nil), session...), 3, []byte("book_slot")), 4,
				field(nil, 1, field(field(nil, 1, []byte("slot")), 2, deepValue(6000)))), "args"},
		{"a length past the end", "/arbiter.v1.ArbiterService/GetSession", []byte{0x0a, 0x10, 's'}, "session_id"},
		{"a broken tag", "/arbiter.v1.ArbiterService/Poll", []byte{0xff}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := invoke(tc.method, tc.req)
			wantCode(t, err, codes.InvalidArgument, tc.field)
			wantDetails(t, err, server.ReasonMalformedRequest, tc.field, -1)
		})
	}

	t.Run("watch", func(t *testing.T) {
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		st, err := conn.NewStream(sctx, &grpc.StreamDesc{ServerStreams: true}, "/arbiter.v1.ArbiterService/Watch", grpc.ForceCodecV2(rawCodec{}))
		if err != nil {
			t.Fatal(err)
		}
		r := rawRequest(field(nil, 1, []byte{0xff, 0xff}))
		if err := st.SendMsg(&r); err != nil {
			t.Fatal(err)
		}
		_ = st.CloseSend()
		var resp healthpb.HealthCheckResponse
		err = st.RecvMsg(&resp)
		wantCode(t, err, codes.InvalidArgument, "session_id")
		wantDetails(t, err, server.ReasonMalformedRequest, "session_id", -1)
	})

	t.Run("health keeps grpc-go's answer", func(t *testing.T) {
		err := invoke("/grpc.health.v1.Health/Check", field(nil, 1, []byte{0xff}))
		if status.Code(err) != codes.Internal {
			t.Fatalf("health check with a broken service name: %v, want grpc-go's INTERNAL", err)
		}
	})
}
